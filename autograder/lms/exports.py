"""What goes back to the learning platform, written by ``python -m autograder export`` into
the course's ``grading/exports/`` (replaced whole on every export), from the gradebook and
what the LMS import kept (the table itself is ``class_grades``):

- the grade upload of the course's LMS format (``formats``: Canvas' gradebook CSV,
  Moodle's grading worksheets), in which a score that is not final, or that there is
  nothing to report for yet, is blank;
- ``scores.csv``: one row per student and assignment, every score with its max, the
  platform's id of the student (for a platform whose ids are each assignment's own, that
  assignment's), whether it was graded or late, and why it is not final;
- the feedback archives (``feedback_archives``), named for the format's bulk upload.

CSV files are written here, through ``csv_files.write_csv``: every field quoted, no cell a
formula. A format only lays out their rows.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from autograder.course import Course
from autograder.lms.feedback_archives import write_feedback_archives
from autograder.lms.formats import LmsFormat, chosen_format
from autograder.results.class_grades import ClassGrades, Student, class_grades
from autograder.results.lms_records import LmsRecords
from autograder.results.records import Records
from autograder.csv_files import write_csv

SCORES_COLUMNS = ("student_id", "lms_user_id", "assignment", "graded", "late", "score", "max_score", "not_final")


@dataclass(frozen=True)
class Exported:
    """The files an export wrote, and what a TA must know before uploading them."""

    written: list[Path]
    not_final: list[str]  # STUDENT/ASSIGNMENT: why, for every score withheld from students
    left_out: list[str]  # grade rows and feedback pages left out of the uploads, with why


def write_exports(root: Path, now: datetime | None = None, chosen: Sequence[str] = (),
                  platform: LmsFormat | None = None) -> Exported:
    """Every export of the course in ``root`` for ``platform`` (default: the course's
    format), of the ``chosen`` assignments or else of those handed out; ``now`` (naive
    UTC) decides which assignments are due (default: now)."""
    course = Course(root)
    if course.gradebook_file is None or not course.gradebook_file.is_file():
        raise SystemExit(f"{root} has no gradebook to export yet: grade it first (python -m autograder grade)")
    platform = platform or chosen_format(course.config)
    lms, records = LmsRecords.of(course.root), Records(course.grader_folder.records)
    grades = class_grades(course, lms, records, now or datetime.now(timezone.utc).replace(tzinfo=None), chosen)
    tables, left_out = platform.grade_tables(course, grades, lms)
    into = course.grader_folder.exports
    if into.is_symlink() or into.is_file():
        into.unlink()
    elif into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for table in tables:
        write_csv(into / table.file_name, table.header, table.rows)
    write_scores_csv(into / "scores.csv", grades, lms, platform.ids_per_assignment)
    archives = write_feedback_archives(course, grades, lms, into, platform)
    return Exported([*(into / table.file_name for table in tables), into / "scores.csv", *archives.written],
                    grades.not_final(), [*left_out, *archives.left_out])


def write_scores_csv(path: Path, grades: ClassGrades, lms: LmsRecords, ids_per_assignment: bool) -> None:
    rows = []
    for student in grades.students:
        for assignment in grades.assignments:
            cell = grades.standings[(student.id, assignment.name)]
            user_id = _user_id(student, assignment.name, lms) if ids_per_assignment else student.lms_user_id
            rows.append((student.id, user_id, assignment.name, _yes(cell.graded), _yes(cell.late),
                         cell.score, assignment.max_score, cell.not_final))
    write_csv(path, SCORES_COLUMNS, rows)


def _user_id(student: Student, assignment: str, lms: LmsRecords) -> str:
    """The platform's id of ``student`` in ``assignment`` alone ("" where no import of it brought them)."""
    kept = lms.get(student.id, assignment)
    return kept.user_id if kept else ""


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
