"""The plan for one submission folder, made before any student code runs: either its final
record (refused, missing, unchanged since it was graded, ...) or a grading job, with
what triage, repair and the policy scan found on the way.

Each stage returns its piece (triage its verdict, repair its notes, the file selection
its files and notes, the scan its flags) and the plan is put together once, here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import parse_utc

from autograder import gradebook
from autograder.course import SUBMISSION_SECRET_FILE, TIMESTAMP_FILE, Course, grade_id, kernel_problem
from autograder.grading import witness_runs
from autograder.intake.folders import SubmissionFolder
from autograder.grading.bundle import Bundles
from autograder.grading.jobs import GradingJob, JobSettings, ReferenceJob, make_job
from autograder.policy.scan import Assignment, PolicyScan, instructor_facts
from autograder.policy.course_use import CourseUse
from autograder.results.records import Record, Records
from autograder.results.records import fingerprint as records_fingerprint
from autograder.intake.repair import repair
from autograder.status import Status
from autograder.intake.submission_files import MAX_FILE_BYTES, FolderRefused, list_folder, read_file
from autograder.intake.triage import Triage, triage


# torch, its family (torchvision, ...) and this package, whose checks use torch.
TORCH_WORDS = re.compile(r"\b(torch\w*|autograder)\b")
# Far more than any time nbgrader writes ("2015-02-02 14:58:23.948203 America/Los_Angeles").
TIMESTAMP_BYTES = 1024


@dataclass(frozen=True)
class CourseFacts:
    """What planning needs to know of a course, read once per run. Notebooks are keyed
    by (assignment, notebook file name)."""

    course: Course
    assignments: list[str]
    cells: dict[str, dict[str, set[str]]]  # assignment -> notebook -> its grade_ids
    sources: dict[tuple[str, str], nbformat.NotebookNode]
    releases: dict[tuple[str, str], nbformat.NotebookNode]
    instructor: dict[str, Assignment]  # assignment -> what the policy scan needs of its sources
    partial_credit: dict[str, tuple[str, ...]]  # assignment -> test cells scored by their output
    uses_torch: dict[str, bool]  # assignment -> whether its notebooks use torch (or this package's checks)
    student_files: dict[str, list[str]]  # assignment -> files students may submit
    released_files: dict[str, dict[str, Path]]  # assignment -> released file besides the notebooks -> its path
    recorders: dict[tuple[str, str], dict[str, str]]  # (assignment, notebook) -> test cell -> its recorder
    known_students: set[str] | None  # the only students who may be graded (None: anyone, nbgrader's default)
    policy: PolicyScan

    @classmethod
    def read(cls, course: Course, known_students: set[str] | None) -> CourseFacts:
        names = course.assignments()
        sources = {(name, notebook): course.read("source", name, name=notebook)
                   for name in names for notebook in course.notebook_names(name)}
        merged = {name: nbformat.v4.new_notebook(cells=[cell for (owner, _), source in sources.items()
                                                        if owner == name for cell in source.cells])
                  for name in names}
        declared = course.config.Autograde.get("exclude_overwriting", {})
        return cls(
            course=course,
            assignments=names,
            cells={name: {notebook: {grade_id(cell) for cell in sources[(name, notebook)].cells} - {None}
                          for notebook in course.notebook_names(name)} for name in names},
            sources=sources,
            releases={key: nbformat.read(gradebook.released_notebook(course, *key), as_version=4) for key in sources},
            instructor={name: instructor_facts(notebook) for name, notebook in merged.items()},
            partial_credit={name: _partial_credit_cells(notebook) for name, notebook in merged.items()},
            uses_torch={name: _uses_torch(course, name, merged[name]) for name in names},
            student_files={name: list(declared.get(name, [])) for name in names},
            released_files={name: _released_files(course.folder("release", assignment=name)) for name in names},
            recorders={key: witness_runs.recorders(source, course.hidden_delimiters)
                       for key, source in sources.items()},
            known_students=known_students,
            policy=PolicyScan(config=course.config, course_use=CourseUse.read(sources.values(), {
                path.name: start for name in names for path, start in course.instructor_files[name].items()
                if path.parent == course.folder("source", assignment=name)})),
        )


@dataclass(frozen=True)
class Plan:
    """One folder's plan: a job to run, or (``job`` None) its final record."""

    record: Record  # final, or the start of the record the job's result completes
    job: GradingJob | None = None


def plan_folder(facts: CourseFacts, folder: SubmissionFolder, records: Records, force: bool,
                bundles: Bundles, settings: JobSettings) -> Plan | None:
    """The plan for ``folder``, or None when its record is already final and unchanged."""
    student, assignment = folder.student, folder.assignment
    previous = records.get(student, assignment)
    if folder.refused:
        fingerprint = f"refused: {folder.refused}"
        if force or not previous or previous.fingerprint != fingerprint:
            return Plan(Record(student, assignment, Status.REFUSED, folder.refused, fingerprint=fingerprint))
        return None
    try:
        listing = list_folder(folder.path)
    except FolderRefused as refusal:
        return Plan(Record(student, assignment, Status.REFUSED, f"the folder is refused: {refusal}"))
    fingerprint = records_fingerprint(facts.course, assignment, listing)
    if previous and previous.fingerprint == fingerprint and not force \
            and previous.status is not Status.UNKNOWN_STUDENT:  # the student may be in the gradebook now
        return None
    if assignment not in facts.assignments:
        return Plan(Record(student, assignment, Status.UNKNOWN_ASSIGNMENT,
                           f"the course has {', '.join(facts.assignments)}", fingerprint=fingerprint))
    if facts.known_students is not None and student not in facts.known_students:
        return Plan(Record(student, assignment, Status.UNKNOWN_STUDENT,
                           "not in the gradebook, and Autograde.create_student is False",
                           fingerprint=fingerprint))
    why = _why_graded(assignment, previous, fingerprint, force)
    verdict = triage(folder.path, listing, assignment, facts.cells)
    if verdict.status is not None:
        return Plan(Record(student, assignment, verdict.status, verdict.detail, list(verdict.problems),
                           fingerprint=fingerprint))
    notebooks, repairs = {}, []
    for name, (submitted, content) in verdict.notebooks.items():
        notebook = nbformat.reads(content.decode("utf-8"), as_version=4)
        problem = kernel_problem(facts.sources[(assignment, name)].metadata.get("kernelspec")
                                 or notebook.metadata.get("kernelspec"))
        if problem:
            return Plan(Record(student, assignment, Status.FAILED, f"{submitted}: {problem}", list(verdict.problems),
                               fingerprint=fingerprint))
        repairs += [f"{name}: {note}" if len(verdict.notebooks) > 1 else note
                    for note in repair(notebook, facts.releases[(assignment, name)])]
        notebooks[name] = notebook
    files, left_out = _files_for_the_kernel(facts, verdict, listing.files)
    unreadable_time = _timestamp_problem(files.get(TIMESTAMP_FILE))
    if unreadable_time:
        return Plan(Record(student, assignment, Status.FAILED, unreadable_time, list(verdict.problems),
                           fingerprint=fingerprint))
    flags, held_notebooks = _scan(facts, assignment, notebooks, files)
    job = make_job(student=student, assignment=assignment, bundle=bundles.digest(assignment), notebooks=notebooks,
                   files=files, settings=settings, partial_credit_cells=facts.partial_credit[assignment],
                   guard_torch=facts.uses_torch[assignment],
                   recorders={name: facts.recorders[(assignment, name)] for name in notebooks
                              if facts.recorders[(assignment, name)]})
    # A notebook triage could not use scores zero and names the folder's status; the rest is graded.
    status, detail = verdict.unusable[0] if verdict.unusable else (Status.GRADED, "")
    if verdict.unusable:
        detail += ": scored zero; the assignment's other notebooks were graded"
    return Plan(Record(student, assignment, status, detail, problems=[*verdict.problems, *repairs, *left_out],
                       flags=flags, held_notebooks=held_notebooks, fingerprint=fingerprint, why_graded=why), job)


def _why_graded(assignment: str, previous: Record | None, fingerprint: str, force: bool) -> str:
    """Why a folder is graded (again), in words for the report."""
    if previous is None:
        return "not graded before"
    if not previous.fingerprint:
        return "its last grading did not finish"
    if force:
        return "graded again with --force"
    files_before, _, source_before = previous.fingerprint.rpartition(" ")
    files_now, _, source_now = fingerprint.rpartition(" ")
    if files_before != files_now:
        return "the submission changed"
    if source_before != source_now:
        return f"source/{assignment} changed since (the gradebook's tests were updated)"
    return "the student is in the gradebook now"  # the one record kept with its fingerprint


def reference_jobs(facts: CourseFacts, assignments: set[str], bundles: Bundles,
                   settings: JobSettings) -> list[ReferenceJob]:
    """A job recording the second witness's references for each of ``assignments`` whose
    notebooks declare recorders."""
    jobs = []
    for assignment in sorted(assignments):
        recorders = {name: found for (owner, name), found in facts.recorders.items()
                     if owner == assignment and found}
        notebooks = {name: witness_runs.witness_notebook(facts.sources[(assignment, name)], found)
                     for name, found in recorders.items()}
        if notebooks:
            jobs.append(ReferenceJob(assignment, bundles.digest(assignment), settings, notebooks, recorders,
                                     facts.uses_torch[assignment]))
    return jobs


def _files_for_the_kernel(facts: CourseFacts, verdict: Triage,
                          present: tuple[str, ...]) -> tuple[dict[str, bytes], list[str]]:
    """The submission's files the notebook may use besides itself: those the assignment
    declares for students (``Autograde.exclude_overwriting``), and nbgrader's record of
    the submission time (``timestamp.txt``, which nbgrader's collection writes); and a
    note naming the others, which are left out: the kernel cannot import or read them.
    A released course file handed back unchanged is no news: nbgrader puts the
    instructor's copy in its place anyway; nor is the secret nbgrader's exchange writes
    beside every submission (kept from the kernel, read for the feedback alone)."""
    wanted = {*facts.student_files[verdict.assignment], TIMESTAMP_FILE}
    released = facts.released_files[verdict.assignment]
    files, left_out = {}, []
    for name in present:
        if name in wanted:
            files[name] = read_file(verdict.folder, name)
        elif not (name.endswith(".ipynb") and "/" not in name) and name != SUBMISSION_SECRET_FILE \
                and not _unchanged(verdict.folder, name, released):
            left_out.append(name)
    if not left_out:
        return files, []
    return files, ["files the assignment does not declare, not given to the notebook: "
                   + ", ".join(left_out[:10]) + (" ..." if len(left_out) > 10 else "")]


def _released_files(folder: Path) -> dict[str, Path]:
    """The files of an assignment's release besides its top-level notebooks, by their path
    in it (links left out: read only when a submission has a file of that name)."""
    if not folder.is_dir():
        return {}
    return {path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.is_symlink() and not (path.suffix == ".ipynb" and path.parent == folder)}


def _unchanged(folder: Path, name: str, released: dict[str, Path]) -> bool:
    """Whether the submission's file is the released one, byte for byte."""
    if name not in released:
        return False
    try:
        size = released[name].stat().st_size
        return size <= MAX_FILE_BYTES and read_file(folder, name) == released[name].read_bytes()
    except OSError:
        return False


def _timestamp_problem(content: bytes | None) -> str | None:
    """Why nbgrader cannot read the submission time in ``timestamp.txt`` (it fails such a
    submission), or None; an empty file is no time at all, as nbgrader reads it."""
    if content is not None and len(content) > TIMESTAMP_BYTES:
        return f"{TIMESTAMP_FILE} holds {len(content)} bytes, more than a time needs"
    try:
        text = (content or b"").decode("utf-8").strip()
        if text:
            parse_utc(text)
    except (ValueError, OverflowError):  # UnicodeDecodeError is a ValueError
        return f"{TIMESTAMP_FILE} is not a time nbgrader can read: {(content or b'')[:60]!r}"
    return None


def _scan(facts: CourseFacts, assignment: str, notebooks: dict[str, nbformat.NotebookNode],
          files: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """The policy scan's findings in the student's cells and Python files, and the
    notebooks they hold (a declared file may be imported by any of them)."""
    instructor = facts.instructor[assignment]
    own_modules = {Path(name).stem for name in facts.student_files[assignment] if name.endswith(".py")}
    flags, held = [], []
    for name, notebook in notebooks.items():
        found = facts.policy.findings(notebook, instructor, own_modules)
        flags += [f"{name}: {line}" for line in found] if len(notebooks) > 1 else found
        held += [name] if found else []
    for name, content in files.items():
        if name.endswith(".py"):
            found = facts.policy.file_findings(name, content, instructor, own_modules)
            flags += found
            held = list(notebooks) if found else held
    return flags, held


def _uses_torch(course: Course, assignment: str, source: nbformat.NotebookNode) -> bool:
    """Whether the kernel's guard must keep torch as the tests found it: the course says so
    (``c.GuardedExecute.guard_torch``), or the instructor's notebooks, the files beside them
    or the test cells the gradebook holds (nbgrader grades with those) name torch, a library
    of its family, or this package (whose checks use torch)."""
    declared = course.config.GuardedExecute.get("guard_torch")
    if isinstance(declared, bool):
        return declared
    texts = [cell.source for cell in source.cells if cell.cell_type == "code"]
    texts += [start.decode("utf-8", "replace") for start in course.instructor_files[assignment].values()]
    texts += gradebook.source_cells(course, assignment)
    return any(TORCH_WORDS.search(text) for text in texts)


def _partial_credit_cells(source: nbformat.NotebookNode) -> tuple[str, ...]:
    """Test cells the instructor marked ``"autograder": {"partial_credit": true}``."""
    return tuple(grade_id(cell) for cell in source.cells
                 if cell.metadata.get("autograder", {}).get("partial_credit") and grade_id(cell))
