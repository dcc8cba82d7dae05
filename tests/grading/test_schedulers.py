"""The scheduler plug-ins: found through their entry points, chosen by the address."""

from __future__ import annotations

import pytest

from autograder.grading.schedulers import open_scheduler
from autograder.settings import GradingSettings


def test_an_address_no_scheduler_takes_names_the_installed_ones(tmp_path):
    with pytest.raises(SystemExit, match=r"no scheduler takes 'ssh://host'.*installed: local, dask"):
        open_scheduler(GradingSettings(scheduler="ssh://host"), 1, tmp_path, sandbox=False)


def test_plain_tcp_off_this_machine_stops_the_run_before_any_connection(tmp_path):
    with pytest.raises(SystemExit, match=r"cannot grade on tcp://10.1.2.3:8786: plain tcp:// sends the hidden tests"):
        open_scheduler(GradingSettings(scheduler="tcp://10.1.2.3:8786"), 1, tmp_path, sandbox=False)
