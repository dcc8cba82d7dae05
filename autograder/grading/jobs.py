"""One grading job: a submission autograded by nbgrader in a scratch course of its own.

A job is a folder (the course's ``nbgrader_config.py``, its ``source/``, a copy of the
gradebook, the one submission) and a function of that folder alone, ``run_job``. Nothing
in it knows how jobs are scheduled: a process pool runs them here, and a cluster scheduler
could run the same folders elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute

from autograder.grading.guarded_execute import GuardedExecute
from autograder.grading.nbgrader_run import autograde
from autograder.grading.status import Status
from autograder.sandbox.limits import Limits


@dataclass(frozen=True)
class GradingJob:
    student: str
    assignment: str
    workdir: Path
    notebook_timeout: float
    cell_timeout: int | None = None
    sandboxed: bool = True
    limits: Limits = Limits()


@dataclass(frozen=True)
class JobResult:
    student: str
    assignment: str
    status: Status
    detail: str
    seconds: float
    # What the guard put back before a test ran, one line per graded cell.
    restored: tuple[str, ...] = ()


def prepare_job(course: Path, gradebook_template: Path, student: str, assignment: str,
                notebook: Path, extra_files: list[Path], workdir: Path,
                notebook_timeout: float, cell_timeout: int | None, sandboxed: bool,
                limits: Limits) -> GradingJob:
    """Lay out the scratch course for one submission; ``notebook`` is graded under its
    assignment's name whatever the student called it."""
    if workdir.exists():
        shutil.rmtree(workdir)
    submitted = workdir / "submitted" / student / assignment
    submitted.mkdir(parents=True)
    shutil.copy(course / "nbgrader_config.py", workdir)
    shutil.copytree(course / "source" / assignment, workdir / "source" / assignment)
    shutil.copy(gradebook_template, workdir / "gradebook.db")
    shutil.copy(notebook, submitted / f"{assignment}.ipynb")
    for path in extra_files:
        shutil.copy(path, submitted / path.name)
    return GradingJob(student, assignment, workdir, notebook_timeout, cell_timeout, sandboxed, limits)


def autograded_folder(job: GradingJob) -> Path:
    return job.workdir / "autograded"


def guard_log(job: GradingJob) -> Path:
    return job.workdir / "guard.jsonl"


def _overrides(job: GradingJob) -> dict:
    """nbgrader's autograde, with its Execute step swapped for the guarded, sandboxed one."""
    steps = [GuardedExecute if step is Execute else step
             for step in Autograde.class_traits()["autograde_preprocessors"].default()]
    limits = job.limits
    overrides = {
        "Autograde": {"autograde_preprocessors": steps},
        "GuardedExecute": {"sandboxed": job.sandboxed, "guard_log": str(guard_log(job)),
                           "memory_limit": limits.memory_bytes, "cpu_limit": limits.cpu_seconds,
                           "process_limit": limits.processes, "file_size_limit": limits.file_bytes},
    }
    if job.cell_timeout:
        overrides["Execute"] = {"timeout": job.cell_timeout}
    return overrides


def run_job(job: GradingJob) -> JobResult:
    """Autograde the job's submission, stopping its kernel at the wall-clock limit."""
    started = time.monotonic()
    watchdog = _KernelWatchdog(job.notebook_timeout)
    watchdog.start()
    try:
        autograde(job.workdir, job.assignment, job.student, _overrides(job))
    except RuntimeError as failure:
        if watchdog.fired:
            status, detail = Status.TIMED_OUT, f"stopped at the {job.notebook_timeout:g} s limit per notebook"
        else:
            status, detail = _diagnose(failure)
    else:
        status, detail = _status_from_outputs(job)
    finally:
        watchdog.stop()
    return JobResult(job.student, job.assignment, status, detail, time.monotonic() - started, _restored(job))


def _restored(job: GradingJob) -> tuple[str, ...]:
    if not guard_log(job).exists():
        return ()
    entries = [json.loads(line) for line in guard_log(job).read_text(encoding="utf-8").splitlines()]
    return tuple(f"put back before {entry['cell']}: {', '.join(entry['restored'])}" for entry in entries)


def _diagnose(failure: Exception) -> tuple[Status, str]:
    """Name a failure from what nbgrader logged about it."""
    log = str(failure)
    tampered = re.search(r"TamperedError: (.*)", log)
    if tampered:
        return Status.TAMPERED, tampered.group(1)[:300]
    if "CellTimeoutError" in log:
        return Status.TIMED_OUT, "the kernel stopped answering (its output did not arrive in time)"
    if "DeadKernel" in log or "Kernel died" in log:
        return Status.KERNEL_DIED, "the kernel died while running the notebook"
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    exceptions = [line for line in lines if re.match(r"[\w.]*(Error|Exception)\b", line)]
    return Status.FAILED, (exceptions or lines or ["nbgrader failed without a message"])[-1][:300]


def _status_from_outputs(job: GradingJob) -> tuple[Status, str]:
    """A notebook that ran to the end may still have had a cell stopped by the per-cell timeout."""
    notebook = autograded_folder(job) / job.student / job.assignment / f"{job.assignment}.ipynb"
    if not notebook.exists():
        return Status.KERNEL_DIED, "nbgrader produced no graded notebook (the kernel died?)"
    text = notebook.read_text(encoding="utf-8")
    if "CellTimeoutError" in text:
        return Status.TIMED_OUT, "a cell ran past the per-cell timeout; later cells still ran"
    return Status.GRADED, ""


class _KernelWatchdog:
    """Kills this process's kernel children once the notebook's wall-clock limit passes.

    nbclient then sees a dead kernel, nbgrader gives up on the notebook, and the job
    reports it as timed out. Kernels are found as child processes of this worker.
    """

    def __init__(self, limit: float):
        self.limit = limit
        self.fired = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _watch(self):
        if self._stop.wait(self.limit):
            return
        self.fired = True
        for pid in _child_pids(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _child_pids(parent: int) -> list[int]:
    children = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(parent):
            children.append(int(status.parent.name))
    return children
