"""The plan for one submission folder, made before any student code runs: either its final
record (refused, missing, unchanged since it was graded, ...) or a grading job, with
what triage, repair and the policy scan found on the way.

Each stage returns its piece (triage its verdict, repair its notes, the file selection
its files and notes, the scan its flags) and the plan is put together once, here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.course import Course, grade_id
from autograder.grading.folders import SubmissionFolder
from autograder.grading.jobs import GradingJob, JobSettings, prepare_job
from autograder.grading.policy import Assignment, PolicyScan
from autograder.grading.records import Record, Records
from autograder.grading.repair import repair
from autograder.grading.status import Status
from autograder.grading.submission_files import FolderRefused, list_folder, read_file
from autograder.grading.triage import Triage, triage


@dataclass(frozen=True)
class CourseFacts:
    """What planning needs to know of a course, read once per run."""

    course: Course
    assignments: list[str]
    cells: dict[str, set[str]]  # assignment -> its grade_ids
    instructor: dict[str, Assignment]  # assignment -> what the policy scan needs of its source
    releases: dict[str, nbformat.NotebookNode]
    partial_credit: dict[str, tuple[str, ...]]  # assignment -> test cells scored by their output
    student_files: dict[str, list[str]]  # assignment -> files students may submit
    policy: PolicyScan

    @classmethod
    def read(cls, course: Course) -> CourseFacts:
        names = course.assignments()
        sources = {name: course.read("source", name) for name in names}
        declared = course.config.Autograde.get("exclude_overwriting", {})
        return cls(
            course=course,
            assignments=names,
            cells={name: {grade_id(cell) for cell in source.cells} - {None} for name, source in sources.items()},
            instructor={name: Assignment(source) for name, source in sources.items()},
            releases={name: course.read("release", name) for name in names},
            partial_credit={name: _partial_credit_cells(source) for name, source in sources.items()},
            student_files={name: list(declared.get(name, [])) for name in names},
            policy=PolicyScan(config=course.config),
        )


@dataclass(frozen=True)
class Plan:
    """One folder's plan: a job to run, or (``job`` None) its final record."""

    record: Record  # final, or the start of the record the job's result completes
    job: GradingJob | None = None


def plan_folder(facts: CourseFacts, folder: SubmissionFolder, records: Records, force: bool,
                gradebook_template: Path, workdir: Path, settings: JobSettings) -> Plan | None:
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
    if previous and previous.fingerprint == listing.fingerprint and not force:
        return None
    if assignment not in facts.assignments:
        return Plan(Record(student, assignment, Status.UNKNOWN_ASSIGNMENT,
                           f"the course has {', '.join(facts.assignments)}", fingerprint=listing.fingerprint))
    verdict = triage(folder.path, listing, assignment, facts.cells, facts.course.notebook_name(assignment))
    if verdict.status is not None:
        return Plan(Record(student, assignment, verdict.status, verdict.detail, list(verdict.problems),
                           fingerprint=listing.fingerprint))
    notebook = nbformat.reads(verdict.notebook_bytes.decode("utf-8"), as_version=4)
    repairs = repair(notebook, facts.releases[assignment])
    files, left_out = _files_for_the_kernel(facts, verdict, listing.files)
    flags = _scan(facts, assignment, notebook, files)
    job = prepare_job(facts.course, workdir, student=student, assignment=assignment, notebook=notebook, files=files,
                      gradebook_template=gradebook_template, settings=settings,
                      partial_credit_cells=facts.partial_credit[assignment])
    return Plan(Record(student, assignment, Status.GRADED, problems=[*verdict.problems, *repairs, *left_out],
                       flags=flags, fingerprint=listing.fingerprint), job)


def _files_for_the_kernel(facts: CourseFacts, verdict: Triage,
                          present: tuple[str, ...]) -> tuple[dict[str, bytes], list[str]]:
    """The submission's files the notebook may use besides itself: those the assignment
    declares for students (``Autograde.exclude_overwriting``); and a note naming the
    others, which are left out: the kernel cannot import or read them. (nbgrader's
    ``timestamp.txt`` is left out too: a student can write one, to dodge a late penalty.)"""
    wanted = set(facts.student_files[verdict.assignment])
    files, left_out = {}, []
    for name in present:
        if name in wanted:
            files[name] = read_file(verdict.folder, name)
        elif not (name.endswith(".ipynb") and "/" not in name):
            left_out.append(name)
    if not left_out:
        return files, []
    return files, ["files the assignment does not declare, not given to the notebook: "
                   + ", ".join(left_out[:10]) + (" ..." if len(left_out) > 10 else "")]


def _scan(facts: CourseFacts, assignment: str, notebook: nbformat.NotebookNode, files: dict[str, bytes]) -> list[str]:
    """The policy scan's findings in the student's cells and Python files."""
    instructor = facts.instructor[assignment]
    own_modules = {Path(name).stem for name in facts.student_files[assignment] if name.endswith(".py")}
    flags = facts.policy.findings(notebook, instructor, own_modules)
    for name, content in files.items():
        if name.endswith(".py"):
            flags += facts.policy.file_findings(name, content.decode("utf-8", "replace"), instructor, own_modules)
    return flags


def _partial_credit_cells(source: nbformat.NotebookNode) -> tuple[str, ...]:
    """Test cells the instructor marked ``"autograder": {"partial_credit": true}``."""
    return tuple(grade_id(cell) for cell in source.cells
                 if cell.metadata.get("autograder", {}).get("partial_credit") and grade_id(cell))
