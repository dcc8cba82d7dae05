"""Where a run's jobs are graded, chosen by ``GradingSettings.scheduler`` (``--scheduler``)
among the scheduler plug-ins installed, as jupyter_client chooses kernel provisioners:
each is an entry point of the ``autograder.schedulers`` group naming a class with
``accepts(address)`` and ``open(settings, workers, log_folder, sandbox)``, which returns
a pool: a context manager whose ``run(jobs, bundles)`` yields each job with its result.
This package installs ``local`` (``pool``: worker processes here, the default) and
``dask`` (``dask_pool``: a Dask cluster, or ``dask-local:N``; needs the ``cluster``
extra); they are asked first (and found even before the package's entry points are
installed), then any other plug-in, by name.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from autograder.grading.settings import GradingSettings

GROUP = "autograder.schedulers"
BUILT_IN = {"local": "autograder.grading.pool:LocalScheduler",
            "dask": "autograder.grading.dask_scheduler:DaskScheduler"}


def open_scheduler(settings: GradingSettings, workers: int, log_folder: Path, sandbox: bool):
    """The pool of the first installed scheduler that accepts the settings' address."""
    found = []
    for entry in plugins():
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


def plugins() -> list[EntryPoint]:
    """The built-in schedulers first, then the other installed ones by name."""
    installed = {entry.name: entry for entry in entry_points(group=GROUP)}
    built_in = [installed.pop(name, EntryPoint(name, target, GROUP)) for name, target in BUILT_IN.items()]
    return built_in + sorted(installed.values(), key=lambda entry: entry.name)
