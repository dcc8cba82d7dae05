"""Bring a finished job's results into the course: the one place the gradebook is written.

An executed notebook goes through nbgrader's own autograde again with execution switched
off, so nbgrader itself copies it into ``autograded/`` and saves its scores. A submission
that never ran gets zero on every grade cell through nbgrader's gradebook API, as nbgrader
does for a missing notebook.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.grading.nbgrader_run import autograde, gradebook_url


def merge_executed(course: Path, assignment: str, student: str, executed_root: Path) -> None:
    """Save the scores of ``executed_root/STUDENT/ASSIGNMENT`` (an autograded folder)."""
    autograde(course, assignment, student, {
        "CourseDirectory": {"submitted_directory": str(executed_root)},
        "Execute": {"enabled": False},
        "ClearOutput": {"enabled": False},
    })


def record_zero(course: Path, assignment: str, student: str) -> None:
    """Zero on every grade cell, and no stale autograded notebook left behind."""
    stale = course / "autograded" / student / assignment
    if stale.exists():
        shutil.rmtree(stale)
    with Gradebook(gradebook_url(course)) as gradebook:
        gradebook.update_or_create_student(student)
        submission = gradebook.update_or_create_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.manual_score = None
                grade.needs_manual_grade = False
        gradebook.db.commit()


def hold_for_review(course: Path, assignment: str, student: str) -> None:
    """Mark every grade of a submission for manual grading, so that nbgrader's formgrader
    lists it; the autograde scores stay as they are until a person grades it."""
    with Gradebook(gradebook_url(course)) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.needs_manual_grade = True
        gradebook.db.commit()


def score(course: Path, assignment: str, student: str) -> tuple[float, float]:
    with Gradebook(gradebook_url(course)) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return submission.score, submission.max_score


def cell_scores(course: Path) -> dict[tuple[str, str, str], float]:
    """(student, assignment, test cell) -> score, for every graded code cell in the gradebook."""
    with Gradebook(gradebook_url(course)) as gradebook:
        return {
            (submission.student.id, submission.assignment.name, grade.name): grade.score
            for assignment in gradebook.assignments
            for submission in assignment.submissions
            for notebook in submission.notebooks
            for grade in notebook.grades
            if grade.cell_type == "code"
        }
