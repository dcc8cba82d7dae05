"""Grade every submission folder of a course: triage, run in parallel, merge, record.

    submitted/STUDENT/ASSIGNMENT/  ->  gradebook.db, autograded/, grading/records.json

Every folder ends with a record: graded, or a named reason it could not be. Folders whose
files are unchanged since their last grading are skipped unless ``force`` is set.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from autograder.grading import merge
from autograder.grading.jobs import GradingJob, autograded_folder, prepare_job
from autograder.grading.pool import run_jobs
from autograder.grading.repair import repair
from autograder.grading.records import Record, Records, fingerprint
from autograder.grading.scan import instructor_cells, suspicious_lines
from autograder.grading.status import Status
from autograder.grading.triage import Triage, grade_ids, triage
from autograder.grading.nbgrader_run import generate_assignment
from autograder.release import assignments
from autograder.sandbox import bwrap
from autograder.sandbox.limits import Limits


@dataclass(frozen=True)
class Run:
    """What one call did: every folder's record, which ones it graded just now, and why
    kernels ran unsandboxed (None when they were sandboxed)."""

    records: Records
    graded_now: list[str]
    unsandboxed_because: str | None = None


@dataclass(frozen=True)
class Options:
    workers: int
    notebook_timeout: float = 600.0
    cell_timeout: int | None = None
    force: bool = False
    students: tuple[str, ...] = ()
    quiet: bool = False
    sandbox: bool = True
    limits: Limits = Limits()


def grade_course(course: Path, options: Options) -> Run:
    """Grade what needs grading in ``course``; return the records of every folder."""
    course = course.resolve()
    unsandboxed_because = sandbox_problem(options)
    if unsandboxed_because:
        warnings.warn(f"grading UNSANDBOXED: {unsandboxed_because}. Student code will run with your "
                      f"permissions (still limited and guarded; see README, Threat model).", stacklevel=2)
    names = assignments(course)
    _register_assignments(course, names)
    sources = {name: nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4) for name in names}
    cells = {name: grade_ids(course / "source" / name / f"{name}.ipynb") or set() for name in names}
    instructors = {name: instructor_cells(source) for name, source in sources.items()}
    records = Records(course / "grading" / "records.json")
    scratch = course / "grading" / "scratch"
    template = scratch / "gradebook-template.db"
    template.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(course / "gradebook.db", template)

    jobs: list[GradingJob] = []
    pending: dict[tuple[str, str], tuple[Triage, str, GradingJob]] = {}
    for folder in _submission_folders(course, options.students):
        student, assignment = folder.parent.name, folder.name
        print_ = fingerprint(folder)
        previous = records.get(student, assignment)
        if previous and previous.fingerprint == print_ and not options.force:
            continue
        if assignment not in names:
            records.save(Record(student, assignment, Status.UNKNOWN_ASSIGNMENT,
                                f"the course has {', '.join(names)}", fingerprint=print_))
            continue
        verdict = triage(folder, assignment, cells)
        if verdict.status is not None:
            _finish(course, records, verdict, verdict.status, verdict.detail, 0.0, print_)
            continue
        extras = [p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and p.suffix != ".ipynb"]
        notebook = _repaired(course, verdict, scratch / "repaired" / student / f"{assignment}.ipynb")
        verdict.flags.extend(suspicious_lines(nbformat.read(notebook, as_version=4), instructors[assignment]))
        job = prepare_job(course, template, student, assignment, notebook, extras,
                          scratch / "jobs" / student / assignment, options.notebook_timeout,
                          options.cell_timeout, not unsandboxed_because, options.limits)
        jobs.append(job)
        pending[student, assignment] = (verdict, print_, job)

    failures = 0
    graded_now = []
    with tqdm(total=len(jobs), unit="notebook", disable=options.quiet or not jobs,
              desc="grading", dynamic_ncols=True) as bar:
        for result in run_jobs(jobs, options.workers, scratch / "logs"):
            verdict, print_, job = pending.pop((result.student, result.assignment))
            status, detail = result.status, result.detail
            executed = autograded_folder(job)
            merged = False
            if (executed / result.student / result.assignment).is_dir():
                try:
                    merge.merge_executed(course, result.assignment, result.student, executed)
                    merged = True
                except RuntimeError as failure:
                    status, detail = Status.FAILED, f"merging the graded notebook failed: {failure}"
            verdict.problems.extend(result.restored)
            _finish(course, records, verdict, status, detail, result.seconds, print_, merged)
            graded_now.append(f"{result.student}/{result.assignment}")
            failures += status is not Status.GRADED
            bar.set_postfix(problems=failures)
            bar.update()
    return Run(records, graded_now, unsandboxed_because)


def sandbox_problem(options: Options) -> str | None:
    """Why kernels will run unsandboxed, or None."""
    if not options.sandbox:
        return "the sandbox was switched off (--no-sandbox)"
    return bwrap.unavailable_reason()


def _finish(course, records, verdict: Triage, status: Status, detail: str, seconds: float, print_: str,
            merged: bool = False):
    """Record a folder's outcome; one that left no graded notebook scores zero throughout."""
    if not merged:
        merge.record_zero(course, verdict.assignment, verdict.student)
    score, max_score = merge.score(course, verdict.assignment, verdict.student)
    records.save(Record(verdict.student, verdict.assignment, status, detail, verdict.problems, verdict.flags,
                        round(seconds, 2), score, max_score, print_))


def _repaired(course: Path, verdict: Triage, into: Path) -> Path:
    """The submitted notebook with its nbgrader marks repaired (``repair``), noted in the verdict."""
    notebook = nbformat.read(verdict.notebook, as_version=4)
    release = nbformat.read(course / "release" / verdict.assignment / f"{verdict.assignment}.ipynb",
                            as_version=4)
    verdict.problems.extend(repair(notebook, release))
    into.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, into)
    return into


def _submission_folders(course: Path, students: tuple[str, ...]) -> list[Path]:
    submitted = course / "submitted"
    if not submitted.is_dir():
        raise SystemExit(f"no submissions: {submitted} does not exist")
    return [
        folder
        for student in sorted(submitted.iterdir()) if student.is_dir() and (not students or student.name in students)
        for folder in sorted(student.iterdir()) if folder.is_dir()
    ]


def _register_assignments(course: Path, names: list[str]) -> None:
    """Make sure the gradebook knows every assignment (nbgrader generate_assignment)."""
    known = set()
    if (course / "gradebook.db").exists():
        with Gradebook(merge.gradebook_url(course)) as gradebook:
            for name in names:
                try:
                    gradebook.find_assignment(name)
                    known.add(name)
                except MissingEntry:
                    pass
    for name in names:
        if name not in known:
            generate_assignment(course, name)
