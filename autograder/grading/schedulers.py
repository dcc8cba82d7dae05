"""Where a run's jobs are graded, chosen by ``GradingSettings.scheduler`` (``--scheduler``)
among the scheduler plug-ins installed, as jupyter_client chooses kernel provisioners:
each is an entry point of the ``autograder.schedulers`` group naming a class with
``accepts(address)`` and ``open(settings, workers, log_folder, sandbox)``, which returns
a pool: a context manager whose ``run(jobs, bundles)`` yields each job with its result,
and whose ``describe()`` says where they ran, for the report. A plug-in whose pool takes
seconds to open (a cluster's workers start and check themselves) says ``opens_early``:
the run opens it while it plans (``Opening``), with as many workers as it has.
This package installs ``local`` (``pool``: worker processes here, the default) and
``dask`` (``dask_pool``: a Dask cluster, or ``dask-local:N``; needs the ``cluster``
extra); they are asked first (and found even before the package's entry points are
installed), then any other plug-in, by name.
"""

from __future__ import annotations

import threading
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from autograder.settings import GradingSettings

GROUP = "autograder.schedulers"
BUILT_IN = {"local": "autograder.grading.pool:LocalScheduler",
            "dask": "autograder.grading.dask_scheduler:DaskScheduler"}


def open_scheduler(settings: GradingSettings, workers: int, log_folder: Path, sandbox: bool):
    """The pool of the first installed scheduler that accepts the settings' address."""
    return chosen(settings).open(settings, workers, log_folder, sandbox)


class Opening:
    """A pool being opened in a thread of its own while the run plans; ``pool()`` waits
    for it (and raises what opening it raised), ``discard()`` closes it unused."""

    def __init__(self, settings: GradingSettings, workers: int, log_folder: Path, sandbox: bool):
        self._pool, self._failure = None, None
        self._thread = threading.Thread(target=self._open, args=(settings, workers, log_folder, sandbox), daemon=True)
        self._thread.start()

    def _open(self, *arguments) -> None:
        try:
            self._pool = open_scheduler(*arguments)
        except BaseException as failure:  # noqa: BLE001 (raised again in the run's thread, by pool())
            self._failure = failure

    def pool(self):
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self._pool

    def discard(self) -> None:
        self._thread.join()
        if self._pool is not None:
            self._pool.close()


def open_early(settings: GradingSettings, log_folder: Path, sandbox: bool) -> Opening | None:
    """The settings' pool, opening now, if its plug-in ``opens_early``; else None."""
    if not getattr(chosen(settings), "opens_early", False):
        return None
    return Opening(settings, settings.worker_count(), log_folder, sandbox)


def chosen(settings: GradingSettings):
    """The first installed scheduler plug-in that accepts the settings' address."""
    found = []
    for entry in plugins():
        try:
            plugin = entry.load()
        except ImportError as missing:
            found.append(f"{entry.name} (cannot be loaded: {missing}; pip install '.[cluster]' for dask)")
            continue
        if plugin.accepts(settings.scheduler):
            return plugin
        found.append(entry.name)
    raise SystemExit(f"no scheduler takes {settings.scheduler!r} (GradingSettings.scheduler, --scheduler); "
                     f"installed: {', '.join(found) or 'none'}")


def plugins() -> list[EntryPoint]:
    """The built-in schedulers first, then the other installed ones by name."""
    installed = {entry.name: entry for entry in entry_points(group=GROUP)}
    built_in = [installed.pop(name, EntryPoint(name, target, GROUP)) for name, target in BUILT_IN.items()]
    return built_in + sorted(installed.values(), key=lambda entry: entry.name)
