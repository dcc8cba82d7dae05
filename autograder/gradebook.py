"""The course's gradebook (nbgrader's ``gradebook.db``): the one module that writes it.

An executed notebook goes through nbgrader's own autograde again with execution switched
off, so nbgrader itself copies it into ``autograded/`` and saves its scores. A submission
that never ran gets zero on every grade cell through nbgrader's gradebook API, as nbgrader
does for a missing notebook. A notebook held for review is marked for manual grading, so
that nbgrader's formgrader lists it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from nbgrader.api import Grade, Gradebook, MissingEntry, SubmittedNotebook

from autograder.course import Course
from autograder.nbgrader_api import autograde, generate_assignment


def register_assignments(course: Course) -> None:
    """Make sure the gradebook knows every assignment (nbgrader generate_assignment)."""
    known = set()
    if course.gradebook_file.exists():
        with Gradebook(course.gradebook_url) as gradebook:
            for name in course.assignments():
                try:
                    gradebook.find_assignment(name)
                    known.add(name)
                except MissingEntry:
                    pass
    for name in course.assignments():
        if name not in known:
            generate_assignment(course.root, name)


def merge_executed(course: Course, assignment: str, student: str, executed_root: Path) -> None:
    """Save the scores of ``executed_root/STUDENT/ASSIGNMENT`` (an autograded folder)."""
    autograde(course.root, assignment, student, {
        "CourseDirectory": {"submitted_directory": str(executed_root)},
        "Execute": {"enabled": False},
        "ClearOutput": {"enabled": False},
    })


def record_zero(course: Course, assignment: str, student: str) -> None:
    """Zero on every grade cell, and no stale autograded notebook left behind."""
    stale = course.folder("autograded", student, assignment)
    if stale.is_dir() and not stale.is_symlink():
        shutil.rmtree(stale)
    with Gradebook(course.gradebook_url) as gradebook:
        gradebook.update_or_create_student(student)
        submission = gradebook.update_or_create_submission(assignment, student)
        for grade in _grades(submission.notebooks):
            grade.auto_score = 0
            grade.manual_score = None
            grade.needs_manual_grade = False
        gradebook.db.commit()


def hold_for_review(course: Course, assignment: str, student: str) -> None:
    """Mark every grade of a submission for manual grading; the autograde scores stay as
    they are until a person grades it."""
    with Gradebook(course.gradebook_url) as gradebook:
        for grade in _grades(gradebook.find_submission(assignment, student).notebooks):
            grade.needs_manual_grade = True
        gradebook.db.commit()


def score(course: Course, assignment: str, student: str) -> tuple[float, float]:
    with Gradebook(course.gradebook_url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return submission.score, submission.max_score


def cell_scores(course: Course) -> dict[tuple[str, str, str], float]:
    """(student, assignment, test cell) -> score, for every graded code cell in the gradebook."""
    with Gradebook(course.gradebook_url) as gradebook:
        return {(submission.student.id, submission.assignment.name, grade.name): grade.score
                for assignment in gradebook.assignments
                for submission in assignment.submissions
                for grade in _grades(submission.notebooks) if grade.cell_type == "code"}


def _grades(notebooks: list[SubmittedNotebook]) -> Iterator[Grade]:
    for notebook in notebooks:
        yield from notebook.grades
