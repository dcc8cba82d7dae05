"""Run grading jobs on local worker processes (``GradingSettings.worker_count``), each job
under a hard deadline.

Workers live for the whole run, and each is a fork of multiprocessing's fork server (a
process that runs no thread, so safe to fork), which imported the grading code once: so
nbgrader is imported once per run, not once per worker or notebook.
Their output (and their kernels') goes to a log file per worker instead of the TA's
terminal. A job that outlives its deadline (the notebook's own time limit, plus
``AFTER_KERNEL_SECONDS`` for nbgrader's steps after the kernel and the feedback page),
or whose worker dies, fails alone: the worker is killed with everything it started and a
fresh one takes its place. Each worker keeps its temporary files in a folder of its own,
``TEMPORARY`` for everything but its kernels' private folders, which are in ``KERNELS``
(its zygote's sandbox binds that folder: ``autograder.sandbox.fork_server``); both are
emptied after every job however the job ended, so not even a killed worker leaves
anything behind in ``/tmp``. The pool only schedules: it
calls ``run_job`` and yields what it returns, so another scheduler can take its place
without touching the grading.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path

from autograder.grading.jobs import GradingJob, JobResult, child_pids, run_job
from autograder.grading.status import Status
from autograder.nbgrader_api import quiet_nbgrader_internals
from autograder.sandbox import fork_server

AFTER_KERNEL_SECONDS = 120.0
TEMPORARY, KERNELS = "tmp", "kernels"


class Pool:
    """``workers`` worker processes, started at once (each runs ``warm_up``, if given, as
    it starts: the zygote of its kernels), that run one batch of jobs
    after another (``run``) until the pool is closed. ``runner`` turns a job into its
    result in a worker (a module-level function, so that workers can import it); a job
    may take its time limit (``GradingJob.time_limit``) plus ``grace`` seconds."""

    def __init__(self, workers: int, log_folder: Path, runner: Callable = run_job, grace: float = AFTER_KERNEL_SECONDS,
                 warm_up: Callable[[], object] | None = None):
        log_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.log_folder = log_folder
        self._new_worker = lambda: _Worker(log_folder, runner, grace, warm_up)
        self._slots = [self._new_worker() for _ in range(max(1, workers))]

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def run(self, jobs: list[GradingJob]) -> Iterator[tuple[GradingJob, JobResult]]:
        """Yield each job with its result as soon as it is done, in completion order."""
        queue, slots = list(reversed(jobs)), self._slots
        while queue or any(slot.job for slot in slots):
            for slot in slots:
                if slot.job is None and queue:
                    slot.start(queue.pop())
            busy = [slot for slot in slots if slot.job]
            ready = wait([slot.connection for slot in busy] + [slot.process.sentinel for slot in busy],
                         timeout=max(0.0, min(slot.deadline for slot in busy) - time.monotonic()))
            for index, slot in enumerate(slots):
                job = slot.job
                result = slot.poll(ready) if job else None
                if result is None:
                    continue
                if slot.broken:
                    slot.stop()
                    slots[index] = self._new_worker()
                yield job, result

    def close(self) -> None:
        for slot in self._slots:
            slot.stop()


class _Worker:
    """One worker process and the job it is running, if any."""

    def __init__(self, log_folder: Path, runner: Callable, grace: float, warm_up: Callable[[], object] | None):
        context = _fork_server()
        self.connection, theirs = context.Pipe()
        self.temporary = Path(tempfile.mkdtemp(prefix="grading-worker-"))
        for folder in (TEMPORARY, KERNELS):
            (self.temporary / folder).mkdir()
        self.process = context.Process(target=_serve, args=(theirs, str(log_folder), str(self.temporary), runner,
                                                            warm_up), daemon=True)
        self.process.start()
        theirs.close()
        self.grace = grace
        self.job: GradingJob | None = None
        self.deadline = float("inf")
        self.broken = False

    def start(self, job: GradingJob) -> None:
        self.job = job
        self.deadline = time.monotonic() + job.time_limit + self.grace
        try:
            self.connection.send(job)
        except OSError:
            pass  # the worker is gone: ``poll`` sees its sentinel and says so

    def poll(self, ready: list) -> JobResult | None:
        """The running job's result if it has one now: its own, or the verdict on a worker
        that died or ran past the deadline (which leaves this worker ``broken``)."""
        job = self.job
        if self.connection in ready:
            try:
                result = self.connection.recv()
                self.job, self.deadline = None, float("inf")
                self._empty_temporary()
                return result
            except (EOFError, OSError):
                pass  # it died while answering
        if self.connection in ready or self.process.sentinel in ready:
            status, why = Status.FAILED, "the grading worker died (out of memory?)"
        elif time.monotonic() >= self.deadline:
            limit = job.time_limit + self.grace
            status, why = Status.STOPPED, f"grading took longer than {limit:g} s in all; stopped"
        else:
            return None
        self.broken = True
        return JobResult(job.student, job.assignment, status, why, 0.0)

    def stop(self) -> None:
        """Stop the worker: an idle one ends when its pipe closes; a busy or broken one is
        killed with everything it started (kernels included)."""
        self.connection.close()
        self.process.join(timeout=0 if self.job or self.broken else 10)
        if self.process.is_alive():
            for pid in [*_descendants(self.process.pid), self.process.pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.process.join()
        shutil.rmtree(self.temporary, ignore_errors=True)

    def _empty_temporary(self) -> None:
        """Remove what the last job left in the worker's temporary folders (it is idle now)."""
        for entry in [*(self.temporary / TEMPORARY).iterdir(), *(self.temporary / KERNELS).iterdir()]:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def start_fork_server() -> None:
    """Start the workers' parent now, if it is not running yet: it imports the grading code
    (two seconds) while this process does something else."""
    _fork_server()
    multiprocessing.forkserver.ensure_running()


def _fork_server() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([run_job.__module__])
    return context


def _warm_up(warm_up: Callable[[], object]) -> None:
    """Get ready before the first job (in this thread: bubblewrap's ``--die-with-parent``
    ends a sandbox when the thread that started it ends); a warm-up that fails is the
    first job's to meet."""
    try:
        warm_up()
    except Exception:  # noqa: BLE001 (the job that needs it fails with the reason)
        pass


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        children = child_pids(frontier.pop())
        found += children
        frontier += children
    return found


def _serve(connection: Connection, log_folder: str, temporary: str, runner: Callable,
           warm_up: Callable[[], object] | None) -> None:
    tempfile.tempdir = str(Path(temporary, TEMPORARY))
    fork_server.use_kernels_folder(Path(temporary, KERNELS))
    # Workers already use every core between them; torch's own threads in each kernel
    # would only fight over the same cores.
    os.environ["OMP_NUM_THREADS"] = "1"
    # The TA's alone (a log can hold what a student's code printed), and no kernel holds it:
    # a zygote's and its kernels' errors reach it through a pipe (``fork_server``).
    log = os.open(Path(log_folder) / f"worker-{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    quiet_nbgrader_internals()
    if warm_up is not None:
        _warm_up(warm_up)
    # What the worker holds by now (the grading code, nbgrader) lasts: the collector's full
    # passes need not walk it again (each took 0.2 s, about every sixth notebook).
    gc.freeze()
    while True:
        try:
            job = connection.recv()
        except EOFError:
            return
        try:
            result = runner(job)
        except Exception as failure:  # noqa: BLE001 (a crash fails one job, not the worker)
            result = JobResult(job.student, job.assignment, Status.FAILED,
                               f"grading crashed: {type(failure).__name__}: {failure}"[:300], 0.0)
        connection.send(result)
