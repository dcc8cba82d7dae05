"""The ``local`` scheduler: grading jobs on worker processes of this machine
(``GradingSettings.worker_count``).

Workers live for the whole run, and each is a fork of multiprocessing's fork server (a
process that runs no thread, so safe to fork), which imported the grading code once: so
nbgrader is imported once per run, not once per worker or notebook. Each is a grading
worker as ``worker`` defines it (its own folder for everything it writes, one job at a
time, each job under a deadline it enforces itself); a job's bundle is sent to a worker
with the first of its jobs that worker gets. Their output (and their kernels') goes to a
log file per worker instead of the TA's terminal. A job whose worker dies, or outlives
the deadline by ``SECOND_LINE_SECONDS`` (the worker's own stop failed), fails alone: the
worker is killed with everything it started, its folder removed, and a fresh one takes
its place. The pool only schedules: it yields each job with what ``worker.grade``
returned, so another scheduler (``dask_pool``) can take its place without touching the
grading.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path

from autograder.grading import worker
from autograder.grading.jobs import GradingJob, JobResult, run_job
from autograder.status import Status
from autograder.grading.worker import AFTER_KERNEL_SECONDS, descendants

# How long after a job's deadline the pool kills a worker that did not stop itself.
SECOND_LINE_SECONDS = 10.0


class LocalScheduler:
    """The plug-in (``autograder.schedulers`` entry point ``local``)."""

    @staticmethod
    def accepts(address: str) -> bool:
        return address == "local"

    @staticmethod
    def open(settings, workers: int, log_folder: Path, sandbox: bool) -> Pool:
        from autograder.sandbox import fork_server  # the zygote: imported by the workers, not to plan

        return Pool(workers, log_folder, warm_up=fork_server.server if sandbox else None)


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

    def describe(self) -> dict[str, str]:
        """For the report: where the jobs ran (the kernels' bounds are this machine's)."""
        return {"workers": f"local: {len(self._slots)} worker processes here"}

    def run(self, jobs: list[GradingJob], bundles: Callable[[str], bytes]) -> Iterator[tuple[GradingJob, JobResult]]:
        """Yield each job with its result as soon as it is done, in completion order;
        ``bundles`` gives a bundle's content by its digest."""
        queue, slots = list(reversed(jobs)), self._slots
        while queue or any(slot.job for slot in slots):
            for slot in slots:
                if slot.job is None and queue:
                    slot.start(queue.pop(), bundles)
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
        self.process = context.Process(target=_serve, args=(theirs, str(log_folder), str(self.temporary), runner,
                                                            grace, warm_up), daemon=True)
        self.process.start()
        theirs.close()
        self.grace = grace
        self.job: GradingJob | None = None
        self.deadline = float("inf")
        self.broken = False
        self.bundles: set[str] = set()  # the digests of the bundles it was sent

    def start(self, job: GradingJob, bundles: Callable[[str], bytes]) -> None:
        self.job = job
        self.deadline = time.monotonic() + job.time_limit + self.grace + SECOND_LINE_SECONDS
        content = None if job.bundle in self.bundles else bundles(job.bundle)
        self.bundles.add(job.bundle)
        try:
            self.connection.send((job, content))
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
                self.broken = result.worker_ends  # it stopped itself at the deadline, and exits
                return result
            except (EOFError, OSError):
                pass  # it died while answering
        if self.connection in ready or self.process.sentinel in ready:
            self.broken = True
            return JobResult(job.student, job.assignment, Status.GRADER_ERROR,
                             "the grading worker died under it (out of memory?); the next run grades it", 0.0)
        if time.monotonic() >= self.deadline:
            self.broken = True
            return worker.stopped(job, job.time_limit + self.grace)
        return None

    def stop(self) -> None:
        """Stop the worker: an idle one ends when its pipe closes; a busy or broken one is
        killed with everything it started (kernels included)."""
        self.connection.close()
        self.process.join(timeout=0 if self.job or self.broken else 10)
        if self.process.is_alive():
            for pid in [*descendants(self.process.pid), self.process.pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.process.join()
        shutil.rmtree(self.temporary, ignore_errors=True)


def start_fork_server() -> None:
    """Start the workers' parent now, if it is not running yet: it imports the grading code
    (two seconds) while this process does something else."""
    _fork_server()
    multiprocessing.forkserver.ensure_running()


def _fork_server() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([run_job.__module__])
    return context


def _serve(connection: Connection, log_folder: str, temporary: str, runner: Callable, grace: float,
           warm_up: Callable[[], object] | None) -> None:
    # The TA's alone (a log can hold what a student's code printed), and no kernel holds it:
    # a zygote's and its kernels' errors reach it through a pipe (``fork_server``).
    log = os.open(Path(log_folder) / f"worker-{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    worker.prepare_worker(Path(temporary), warm_up)
    bundles: dict[str, bytes] = {}
    sending = threading.Lock()  # the deadline's thread sends too: one message at a time

    def send(result: JobResult) -> None:
        with sending:
            connection.send(result)

    while True:
        try:
            job, content = connection.recv()
        except EOFError:
            return
        if content is not None:
            bundles[job.bundle] = content
        send(worker.grade(job, bundles[job.bundle], runner, grace, on_overrun=send))
