"""Grade every submission folder of a course: triage, run in parallel, merge, record.

    submitted/STUDENT/ASSIGNMENT/  ->  gradebook.db, autograded/, feedback/, grading/records.json

Every folder ends with a record: graded, or a named reason it could not be. Folders whose
files are unchanged since their last grading are skipped unless ``force`` is set. One
folder never stops the others: whatever goes wrong with it is its record's reason.
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
from autograder.grading.folders import SubmissionFolder, submission_folders
from autograder.grading.jobs import GradingJob, JobResult, JobSettings, feedback_page, graded_notebook, prepare_job
from autograder.grading.nbgrader_run import course_config, generate_assignment, gradebook_url
from autograder.grading.pool import run_jobs
from autograder.grading.records import Record, Records
from autograder.grading.repair import repair
from autograder.grading.policy import Assignment, PolicyScan
from autograder.grading.status import Status
from autograder.grading.submission_files import FolderRefused, copy_file, list_folder, read_file
from autograder.grading.triage import Triage, grade_ids, triage
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


@dataclass(frozen=True)
class _Course:
    """What grading needs to know of a course, read once per run."""

    root: Path
    assignments: list[str]
    cells: dict[str, set[str]]  # assignment -> its grade_ids
    instructor: dict[str, Assignment]  # assignment -> what the policy scan needs of its source
    releases: dict[str, nbformat.NotebookNode]
    partial_credit: dict[str, tuple[str, ...]]  # assignment -> test cells scored by their output
    student_files: dict[str, list[str]]  # assignment -> files students may submit (nbgrader's exclude_overwriting)
    policy: PolicyScan

    @classmethod
    def read(cls, root: Path) -> _Course:
        names = assignments(root)
        sources = {name: nbformat.read(root / "source" / name / f"{name}.ipynb", as_version=4) for name in names}
        config = course_config(root, {})
        declared = config.Autograde.get("exclude_overwriting", {})
        return cls(
            root=root,
            assignments=names,
            cells={name: grade_ids((root / "source" / name / f"{name}.ipynb").read_bytes()) or set() for name in names},
            instructor={name: Assignment(source) for name, source in sources.items()},
            releases={name: nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4) for name in names},
            partial_credit={name: _partial_credit_cells(source) for name, source in sources.items()},
            student_files={name: list(declared.get(name, [])) for name in names},
            policy=PolicyScan(config=config),
        )


def grade_course(course: Path, options: Options) -> Run:
    """Grade what needs grading in ``course``; return the records of every folder."""
    course = course.resolve()
    unsandboxed_because = sandbox_problem(options)
    if unsandboxed_because:
        warnings.warn(f"grading UNSANDBOXED: {unsandboxed_because}. Student code will run with your "
                      f"permissions (still limited and guarded; see README, Threat model).", stacklevel=2)
    _register_assignments(course, assignments(course))
    facts = _Course.read(course)
    records = Records(course / "grading" / "records.json")
    scratch = course / "grading" / "scratch"
    template = scratch / "gradebook-template.db"
    template.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(course / "gradebook.db", template)
    settings = JobSettings(options.notebook_timeout, options.cell_timeout, not unsandboxed_because, options.limits)

    jobs: list[GradingJob] = []
    pending: dict[tuple[str, str], tuple[Triage, str, GradingJob]] = {}
    submitted = course / "submitted"
    if not submitted.is_dir():
        raise SystemExit(f"no submissions: {submitted} does not exist")
    for folder in submission_folders(submitted, options.students):
        try:
            prepared = _prepare(facts, folder, records, options.force, template,
                                scratch / "jobs" / f"{len(jobs):05d}", settings)
        except Exception as failure:  # noqa: BLE001 (one folder never stops a class)
            _save(facts, records, Record(folder.student, folder.assignment, Status.FAILED,
                                         f"could not be prepared: {type(failure).__name__}: {failure}"[:300]))
            continue
        if prepared is not None:
            verdict, fingerprint, job = prepared
            jobs.append(job)
            pending[job.student, job.assignment] = prepared

    failures = 0
    graded_now = []
    with tqdm(total=len(jobs), unit="notebook", disable=options.quiet or not jobs,
              desc="grading", dynamic_ncols=True) as bar:
        for result in run_jobs(jobs, options.workers, scratch / "logs"):
            verdict, fingerprint, job = pending.pop((result.student, result.assignment))
            try:
                status = _finish(facts, records, verdict, fingerprint, job, result)
            except Exception as failure:  # noqa: BLE001 (one folder never stops a class)
                status = Status.FAILED
                _save(facts, records, Record(result.student, result.assignment, status,
                                             f"its result could not be saved: {type(failure).__name__}: {failure}"[:300]))
            graded_now.append(f"{result.student}/{result.assignment}")
            failures += status is not Status.GRADED
            bar.set_postfix(problems=failures)
            bar.update()
    return Run(records, graded_now, unsandboxed_because)


def sandbox_problem(options: Options) -> str | None:
    """Why kernels will run unsandboxed (only ever when asked for), or None."""
    if not options.sandbox:
        return "the sandbox was switched off (--no-sandbox)"
    reason = bwrap.unavailable_reason()
    if reason:
        raise SystemExit(f"cannot grade in a sandbox here: {reason}. Install bubblewrap (apt-get install "
                         "bubblewrap), or pass --no-sandbox to run students' code with your own permissions.")
    return None


def _prepare(facts: _Course, folder: SubmissionFolder, records: Records, force: bool, template: Path,
             workdir: Path, settings: JobSettings) -> tuple[Triage, str, GradingJob] | None:
    """A job for ``folder``, or None when its record is already final (saved here)."""
    student, assignment = folder.student, folder.assignment
    previous = records.get(student, assignment)
    if folder.refused:
        fingerprint = f"refused: {folder.refused}"
        if force or not previous or previous.fingerprint != fingerprint:
            _save(facts, records, Record(student, assignment, Status.REFUSED, folder.refused, fingerprint=fingerprint))
        return None
    try:
        listing = list_folder(folder.path)
    except FolderRefused as refusal:
        _save(facts, records, Record(student, assignment, Status.REFUSED, f"the folder is refused: {refusal}"))
        return None
    if previous and previous.fingerprint == listing.fingerprint and not force:
        return None
    if assignment not in facts.assignments:
        _save(facts, records, Record(student, assignment, Status.UNKNOWN_ASSIGNMENT,
                                     f"the course has {', '.join(facts.assignments)}", fingerprint=listing.fingerprint))
        return None
    verdict = triage(folder.path, listing, assignment, facts.cells)
    if verdict.status is not None:
        _save(facts, records, Record(student, assignment, verdict.status, verdict.detail, verdict.problems,
                                     fingerprint=listing.fingerprint))
        return None
    notebook = nbformat.reads(verdict.notebook_bytes.decode("utf-8"), as_version=4)
    verdict.problems.extend(repair(notebook, facts.releases[assignment]))
    files = _files_for_the_kernel(facts, verdict, listing.files)
    _scan(facts, verdict, notebook, files)
    job = prepare_job(facts.root, template, workdir, student, assignment, notebook, files, settings,
                      facts.partial_credit[assignment])
    return verdict, listing.fingerprint, job


def _files_for_the_kernel(facts: _Course, verdict: Triage, present: tuple[str, ...]) -> dict[str, bytes]:
    """The submission's files the notebook may use besides itself: those the assignment
    declares for students (``Autograde.exclude_overwriting``). Every other file is named,
    and left out: the kernel cannot import or read it. (nbgrader's ``timestamp.txt`` is
    left out too: a student can write one, to dodge a late penalty.)"""
    wanted = set(facts.student_files[verdict.assignment])
    files, left_out = {}, []
    for name in present:
        if name in wanted:
            files[name] = read_file(verdict.folder, name)
        elif not (name.endswith(".ipynb") and "/" not in name):
            left_out.append(name)
    if left_out:
        verdict.problems.append("files the assignment does not declare, not given to the notebook: "
                                + ", ".join(left_out[:10]) + (" ..." if len(left_out) > 10 else ""))
    return files


def _scan(facts: _Course, verdict: Triage, notebook: nbformat.NotebookNode, files: dict[str, bytes]) -> None:
    """The policy scan of the student's cells and Python files, into ``verdict.flags``."""
    assignment = facts.instructor[verdict.assignment]
    own_modules = {Path(name).stem for name in facts.student_files[verdict.assignment] if name.endswith(".py")}
    verdict.flags.extend(facts.policy.findings(notebook, assignment, own_modules))
    for name, content in files.items():
        if name.endswith(".py"):
            source = content.decode("utf-8", "replace")
            verdict.flags.extend(facts.policy.file_findings(name, source, assignment, own_modules))


def _finish(facts: _Course, records: Records, verdict: Triage, fingerprint: str, job: GradingJob,
            result: JobResult) -> Status:
    """Bring a job's result into the course and record it; return its final status."""
    status, detail = result.status, result.detail
    merged = False
    if graded_notebook(job).exists():
        try:
            merge.merge_executed(facts.root, job.assignment, job.student, graded_notebook(job).parents[2])
            merged = True
        except RuntimeError as failure:
            status, detail = Status.FAILED, f"merging the graded notebook failed: {failure}"[:300]
    _publish_feedback(facts.root, job, merged)
    if verdict.flags and status is not Status.TAMPERED:
        also = f" (also {status.value}: {detail})" if status is not Status.GRADED else ""
        status, detail = Status.HELD, (f"the policy scan found {len(verdict.flags)} line(s) to read "
                                       f"(Code to read); the score stands until a person has looked{also}")
    record = Record(job.student, job.assignment, status, detail, verdict.problems + list(result.problems),
                    verdict.flags, round(result.seconds, 2), fingerprint=fingerprint)
    _save(facts, records, record, merged)
    return status


def _publish_feedback(course: Path, job: GradingJob, merged: bool) -> None:
    """The job's feedback page into ``course/feedback/``, or none at all (no stale page)."""
    _remove_feedback(course, job.student, job.assignment)
    page = feedback_page(job)
    if merged and page.exists():
        copy_file(page.parent, page.name, course / "feedback" / job.student / job.assignment / page.name)


def _remove_feedback(course: Path, student: str, assignment: str) -> None:
    folder = course / "feedback" / student / assignment
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)


def _save(facts: _Course, records: Records, record: Record, merged: bool = False) -> None:
    """Record a folder's outcome, with its score from the gradebook; a folder of a known
    assignment that left no graded notebook scores zero throughout."""
    if record.assignment in facts.assignments:
        if not merged:
            merge.record_zero(facts.root, record.assignment, record.student)
            _remove_feedback(facts.root, record.student, record.assignment)
        if record.flags:
            merge.hold_for_review(facts.root, record.assignment, record.student)
        record.score, record.max_score = merge.score(facts.root, record.assignment, record.student)
    records.save(record)


def _partial_credit_cells(source: nbformat.NotebookNode) -> tuple[str, ...]:
    """Test cells the instructor marked ``"autograder": {"partial_credit": true}``."""
    return tuple(cell.metadata.nbgrader["grade_id"] for cell in source.cells
                 if cell.metadata.get("autograder", {}).get("partial_credit") and "nbgrader" in cell.metadata)


def _register_assignments(course: Path, names: list[str]) -> None:
    """Make sure the gradebook knows every assignment (nbgrader generate_assignment)."""
    known = set()
    if (course / "gradebook.db").exists():
        with Gradebook(gradebook_url(course)) as gradebook:
            for name in names:
                try:
                    gradebook.find_assignment(name)
                    known.add(name)
                except MissingEntry:
                    pass
    for name in names:
        if name not in known:
            generate_assignment(course, name)
