"""One grading job: a submission autograded by nbgrader in a scratch course of its own,
and its feedback page rendered there.

A job is a folder (the course's ``nbgrader_config.py``, its ``source/``, a copy of the
gradebook, the one submission) and a function of that folder alone, ``run_job``. Nothing
in it knows how jobs are scheduled: a process pool runs them here, and a cluster scheduler
could run the same folders elsewhere. The job's verdict comes from what the grader itself
observed (``GuardedExecute``'s events), never from what the notebook printed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from autograder.course import Course, scratch_course
from autograder.grading.feedback import render_feedback
from autograder.grading import witness_runs
from autograder.grading.status import Status
from autograder.nbgrader_api import autograde
from autograder.preprocessors.guarded_execute import GuardedExecute
from autograder.preprocessors.inert import MakeInert


# What nbgrader logs around every failure: never the reason.
NBGRADER_BOILERPLATE = ("Please see the", "There was an error processing")


@dataclass(frozen=True)
class JobSettings:
    """How every job of a run is graded: the notebook's time limit (which the pool and the
    watchdog enforce) and the settings given for this run over the course's configuration
    ({Class: {trait: value}}; see ``settings.GradingSettings``)."""

    notebook_timeout: float
    overrides: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GradingJob:
    student: str
    assignment: str
    workdir: Path
    settings: JobSettings
    notebooks: tuple[str, ...]  # the file names of the notebooks graded, each in its own kernel
    # grade_ids of the test cells whose execute_result is their score (the instructor's choice)
    partial_credit_cells: tuple[str, ...] = ()
    guard_torch: bool = True  # whether the assignment uses torch, which the kernel's guard then snapshots
    # The second witness: notebook -> test cell id -> its recorder; empty where the assignment
    # declares none. The job records; the run compares with the references (``collect``).
    recorders: dict = field(default_factory=dict)

    @property
    def phase_limit(self) -> float:
        """The wall-clock limit of grading its notebooks, and again of confirming them with
        the second witness: the limit per notebook, times its notebooks."""
        return self.settings.notebook_timeout * len(self.notebooks)

    @property
    def time_limit(self) -> float:
        """The wall-clock limit of the whole job: a phase, or two with the second witness."""
        return self.phase_limit * (2 if self.recorders else 1)


@dataclass(frozen=True)
class JobResult:
    student: str
    assignment: str
    status: Status
    detail: str
    seconds: float
    # What the guard put back before a test ran, what was cut, what went wrong: for the TA.
    problems: tuple[str, ...] = ()
    # The second witness's records: notebook -> test cell id -> message data (a reference
    # job's, or a graded notebook's for the tests that passed; a notebook witnessed whose
    # kernel sent nothing is there, empty).
    records: dict = field(default_factory=dict)
    witness_seconds: float = 0.0


@dataclass(frozen=True)
class ReferenceJob:
    """The reference records of an assignment's notebooks (``witness_runs``), made in a
    grading kernel from the instructor's notebooks, once per run."""

    assignment: str
    workdir: Path  # the assignment's files, as a kernel may see them
    settings: JobSettings
    notebooks: dict  # notebook name -> its witness notebook
    recorders: dict  # notebook name -> test cell id -> its recorder
    guard_torch: bool = True
    student: str = "the instructor's reference"

    @property
    def time_limit(self) -> float:
        return self.settings.notebook_timeout * len(self.notebooks)


def prepare_job(course: Course, workdir: Path, *, student: str, assignment: str,
                notebooks: dict[str, nbformat.NotebookNode], files: dict[str, bytes], gradebook_template: Path,
                settings: JobSettings, partial_credit_cells: tuple[str, ...] = (),
                guard_torch: bool = True, recorders: dict | None = None) -> GradingJob:
    """Lay out the scratch course for one submission: ``notebooks`` maps each of the
    assignment's notebook names to the notebook graded as it; ``files`` (name -> content)
    are the other files they may use."""
    if workdir.exists():
        shutil.rmtree(workdir)
    copy = scratch_course(course, workdir, [assignment])
    shutil.copy(gradebook_template, copy.gradebook_file)
    submitted = copy.folder("submitted", student, assignment)
    submitted.mkdir(parents=True)
    for name, notebook in notebooks.items():
        nbformat.write(notebook, submitted / name)
    for name, content in files.items():
        path = submitted / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return GradingJob(student, assignment, workdir, settings, tuple(notebooks), partial_credit_cells, guard_torch,
                      recorders=recorders or {})


@cache
def scratch(workdir: Path) -> Course:
    """A job's scratch course (its configuration read once per process)."""
    return Course(workdir)


def graded_notebooks(job: GradingJob) -> list[Path]:
    """The graded notebooks the job left: all of its notebooks, or none (nbgrader removes a
    submission's graded folder when one of its notebooks fails)."""
    folder = scratch(job.workdir).folder("autograded", job.student, job.assignment)
    return [folder / name for name in job.notebooks if (folder / name).exists()]


def feedback_pages(job: GradingJob) -> list[Path]:
    folder = scratch(job.workdir).folder("feedback", job.student, job.assignment)
    return [path for name in job.notebooks if (path := (folder / name).with_suffix(".html")).exists()]


def events_log(job: GradingJob) -> Path:
    return job.workdir / "events.jsonl"


def _overrides(job: GradingJob) -> Config:
    """nbgrader's autograde, with its Execute step swapped for the guarded, sandboxed one
    and followed by the step that makes the graded notebook inert."""
    steps = [replaced for step in Autograde.class_traits()["autograde_preprocessors"].default()
             for replaced in ((GuardedExecute, MakeInert) if step is Execute else (step,))]
    overrides = Config(job.settings.overrides)
    overrides.merge(Config({
        "Autograde": {"autograde_preprocessors": steps},
        "GuardedExecute": {"events_log": str(events_log(job)), "partial_credit_cells": list(job.partial_credit_cells),
                           "guard_torch": job.guard_torch},
    }))
    return overrides


def run_job(job: GradingJob | ReferenceJob) -> JobResult:
    """Autograde the job's submission, stopping it at the wall-clock limit (the limit per
    notebook, times its notebooks), record what its passing tests computed with the second
    witness while its feedback pages render. (A reference job records its assignment's
    references.)"""
    if isinstance(job, ReferenceJob):
        return _record_references(job)
    started = time.monotonic()
    watchdog = _KernelWatchdog(job.phase_limit)
    watchdog.start()
    try:
        autograde(job.workdir, job.assignment, job.student, _overrides(job))
        failure = None
    except RuntimeError as error:
        failure = error
    finally:
        watchdog.stop()
    events = _events(job)
    status, detail = _verdict(job, events, failure, watchdog.fired)
    problems = [f"put back before {event['cell']}: {', '.join(event['restored'])}"
                for event in events if "restored" in event]
    problems += [event["problem"] for event in events if "problem" in event]
    witness = _WitnessRun(job)
    if graded_notebooks(job):
        witness.start()  # its kernel runs while this process renders the pages
        problems += render_pages(job)
    records, witness_seconds = witness.result()
    return JobResult(job.student, job.assignment, status, detail, time.monotonic() - started, tuple(problems),
                     records, witness_seconds=witness_seconds)


NO_FEEDBACK = "no feedback page: "


def render_pages(job: GradingJob) -> list[str]:
    """Render the job's feedback pages; the problem, if it could not."""
    try:
        render_feedback(job.workdir, job.assignment, job.student)
    except RuntimeError as error:
        return [f"{NO_FEEDBACK}{str(error)[:300]}"]
    return []


class _WitnessRun:
    """The second witness of a job, in a thread of its own: its kernel's run (most of its
    cost, spent waiting) overlaps the rendering of the feedback pages."""

    def __init__(self, job: GradingJob):
        self._job = job
        self._records: dict = {}
        self._seconds = 0.0
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        if self._job.recorders:
            self._thread.start()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._records = _witness_records(self._job)
        except BaseException as failure:  # noqa: BLE001 (raised again in the job's own thread)
            self._failure = failure
        finally:
            self._seconds = time.monotonic() - started

    def result(self) -> tuple[dict, float]:
        """The records (notebook -> test -> message data) and the seconds they took."""
        if self._thread.ident is not None:
            self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self._records, self._seconds


def _config(workdir: Path, settings: JobSettings):
    return Course(workdir, settings.overrides).config


def _witness_records(job: GradingJob) -> dict[str, dict]:
    """The second witness's records of each graded notebook's tests that passed and have a
    recorder, each notebook in a witness kernel under a watchdog of its own (a kernel killed
    at its limit records nothing, and what it did not record is a difference)."""
    folder = scratch(job.workdir).folder("autograded", job.student, job.assignment)
    found = {}
    for name in job.notebooks:
        recorders = job.recorders.get(name, {})
        if not recorders or not (folder / name).is_file():
            continue
        graded = nbformat.read(folder / name, as_version=4)
        confirm = witness_runs.to_confirm(graded, recorders)
        if not confirm:
            continue  # no test with a recorder passed: nothing to confirm, no second kernel
        watchdog = _KernelWatchdog(job.phase_limit)
        watchdog.start()
        try:
            found[name] = witness_runs.run_witness(
                witness_runs.witness_notebook(graded, {test: recorders[test] for test in confirm}), folder,
                _config(job.workdir, job.settings), job.guard_torch)
        except Exception:  # noqa: BLE001 (a witness that could not run recorded nothing: every passing test differs)
            found[name] = {}
        finally:
            watchdog.stop()
    return found


def _record_references(job: ReferenceJob) -> JobResult:
    started = time.monotonic()
    records = {name: witness_runs.run_witness(notebook, job.workdir, _config(job.workdir, job.settings),
                                              job.guard_torch)
               for name, notebook in job.notebooks.items()}
    return JobResult(job.student, job.assignment, Status.GRADED, "", time.monotonic() - started, records=records)


def _events(job: GradingJob) -> list[dict]:
    if not events_log(job).exists():
        return []
    return [json.loads(line) for line in events_log(job).read_text(encoding="utf-8").splitlines()]


def _verdict(job: GradingJob, events: list[dict], failure: Exception | None, stopped: bool) -> tuple[Status, str]:
    """The job's status from the grader's own observations."""
    tampered = [event["tampered"] for event in events if "tampered" in event]
    if tampered:
        return Status.TAMPERED, tampered[0][:300]
    spent = [event["stopped"] for event in events if "stopped" in event]
    if spent:
        return Status.STOPPED, spent[0][:300]
    if stopped:
        return Status.STOPPED, (f"stopped at its {job.phase_limit:g} s limit ({job.settings.notebook_timeout:g} s "
                                f"per notebook, {len(job.notebooks)} notebook(s))")
    starts, ready = (sum(key in event for event in events) for key in ("kernel_starting", "kernel_ready"))
    if starts > ready and (failure is not None or not graded_notebooks(job)):
        why = _failure_line(failure) if failure else "no graded notebook"
        return Status.GRADER_ERROR, f"a grading kernel never became ready ({why})"
    if any("kernel_died" in event for event in events):
        return Status.KERNEL_DIED, "the kernel died while running the notebook"
    if failure is not None:
        return Status.FAILED, _failure_line(failure)
    if not graded_notebooks(job):
        return Status.KERNEL_DIED, "nbgrader produced no graded notebook (the kernel died?)"
    timed_out = [event["timed_out"] for event in events if "timed_out" in event]
    if timed_out:
        return Status.TIMED_OUT, f"{', '.join(timed_out)} ran past the per-cell timeout; later cells still ran"
    return Status.GRADED, ""


def _failure_line(failure: Exception) -> str:
    """The last line of what nbgrader logged that is not its boilerplate."""
    lines = [line.strip() for line in str(failure).splitlines()
             if line.strip() and not line.strip().startswith(NBGRADER_BOILERPLATE)]
    return (lines or ["nbgrader failed without a message"])[-1][:300]


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
        for pid in child_pids(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def child_pids(parent: int) -> list[int]:
    children = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(parent):
            children.append(int(status.parent.name))
    return children
