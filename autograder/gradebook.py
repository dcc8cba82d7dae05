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
    """Make sure the gradebook knows every assignment and its notebooks (nbgrader
    generate_assignment; an assignment added with ``nbgrader db assignment add`` has none yet)."""
    registered = set()
    if course.gradebook_file.exists():
        with Gradebook(course.gradebook_url) as gradebook:
            for name in course.assignments():
                try:
                    notebooks = {notebook.name for notebook in gradebook.find_assignment(name).notebooks}
                except MissingEntry:
                    continue
                if notebooks == {Path(file).stem for file in course.notebook_names(name)}:
                    registered.add(name)
    for name in course.assignments():
        if name not in registered:
            generate_assignment(course.root, name)


def source_cells(course: Course, assignment: str) -> list[str]:
    """The instructor's cells of the assignment as the gradebook holds them (nbgrader puts
    these in place of the submitted ones); none when it does not know the assignment."""
    if not course.gradebook_file.exists():
        return []
    with Gradebook(course.gradebook_url) as gradebook:
        try:
            notebooks = gradebook.find_assignment(assignment).notebooks
        except MissingEntry:
            return []
        return [cell.source for notebook in notebooks for cell in notebook.source_cells]


def students(course: Course) -> set[str]:
    """The ids of the students in the gradebook."""
    with Gradebook(course.gradebook_url) as gradebook:
        return {student.id for student in gradebook.students}


def merge_executed(course: Course, assignment: str, student: str, executed_root: Path) -> None:
    """Save the scores of ``executed_root/STUDENT/ASSIGNMENT`` (an autograded folder)."""
    autograde(course.root, assignment, student, {
        "CourseDirectory": {"submitted_directory": str(executed_root)},
        "Execute": {"enabled": False},
        "ClearOutput": {"enabled": False},
    })


def record_zero(course: Course, assignment: str, student: str, flagged: bool = False) -> None:
    """Zero on every grade cell, and no stale autograded notebook left behind; ``flagged``:
    left ungraded and marked for manual grading instead, as nbgrader leaves a submission
    it failed on (it scores zero until a person grades it)."""
    stale = course.folder("autograded", student, assignment)
    if stale.is_dir() and not stale.is_symlink():
        shutil.rmtree(stale)
    with Gradebook(course.gradebook_url) as gradebook:
        gradebook.update_or_create_student(student)
        submission = gradebook.update_or_create_submission(assignment, student)
        for grade in _grades(submission.notebooks):
            grade.auto_score = None if flagged else 0
            grade.manual_score = None
            grade.needs_manual_grade = flagged
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


def cell_scores(course: Course) -> dict[tuple[str, str, str, str], float]:
    """(student, assignment, notebook, test cell) -> score, for every graded code cell in the gradebook."""
    with Gradebook(course.gradebook_url) as gradebook:
        return {(submission.student.id, submission.assignment.name, notebook.name, grade.name): grade.score
                for assignment in gradebook.assignments
                for submission in assignment.submissions
                for notebook in submission.notebooks
                for grade in notebook.grades if grade.cell_type == "code"}


def _grades(notebooks: list[SubmittedNotebook]) -> Iterator[Grade]:
    for notebook in notebooks:
        yield from notebook.grades
