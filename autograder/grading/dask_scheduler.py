"""The ``dask`` scheduler plug-in (``autograder.schedulers`` entry point): which addresses
it takes, and the pool it opens (``dask_pool``, imported only then: Dask's import is a
second that a run on the local pool need not pay)."""

from __future__ import annotations

from pathlib import Path

from autograder.settings import LOCAL_CLUSTER


class DaskScheduler:
    opens_early = True  # its workers start, import the grader and check themselves: seconds

    @staticmethod
    def accepts(address: str) -> bool:
        return address.startswith((LOCAL_CLUSTER, "tcp://", "tls://"))

    @staticmethod
    def open(settings, workers: int, log_folder: Path, sandbox: bool):
        from autograder.grading.dask_pool import DaskPool

        return DaskPool(settings, log_folder, sandbox)
