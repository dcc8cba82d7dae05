"""One grading job: a submission autograded by nbgrader in a course of its own, and its
feedback page rendered there.

A job is a value: the submission's notebooks and declared files as bytes, the run's
settings, and the digest of its assignment's bundle (``grading.bundle``: configuration,
sources, a gradebook of that assignment), which reaches each worker once. ``run_job``
lays out the job's course in a temporary folder of the worker's, grades there, and sends
everything back in the ``JobResult``: the graded folder, the feedback pages, the
gradebook rows nbgrader wrote, the verdict and the second witness's records. Nothing in
it knows how jobs are scheduled (``pool`` runs them on this machine, ``dask_pool`` on a
cluster), and no path of the TA's machine reaches it. The job's verdict comes from what
the grader itself observed (``GuardedExecute``'s events), never from what the notebook
printed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from autograder import gradebook
from autograder.grading import witness_runs
from autograder.grading.bundle import job_course
from autograder.grading.feedback import render_feedback
from autograder.status import Status
from autograder.intake.submission_files import FolderRefused, list_folder, read_file
from autograder.message_language import text_language
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
    bundle: str  # the digest of its assignment's bundle
    settings: JobSettings
    notebooks: dict[str, bytes]  # file name -> the notebook graded as it (JSON), each in its own kernel
    files: dict[str, bytes] = field(default_factory=dict)  # the other files they may use: name -> content
    # grade_ids of the test cells whose execute_result is their score (the instructor's choice)
    partial_credit_cells: tuple[str, ...] = ()
    guard_torch: bool = True  # whether the assignment uses torch, which the kernel's guard then snapshots
    # The second witness: notebook -> test cell id -> its recorder; empty where the assignment
    # declares none. The job records; the run compares with the references (``collect``).
    recorders: dict = field(default_factory=dict)
    trusted: bool = False  # it runs only the instructor's code (the trial's released notebook)

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
    # The graded folder nbgrader left (relative path -> content, permission bits): all of the
    # job's notebooks or none; the feedback pages (file name -> HTML); the gradebook rows.
    graded: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    pages: dict[str, bytes] = field(default_factory=dict)
    rows: dict | None = None
    worker: str = ""  # where it was graded, for the report
    worker_ends: bool = False  # its worker stopped it at the deadline and exits now

    def graded_notebooks(self, job: GradingJob) -> list[str]:
        """The names of the job's notebooks that were graded."""
        return [name for name in job.notebooks if name in self.graded]


@dataclass(frozen=True)
class ReferenceJob:
    """The reference records of an assignment's notebooks (``witness_runs``), made in a
    grading kernel from the instructor's notebooks, once per run."""

    assignment: str
    bundle: str  # the digest of its assignment's bundle, whose source/ the kernel sees
    settings: JobSettings
    notebooks: dict  # notebook name -> its witness notebook
    recorders: dict  # notebook name -> test cell id -> its recorder
    guard_torch: bool = True
    student: str = "the instructor's reference"
    trusted: bool = True  # the instructor's code only

    @property
    def time_limit(self) -> float:
        return self.settings.notebook_timeout * len(self.notebooks)


def make_job(*, student: str, assignment: str, bundle: str, notebooks: dict[str, nbformat.NotebookNode],
             files: dict[str, bytes], settings: JobSettings, partial_credit_cells: tuple[str, ...] = (),
             guard_torch: bool = True, recorders: dict | None = None, trusted: bool = False) -> GradingJob:
    """The job for one submission: ``notebooks`` maps each of the assignment's notebook
    names to the notebook graded as it; ``files`` (name -> content) are the other files
    they may use."""
    return GradingJob(student, assignment, bundle, settings,
                      {name: nbformat.writes(notebook).encode() for name, notebook in notebooks.items()},
                      dict(files), partial_credit_cells, guard_torch, recorders or {}, trusted)


class _Place:
    """Where a job runs on its worker: its course, and the folders nbgrader writes there."""

    def __init__(self, job: GradingJob | ReferenceJob, template: Path, workdir: Path):
        self.workdir = workdir
        self.course = job_course(template, workdir, job.settings.overrides)
        self.events_log = workdir / "events.jsonl"
        if isinstance(job, GradingJob):
            self.graded = self.course.folder("autograded", job.student, job.assignment)
            self.feedback = self.course.folder("feedback", job.student, job.assignment)
            submitted = self.course.folder("submitted", job.student, job.assignment)
            submitted.mkdir(parents=True)
            for name, content in [*job.notebooks.items(), *job.files.items()]:
                path = submitted / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)

    def graded_notebooks(self, job: GradingJob) -> list[Path]:
        """The graded notebooks the job left: all of its notebooks, or none (nbgrader removes a
        submission's graded folder when one of its notebooks fails)."""
        return [self.graded / name for name in job.notebooks if (self.graded / name).exists()]


# How much of a job's instructions tell its language (a Python loop over characters: capped).
LANGUAGE_SAMPLE = 20_000


def _overrides(job: GradingJob, place: _Place) -> Config:
    """nbgrader's autograde, with its Execute step swapped for the guarded, sandboxed one
    and followed by the step that makes the graded notebook inert."""
    steps = [replaced for step in Autograde.class_traits()["autograde_preprocessors"].default()
             for replaced in ((GuardedExecute, MakeInert) if step is Execute else (step,))]
    overrides = Config(job.settings.overrides)
    overrides.merge(Config({
        "Autograde": {"autograde_preprocessors": steps},
        "GuardedExecute": {"events_log": str(place.events_log), "partial_credit_cells": list(job.partial_credit_cells),
                           "guard_torch": job.guard_torch, "message_language": _language(job) or ""},
    }))
    return overrides


def _language(job: GradingJob) -> str | None:
    """The language of the job's notebooks, for the checks' messages: that of their locked
    Markdown cells (the instructor's instructions, which a translated edition translates;
    what a student writes does not count), read from their first ``LANGUAGE_SAMPLE``
    characters. None for English."""
    texts, length = [], 0
    for data in job.notebooks.values():
        for cell in json.loads(data)["cells"]:
            if cell["cell_type"] == "markdown" and cell["metadata"].get("nbgrader", {}).get("locked"):
                texts.append("".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
                length += len(texts[-1])
        if length >= LANGUAGE_SAMPLE:
            break
    return text_language("".join(texts)[:LANGUAGE_SAMPLE])


def run_job(job: GradingJob | ReferenceJob, template: Path) -> JobResult:
    """Grade the job in a temporary folder of this worker's, from its bundle unpacked in
    ``template`` (``bundle.unpacked``), and remove the folder after. (A reference job
    records its assignment's references.)"""
    workdir = Path(tempfile.mkdtemp(prefix="job-"))
    try:
        place = _Place(job, template, workdir / "course")
        if isinstance(job, ReferenceJob):
            return _record_references(job, place)
        return _grade(job, place)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _grade(job: GradingJob, place: _Place) -> JobResult:
    """Autograde the job's submission, stopping it at the wall-clock limit (the limit per
    notebook, times its notebooks), record what its passing tests computed with the second
    witness while its feedback pages render; read back what the job made."""
    started = time.monotonic()
    watchdog = _KernelWatchdog(job.phase_limit)
    watchdog.start()
    try:
        autograde(place.workdir, job.assignment, job.student, _overrides(job, place))
        failure = None
    except RuntimeError as error:
        failure = error
    finally:
        watchdog.stop()
    events = _events(place)
    ran = bool(place.graded_notebooks(job))
    status, detail = _verdict(job, events, failure, watchdog.fired, ran)
    problems = [f"put back before {event['cell']}: {', '.join(event['restored'])}"
                for event in events if "restored" in event]
    problems += [event["problem"] for event in events if "problem" in event]
    witness = _WitnessRun(job, place)
    graded, pages, rows = {}, {}, None
    if ran:
        witness.start()  # its kernel runs while this process renders the pages
        problems += render_pages(place.workdir, job)
        try:
            graded, pages = _graded_folder(place), _pages(job, place)
            rows = gradebook.submission_rows(place.course, job.assignment, job.student)
        except (OSError, FolderRefused) as error:
            status, detail, graded, pages = Status.FAILED, f"the graded folder could not be read: {error}"[:300], {}, {}
    records, witness_seconds = witness.result()
    return JobResult(job.student, job.assignment, status, detail, time.monotonic() - started, tuple(problems),
                     records, witness_seconds=witness_seconds, graded=graded, pages=pages, rows=rows)


NO_FEEDBACK = "no feedback page: "


def render_pages(root: Path, job: GradingJob) -> list[str]:
    """Render the job's feedback pages in the course in ``root``; the problem, if it could not."""
    try:
        render_feedback(root, job.assignment, job.student)
    except RuntimeError as error:
        return [f"{NO_FEEDBACK}{str(error)[:300]}"]
    return []


def _graded_folder(place: _Place) -> dict[str, tuple[bytes, int]]:
    """The regular files of the graded folder (nbgrader copies the submission's files
    there; the kernel writes nowhere near it), with their permission bits, read within
    the caps of a submission folder and without following a link."""
    listing = list_folder(place.graded)
    return {relative: (read_file(place.graded, relative),
                       os.stat(place.graded / relative, follow_symlinks=False).st_mode & 0o777)
            for relative in listing.files}


def _pages(job: GradingJob, place: _Place) -> dict[str, bytes]:
    names = [Path(name).with_suffix(".html").name for name in job.notebooks]
    return {name: read_file(place.feedback, name) for name in names if (place.feedback / name).is_file()}


class _WitnessRun:
    """The second witness of a job, in a thread of its own: its kernel's run (most of its
    cost, spent waiting) overlaps the rendering of the feedback pages."""

    def __init__(self, job: GradingJob, place: _Place):
        self._job, self._place = job, place
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
            self._records = _witness_records(self._job, self._place)
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


def _witness_records(job: GradingJob, place: _Place) -> dict[str, dict]:
    """The second witness's records of each graded notebook's tests that passed and have a
    recorder, each notebook in a witness kernel under a watchdog of its own (a kernel killed
    at its limit records nothing, and what it did not record is a difference)."""
    found = {}
    for name in job.notebooks:
        recorders = job.recorders.get(name, {})
        if not recorders or not (place.graded / name).is_file():
            continue
        graded = nbformat.read(place.graded / name, as_version=4)
        confirm = witness_runs.to_confirm(graded, recorders)
        if not confirm:
            continue  # no test with a recorder passed: nothing to confirm, no second kernel
        watchdog = _KernelWatchdog(job.phase_limit)
        watchdog.start()
        try:
            found[name] = witness_runs.run_witness(
                witness_runs.witness_notebook(graded, {test: recorders[test] for test in confirm}), place.graded,
                place.course.config, job.guard_torch)
        except Exception:  # noqa: BLE001 (a witness that could not run recorded nothing: every passing test differs)
            found[name] = {}
        finally:
            watchdog.stop()
    return found


def rescore(job: GradingJob, template: Path, graded: dict[str, bytes]) -> JobResult:
    """Score the job's graded notebooks again as they are now (``graded``: name -> the
    notebook, some of its tests failed since by the second witness), nothing executed: a
    result with the graded folder, the pages and the rows nbgrader makes of them, in a
    temporary folder (on the TA's machine: the course's bundle is there)."""
    workdir = Path(tempfile.mkdtemp(prefix="job-"))
    try:
        place = _Place(job, template, workdir / "course")
        executed = workdir / "executed"
        folder = executed / job.student / job.assignment
        folder.mkdir(parents=True)
        for name, content in {**job.files, **graded}.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)
        gradebook.merge_executed(place.course, job.assignment, job.student, executed)
        problems = render_pages(place.workdir, job)
        return JobResult(job.student, job.assignment, Status.GRADED, "", 0.0, tuple(problems),
                         graded=_graded_folder(place), pages=_pages(job, place),
                         rows=gradebook.submission_rows(place.course, job.assignment, job.student))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _record_references(job: ReferenceJob, place: _Place) -> JobResult:
    started = time.monotonic()
    source = place.course.folder("source", assignment=job.assignment)
    records = {name: witness_runs.run_witness(notebook, source, place.course.config, job.guard_torch)
               for name, notebook in job.notebooks.items()}
    return JobResult(job.student, job.assignment, Status.GRADED, "", time.monotonic() - started, records=records)


def _events(place: _Place) -> list[dict]:
    if not place.events_log.exists():
        return []
    return [json.loads(line) for line in place.events_log.read_text(encoding="utf-8").splitlines()]


def _verdict(job: GradingJob, events: list[dict], failure: Exception | None, stopped: bool,
             graded: bool) -> tuple[Status, str]:
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
    if starts > ready and (failure is not None or not graded):
        why = _failure_line(failure) if failure else "no graded notebook"
        return Status.GRADER_ERROR, f"a grading kernel never became ready ({why})"
    if any("kernel_died" in event for event in events):
        return Status.KERNEL_DIED, "the kernel died while running the notebook"
    if failure is not None:
        return Status.FAILED, _failure_line(failure)
    if not graded:
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
