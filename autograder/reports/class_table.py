"""The report's table: every student against every assignment, with each score, what is not
plain about it, a link to each feedback page, and each student's total.

Scores are the exports' (``class_grades``: the gradebook, less late penalties), so the
report and what is uploaded agree, and a score a person changed in the formgrader shows.
What happened to each folder is its record. Every folder appears: those of no assignment
of the gradebook in a column of their own. A folder without a feedback page for each of
its notebooks is listed with why.

Student ids and notebook names are folder and file names a student chose: a link is made
only to a page found on disk, from names that are one path segment each, and every segment
of it is URL-quoted (the page escapes what it shows).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from autograder.results.class_grades import Standing
from autograder.results.class_grades import ClassGrades
from autograder.reports.outcomes import FINAL, outcome
from autograder.results.records import Record
from autograder.status import Status
from autograder.intake.triage import missing_notebook

NO_SUBMISSION = "no submission"


@dataclass(frozen=True)
class FeedbackPage:
    notebook: str  # the notebook's file name
    href: str  # relative to the report, every segment URL-quoted


@dataclass(frozen=True)
class TableCell:
    """One student on one assignment."""

    submitted: bool  # the student handed in a folder for it (it has a record)
    score: float | None  # None: nothing to report yet (not due and not graded)
    max_score: float
    labels: list[str]  # what is not plain about it (its status, late, not final); [] when simply graded
    note: str  # the record's detail and notes, for a TA who points at the cell
    pages: list[FeedbackPage]


@dataclass(frozen=True)
class Row:
    student: str
    cells: list[TableCell]  # one per assignment of ``ClassTable.assignments``
    elsewhere: list[Record]  # folders of no assignment of the gradebook
    total: float
    max_total: float


@dataclass(frozen=True)
class WithoutFeedback:
    """A folder missing the feedback page of some notebook, and why."""

    record: Record
    notebooks: list[str]  # those without a page ([] for a folder of no assignment)
    why: str


@dataclass(frozen=True)
class ClassTable:
    assignments: list[str]
    rows: list[Row]
    without_feedback: list[WithoutFeedback]


def class_table(grades: ClassGrades, records: list[Record], notebooks: dict[str, list[str]], feedback: Path,
                report_folder: Path) -> ClassTable:
    """The table of ``grades`` and ``records``; ``notebooks``: the notebook names of each
    assignment of ``grades``; ``feedback``: the course's feedback folder
    (``feedback/STUDENT/ASSIGNMENT/NOTEBOOK.html``), linked from ``report_folder``."""
    assignments = [assignment.name for assignment in grades.assignments]
    max_total = sum(assignment.max_score for assignment in grades.assignments)
    by_key = {(record.student, record.assignment): record for record in records}
    students = sorted({student.id for student in grades.students} | {record.student for record in records})
    rows, without_feedback = [], []
    for student in students:
        cells = []
        for assignment in grades.assignments:
            record = by_key.get((student, assignment.name))
            grade = grades.standings.get((student, assignment.name))
            names = notebooks[assignment.name]
            pages = _pages(feedback, report_folder, student, assignment.name, names)
            cells.append(TableCell(record is not None, grade.score if grade else None, assignment.max_score,
                              _labels(record, grade), _note(record, grade), pages))
            unpaged = [name for name in names if name not in {page.notebook for page in pages}]
            if record and unpaged:
                without_feedback.append(WithoutFeedback(record, unpaged, _why_no_feedback(record, unpaged)))
        elsewhere = [record for record in records if record.student == student and record.assignment not in assignments]
        without_feedback += [WithoutFeedback(record, [], _why_no_feedback(record, [])) for record in elsewhere]
        rows.append(Row(student, cells, elsewhere, sum(cell.score or 0.0 for cell in cells), max_total))
    return ClassTable(assignments, rows, without_feedback)


def _pages(feedback: Path, report_folder: Path, student: str, assignment: str,
           notebooks: list[str]) -> list[FeedbackPage]:
    """The feedback pages on disk of a student's assignment, each as a link from the report."""
    if not all(_one_segment(name) for name in (student, assignment)):
        return []
    base = [quote(part, safe="") for part in Path(os.path.relpath(feedback, report_folder)).parts]
    pages = []
    for notebook in notebooks:
        page = Path(notebook).with_suffix(".html").name
        path = feedback / student / assignment / page
        if path.is_file() and not path.is_symlink():
            pages.append(FeedbackPage(notebook, "/".join([*base, *(quote(part, safe="") for part in
                                                                     (student, assignment, page))])))
    return pages


def _one_segment(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def _labels(record: Record | None, grade: Standing | None) -> list[str]:
    """What a TA must see in the cell besides the score: the status (none when simply
    graded), notes, lateness, a score not final for another reason, or no folder at all."""
    if record is None:
        labels = ["no record of grading" if grade and grade.graded
                  else "not graded yet" if grade and grade.not_final else NO_SUBMISSION]
    elif record.status is Status.GRADED:
        labels = ["with notes"] if record.problems else []
    else:
        labels = [record.status.value]
    if grade and grade.late:
        labels.append("late")
    if grade and grade.not_final and record and outcome(record) in FINAL:
        labels.append("not final")
    return labels


def _note(record: Record | None, grade: Standing | None) -> str:
    """The details behind the labels, for a TA who points at the cell."""
    parts = [record.detail, *record.problems] if record else []
    return "; ".join(filter(None, [*parts, grade.not_final if grade else ""]))


def _why_no_feedback(record: Record, notebooks: list[str]) -> str:
    """Why a folder has no page for ``notebooks``: its status says, or the notebooks were
    missing from it, but for a folder graded and yet without them."""
    missing = [problem for name in notebooks for problem in record.problems if problem == missing_notebook(name)]
    if notebooks and len(missing) == len(notebooks):
        return "; ".join(missing)
    if record.status is Status.GRADED:
        return ("graded, yet no page is in feedback/: it was removed since, or could not be made "
                f"(regrade with --force --student {record.student})")
    return f"{record.status.value}: {record.detail}" if record.detail else record.status.value
