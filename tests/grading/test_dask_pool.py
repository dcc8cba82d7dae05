"""The Dask scheduler's rules that need no cluster: where jobs, which carry the hidden
tests, may travel, and which addresses it takes."""

from __future__ import annotations

import pytest

from autograder.grading.dask_pool import address_problem
from autograder.grading.dask_scheduler import DaskScheduler


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tcp://localhost:8786", "tcp://[::1]:8786",
                                     "tls://scheduler.example.org:8786", "dask-local:2"])
def test_jobs_may_go_to_loopback_plain_tcp_or_anywhere_over_tls(address):
    assert address_problem(address, insecure=False) is None


@pytest.mark.parametrize("address", ["tcp://10.1.2.3:8786", "tcp://192.0.2.7:8786"])
def test_plain_tcp_off_this_machine_is_refused_unless_the_ta_says_insecure(address):
    assert "sends the hidden tests unencrypted" in address_problem(address, insecure=False)
    assert address_problem(address, insecure=True) is None


@pytest.mark.parametrize("address", ["dask-local:0", "dask-local:two", "dask-local:"])
def test_a_local_cluster_needs_a_number_of_workers(address):
    assert "takes a number of workers" in address_problem(address, insecure=False)


@pytest.mark.parametrize(("address", "accepted"), [("local", False), ("dask-local:2", True), ("tcp://h:1", True),
                                                  ("tls://h:1", True), ("ssh://h", False)])
def test_the_plugin_takes_dask_addresses_only(address, accepted):
    assert DaskScheduler.accepts(address) is accepted
