"""Where a run's jobs are graded, chosen by ``GradingSettings.scheduler`` (``--scheduler``)
among the scheduler plug-ins installed, as jupyter_client chooses kernel provisioners:
each is an entry point of the ``autograder.schedulers`` group naming a class with
``accepts(address)`` and ``open(settings, workers, log_folder, sandbox)``, which returns
a pool: a context manager whose ``run(jobs, bundles)`` yields each job with its result.
This package installs ``local`` (``pool``: worker processes here, the default) and
``dask`` (``dask_pool``: a Dask cluster, or ``dask-local:N``; needs the ``cluster``
extra).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

from autograder.grading.settings import GradingSettings

GROUP = "autograder.schedulers"


def open_scheduler(settings: GradingSettings, workers: int, log_folder: Path, sandbox: bool):
    """The pool of the first installed scheduler that accepts the settings' address."""
    found = []
    for entry in sorted(entry_points(group=GROUP), key=lambda entry: entry.name):
        try:
            plugin = entry.load()
        except ImportError as missing:
            found.append(f"{entry.name} (cannot be loaded: {missing}; pip install '.[cluster]' for dask)")
            continue
        if plugin.accepts(settings.scheduler):
            return plugin.open(settings, workers, log_folder, sandbox)
        found.append(entry.name)
    raise SystemExit(f"no scheduler takes {settings.scheduler!r} (GradingSettings.scheduler, --scheduler); "
                     f"installed: {', '.join(found) or 'none'}")
