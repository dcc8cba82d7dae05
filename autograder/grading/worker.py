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
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from autograder.grading.bundle import config_folders, unpacked
from autograder.grading.jobs import GradingJob, JobResult, ReferenceJob, child_pids, run_job
from autograder.status import Status
from autograder.nbgrader_api import import_from, quiet_nbgrader_internals, use_config_folders
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
_ROOT_NAME = re.compile(r"grading-worker-(?P<host>[A-Za-z0-9_.]+)-(?P<pid>\d+)-[^-]+")
_HOST = re.compile(r"[^A-Za-z0-9_.]")
_serving: str | None = None  # the run a Dask worker was set up for


def prepare_worker(root: Path, zygote: Callable[[], object] | None = None) -> None:
    """Make this process a grading worker whose files all live in ``root`` (made here):
    temporary files, its kernels' private folders (its zygote's sandbox binds that
    folder), the bundles it was given. ``zygote`` (which starts the kernels' zygote) runs
    before the first job."""
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
    if zygote is not None:
        warm_up(zygote)
    # What the worker holds by now (the grading code, nbgrader) lasts: the collector's full
    # passes need not walk it again (each took 0.2 s, about every sixth notebook).
    gc.freeze()


def new_root() -> Path:
    """A folder for a worker that keeps no parent process to remove it (a Dask worker):
    named with its host and process id, so that the next one to start on that host removes
    the folders of workers that died (a job's deadline, a crash) without cleaning up."""
    purge_dead_roots()
    host = _HOST.sub("_", socket.gethostname())
    return Path(tempfile.mkdtemp(prefix=f"grading-worker-{host}-{os.getpid()}-", dir=_SYSTEM_TEMPORARY))


def purge_dead_roots() -> None:
    """Remove the folders (``new_root``) of this host's workers that are no longer running."""
    host = _HOST.sub("_", socket.gethostname())
    for folder in _SYSTEM_TEMPORARY.glob(f"grading-worker-{host}-*-*"):
        found = _ROOT_NAME.fullmatch(folder.name)
        if found and found["host"] == host and folder.is_dir() and not folder.is_symlink() \
                and folder.stat().st_uid == os.getuid() and not _alive(int(found["pid"])):
            shutil.rmtree(folder, ignore_errors=True)


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


def serving(run: str | None) -> None:
    """Note the run this worker was set up for (None: none now)."""
    global _serving
    _serving = run


def serves() -> str | None:
    return _serving


def receive_bundle(digest: str, content: bytes) -> Path:
    """Unpack a bundle among this worker's (once: a bundle it has is not unpacked again)."""
    return unpacked(digest, content, _folder(BUNDLES))


def grade(job: GradingJob | ReferenceJob, bundle: bytes | None, runner: Callable = run_job,
          grace: float = AFTER_KERNEL_SECONDS, on_overrun: Callable[[JobResult], object] | None = None) -> JobResult:
    """Run ``job`` with ``runner`` under its hard deadline; ``bundle`` is its bundle's
    content, or None when the worker was given it already (``receive_bundle``). A crash
    fails this job only. The worker's temporary folders are emptied after it, however it
    ended."""
    overran = threading.Event()
    deadline = threading.Timer(job.time_limit + grace, _overrun,
                               args=(job, job.time_limit + grace, on_overrun, overran))
    deadline.daemon = True
    deadline.start()
    try:
        result = _run(job, bundle, runner)
    finally:
        deadline.cancel()
        _empty(_folder(TEMPORARY))
        _empty(_folder(KERNELS))
    if overran.is_set():  # stopped at its deadline, and the process ends: this late result is not sent
        threading.Event().wait()
    return dataclasses.replace(result, worker=worker_name())


def _run(job: GradingJob | ReferenceJob, bundle: bytes | None, runner: Callable) -> JobResult:
    """The job's result: the runner's; a grader error when the worker cannot even start it
    (its bundle missing, a full disk: nothing of the student's), graded by the next run; a
    failure when the grading code crashed on it."""
    try:
        template = _folder(BUNDLES) / job.bundle if bundle is None else receive_bundle(job.bundle, bundle)
        if not template.is_dir():
            raise RuntimeError(f"this worker was never given the bundle {job.bundle[:12]}")
        _import_only_from(template)
        use_config_folders(config_folders(template))  # the TA's Jupyter configuration, not this host's
    except Exception as failure:  # noqa: BLE001 (the worker's own failure: this job is graded again)
        return JobResult(job.student, job.assignment, Status.GRADER_ERROR,
                         f"the worker could not start the job: {type(failure).__name__}: {failure}"[:300], 0.0)
    try:
        return runner(job, template)
    except Exception as failure:  # noqa: BLE001 (a crash fails one job, not the worker)
        return JobResult(job.student, job.assignment, Status.FAILED,
                         f"grading crashed: {type(failure).__name__}: {failure}"[:300], 0.0)


def _import_only_from(template: Path) -> None:
    """The course's own modules (a configured plug-in) importable from this bundle, as in
    its folder, and none of another bundle's: a worker that graded an earlier version of
    the course forgets the modules it imported from there."""
    in_bundles, in_template = _inside(_folder(BUNDLES)), _inside(template)
    sys.path[:] = [entry for entry in sys.path if not in_bundles(entry)]
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and in_bundles(origin) and not in_template(origin):
            del sys.modules[name]
    import_from(template)


def _inside(folder: Path) -> Callable[[str], bool]:
    """Whether a path lies in ``folder`` (or is it), compared as normalised strings: a worker
    holds over a thousand modules, whose paths pathlib parsed twice a job (20 ms; 3 ms so)."""
    folder_name = os.path.normpath(folder)
    prefix = os.path.join(folder_name, "")
    return lambda path: (normalised := os.path.normpath(path)) == folder_name or normalised.startswith(prefix)


def stopped(job: GradingJob | ReferenceJob, limit: float) -> JobResult:
    """The result of a job stopped at its deadline of ``limit`` seconds."""
    return JobResult(job.student, job.assignment, Status.STOPPED, f"grading took longer than {limit:g} s in all; "
                     "stopped", limit, worker=worker_name(), worker_ends=True)


def _overrun(job: GradingJob | ReferenceJob, limit: float, on_overrun: Callable[[JobResult], object] | None,
             overran: threading.Event) -> None:
    overran.set()
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
    if _root is None:
        raise RuntimeError("this process was never prepared as a grading worker")
    return _root / name


def _empty(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def warm_up(start: Callable[[], object]) -> None:
    """Get ready before the first job (the zygote: ``fork_server`` starts it from a thread
    that lasts, as bubblewrap's ``--die-with-parent`` needs); a warm-up that fails is the
    first job's to meet."""
    try:
        start()
    except Exception:  # noqa: BLE001 (the job that needs it fails with the reason)
        pass
