"""What a grading worker process is, whichever scheduler runs it: one job at a time, its
own temporary folders, its kernels' zygote started before the first job, and a hard
deadline on every job that it enforces itself.

``prepare_worker`` runs once as the process starts (the local pool's workers call it, a
Dask worker's plug-in calls it in ``setup``); ``grade`` runs one job and cleans up after
it. A job that outlives its deadline (its time limit plus ``grace``) has its kernels
killed, its result (stopped) handed to ``on_overrun`` where the scheduler can take one,
and the worker process ends: nothing else of it is to be trusted. The scheduler's own
deadline is a second line behind this one.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from autograder.grading.bundle import unpacked
from autograder.grading.jobs import GradingJob, JobResult, ReferenceJob, child_pids, run_job
from autograder.grading.status import Status
from autograder.nbgrader_api import import_from, quiet_nbgrader_internals
from autograder.sandbox import fork_server

# nbgrader's steps after the kernel and the feedback page, beyond a job's own time limit.
AFTER_KERNEL_SECONDS = 120.0
TEMPORARY, KERNELS, BUNDLES = "tmp", "kernels", "bundles"
# How a worker that stopped itself at a job's deadline exits.
OVERRUN_EXIT = 70
_root: Path | None = None
_name: str | None = None
# The system's temporary folder, before ``prepare_worker`` points tempfile at the worker's own.
_SYSTEM_TEMPORARY = Path(tempfile.gettempdir())
_ROOT_NAME = re.compile(r"grading-worker-(\d+)-[^-]+")


def prepare_worker(root: Path, warm_up: Callable[[], object] | None = None) -> None:
    """Make this process a grading worker whose files all live in ``root`` (made here):
    temporary files, its kernels' private folders (its zygote's sandbox binds that
    folder), the bundles it was given. ``warm_up`` (the zygote) runs before the first job."""
    global _root
    _root = root
    for folder in (TEMPORARY, KERNELS, BUNDLES):
        (root / folder).mkdir(mode=0o700, parents=True, exist_ok=True)
    tempfile.tempdir = str(root / TEMPORARY)
    fork_server.use_kernels_folder(root / KERNELS)
    # Workers already use every core between them; torch's own threads in each kernel
    # would only fight over the same cores.
    os.environ["OMP_NUM_THREADS"] = "1"
    quiet_nbgrader_internals()
    if warm_up is not None:
        _warm_up(warm_up)
    # What the worker holds by now (the grading code, nbgrader) lasts: the collector's full
    # passes need not walk it again (each took 0.2 s, about every sixth notebook).
    gc.freeze()


def new_root() -> Path:
    """A folder for a worker that keeps no parent process to remove it (a Dask worker):
    named with its process id, so that the next one to start removes the folders of
    workers that died (a job's deadline, a crash) without cleaning up."""
    parent = _SYSTEM_TEMPORARY
    for folder in parent.glob("grading-worker-*-*"):
        found = _ROOT_NAME.fullmatch(folder.name)
        if found and folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid() \
                and not _alive(int(found[1])):
            shutil.rmtree(folder, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"grading-worker-{os.getpid()}-", dir=parent))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_name() -> str:
    """This worker, as the report names it: the scheduler's name for it (``named``, e.g. a
    Dask worker's address), or this host and process."""
    return _name or f"{socket.gethostname()}:{os.getpid()}"


def named(name: str) -> None:
    global _name
    _name = name


def receive_bundle(digest: str, content: bytes) -> Path:
    """Unpack a bundle among this worker's (once: a bundle it has is not unpacked again)."""
    return unpacked(digest, content, _folder(BUNDLES))


def grade(job: GradingJob | ReferenceJob, bundle: bytes | None, runner: Callable = run_job,
          grace: float = AFTER_KERNEL_SECONDS, on_overrun: Callable[[JobResult], object] | None = None) -> JobResult:
    """Run ``job`` with ``runner`` under its hard deadline; ``bundle`` is its bundle's
    content, or None when the worker was given it already (``receive_bundle``). A crash
    fails this job only. The worker's temporary folders are emptied after it, however it
    ended."""
    deadline = threading.Timer(job.time_limit + grace, _overrun, args=(job, job.time_limit + grace, on_overrun))
    deadline.daemon = True
    deadline.start()
    try:
        template = _folder(BUNDLES) / job.bundle if bundle is None else receive_bundle(job.bundle, bundle)
        if not template.is_dir():
            raise RuntimeError(f"this worker was never given the bundle {job.bundle[:12]}")
        import_from(template)  # the course's own modules (a configured plugin) are importable, as in its folder
        result = runner(job, template)
    except Exception as failure:  # noqa: BLE001 (a crash fails one job, not the worker)
        result = JobResult(job.student, job.assignment, Status.FAILED,
                           f"grading crashed: {type(failure).__name__}: {failure}"[:300], 0.0)
    finally:
        deadline.cancel()
        _empty(_folder(TEMPORARY))
        _empty(_folder(KERNELS))
    return dataclasses.replace(result, worker=worker_name())


def stopped(job: GradingJob | ReferenceJob, limit: float) -> JobResult:
    """The result of a job stopped at its deadline of ``limit`` seconds."""
    return JobResult(job.student, job.assignment, Status.STOPPED, f"grading took longer than {limit:g} s in all; "
                     "stopped", limit, worker=worker_name(), worker_ends=True)


def _overrun(job: GradingJob | ReferenceJob, limit: float, on_overrun: Callable[[JobResult], object] | None) -> None:
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if on_overrun is not None:
        on_overrun(stopped(job, limit))
    os._exit(OVERRUN_EXIT)


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        children = child_pids(frontier.pop())
        found += children
        frontier += children
    return found


def _folder(name: str) -> Path:
    if _root is None:  # a process that was never prepared: a folder of its own, as a worker has
        prepare_worker(new_root())
    return _root / name


def _empty(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _warm_up(warm_up: Callable[[], object]) -> None:
    """Get ready before the first job (in this thread: bubblewrap's ``--die-with-parent``
    ends a sandbox when the thread that started it ends); a warm-up that fails is the
    first job's to meet."""
    try:
        warm_up()
    except Exception:  # noqa: BLE001 (the job that needs it fails with the reason)
        pass
