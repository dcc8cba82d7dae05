"""What goes back to the learning platform, written by ``python -m autograder export`` into
the course's ``grading/exports/`` (replaced whole on every export), from the gradebook and
what the LMS import kept (the table itself is ``class_grades``):

- ``canvas-gradebook.csv``, in the form Canvas' gradebook import reads: the columns
  ``Student``, ``ID`` (the platform's user id, which Canvas matches first),
  ``SIS User ID``, ``SIS Login ID`` (the student's id in the course, which Canvas matches
  when the ID is blank), ``Section``, then one per assignment, named as in ``source/`` or
  ``NAME (CANVAS_ID)`` where ``c.CanvasExport.assignment_ids`` gives its Canvas id (Canvas
  then finds it by id; by name, a column no assignment has the name of becomes a new
  assignment); its second row is ``Points Possible``. A score that is not final, or that
  there is nothing to report for yet, is blank;
- ``scores.csv``: one row per student and assignment, every score with its max, whether it
  was graded or late, and why it is not final;
- the feedback archives (``feedback_archives``).

CSV files are written through ``tables.write_csv``: every field quoted, no cell a formula.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from traitlets import Dict, Int, TraitError, Unicode
from traitlets.config import Configurable

from autograder.course import Course
from autograder.grading.class_grades import Cell, ClassGrades, class_grades
from autograder.grading.feedback_archives import write_feedback_archives
from autograder.grading.lms_records import LmsRecords
from autograder.grading.records import RECORDS_FILE, Records
from autograder.grading.tables import write_csv

CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
SCORES_COLUMNS = ("student_id", "lms_user_id", "assignment", "graded", "late", "score", "max_score", "not_final")


class CanvasExport(Configurable):
    """How the Canvas gradebook CSV names the course's assignments."""

    assignment_ids = Dict(key_trait=Unicode(), value_trait=Int(), help=(
        "Each assignment's id in Canvas (the number in its address), e.g. {'01-inplace-basics': 123456}: "
        "its column is then 'NAME (ID)', which Canvas matches by id")).tag(config=True)


@dataclass(frozen=True)
class Exported:
    """The files an export wrote, and what a TA must know before uploading them."""

    written: list[Path]
    not_final: list[str]  # STUDENT/ASSIGNMENT: why, for every score withheld from students
    left_out: list[str]  # feedback pages left out of an archive, with why


def write_exports(root: Path, now: datetime | None = None, chosen: Sequence[str] = ()) -> Exported:
    """Every export of the course in ``root``, of the ``chosen`` assignments or else of
    those handed out; ``now`` (naive UTC) decides which assignments are due (default: now)."""
    course = Course(root)
    if course.gradebook_file is None or not course.gradebook_file.is_file():
        raise SystemExit(f"{root} has no gradebook to export yet: grade it first (python -m autograder grade)")
    try:
        canvas_ids = CanvasExport(config=course.config).assignment_ids
    except TraitError as problem:
        raise SystemExit(f"c.CanvasExport.assignment_ids cannot be used: {problem}") from None
    lms, records = LmsRecords.of(course.root), Records(course.root / RECORDS_FILE)
    grades = class_grades(course, lms, records, now or datetime.now(timezone.utc).replace(tzinfo=None), chosen)
    into = course.root / "grading" / "exports"
    if into.is_symlink() or into.is_file():
        into.unlink()
    elif into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    write_canvas_csv(into / "canvas-gradebook.csv", grades, canvas_ids)
    write_scores_csv(into / "scores.csv", grades)
    archives = write_feedback_archives(course, grades, lms, into)
    return Exported([into / "canvas-gradebook.csv", into / "scores.csv", *archives.written], grades.not_final(),
                    archives.left_out)


def write_canvas_csv(path: Path, grades: ClassGrades, canvas_ids: dict[str, int]) -> None:
    header = [*CANVAS_STUDENT_COLUMNS, *(f"{assignment.name} ({canvas_ids[assignment.name]})"
                                         if assignment.name in canvas_ids else assignment.name
                                         for assignment in grades.assignments)]
    points = [POINTS_POSSIBLE, "", "", "", "", *(assignment.max_score for assignment in grades.assignments)]
    rows = [[student.name, student.lms_user_id, "", student.id, "",
             *(_uploadable(grades.cells[(student.id, assignment.name)]) for assignment in grades.assignments)]
            for student in grades.students]
    write_csv(path, header, [points, *rows])


def write_scores_csv(path: Path, grades: ClassGrades) -> None:
    rows = []
    for student in grades.students:
        for assignment in grades.assignments:
            cell = grades.cells[(student.id, assignment.name)]
            rows.append((student.id, student.lms_user_id, assignment.name, _yes(cell.graded), _yes(cell.late),
                         cell.score, assignment.max_score, cell.not_final))
    write_csv(path, SCORES_COLUMNS, rows)


def _uploadable(cell: Cell) -> float | None:
    """A cell's score as students may see it: none while it is not final."""
    return None if cell.not_final else cell.score


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
