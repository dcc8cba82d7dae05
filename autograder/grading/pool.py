"""Run grading jobs on a pool of local worker processes, one per core by default.

Workers live for the whole run, so nbgrader is imported once per worker, not once per
notebook. Their output (and their kernels') goes to a log file per worker instead of the
TA's terminal. The pool only schedules: it calls ``run_job`` and yields what it returns,
so another scheduler can take its place without touching the grading.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from autograder.grading.nbgrader_run import quiet_nbgrader_internals
from autograder.grading.jobs import GradingJob, JobResult, run_job
from autograder.grading.status import Status


def _start_worker(log_folder: str) -> None:
    # Workers already use every core between them; torch's own threads in each kernel
    # would only fight over the same cores.
    os.environ["OMP_NUM_THREADS"] = "1"
    log = os.open(Path(log_folder) / f"worker-{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    quiet_nbgrader_internals()
    import nbgrader.converters  # noqa: F401  (pay the import once, before the first job)


def run_jobs(jobs: list[GradingJob], workers: int, log_folder: Path) -> Iterator[JobResult]:
    """Yield each job's result as soon as it is done, in completion order."""
    if not jobs:
        return
    log_folder.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(str(log_folder),)) as pool:
        pending = {pool.submit(run_job, job): job for job in jobs}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                try:
                    yield future.result()
                except Exception as failure:  # noqa: BLE001 (a crashed worker fails one job, not the run)
                    yield JobResult(job.student, job.assignment, Status.FAILED,
                                    f"worker crashed: {type(failure).__name__}: {failure}", 0.0)
