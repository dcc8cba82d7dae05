"""Every student of a course against every assignment: the table the exports write.

Students are the gradebook's and those an LMS import brought (``lms_records``); assignments
are the gradebook's, in course order: every assignment of ``source/`` (each grading run
registers them all) and any the gradebook still holds besides. A graded submission scores
as in nbgrader's own CSV export: its points less its late penalty, never below zero. A
student with no submission scores 0 once the assignment is due (its due date has passed,
or, when it has none, the gradebook holds someone's submission of it), as nbgrader's export
counts it; before that there is nothing to report (``None``), so that an assignment not
yet handed in never uploads a column of zeros.

A score is **not final** while nbgrader says the submission needs manual grading (held for
review, not graded, or cells a person grades) or while an LMS import brought a submission
the gradebook does not hold yet (not graded since): the exports withhold those from what
students see.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.grading.lms_records import LmsRecords

NEEDS_A_PERSON = "needs manual grading (held for review, not graded, or cells a person grades)"
NOT_GRADED_YET = "imported from the LMS but not in the gradebook: not graded yet, or refused (grading/report.html)"


@dataclass(frozen=True)
class Student:
    id: str
    name: str  # "Last, First", as Canvas lists students; the id when the gradebook has no name
    lms_user_id: str  # "" when no LMS import recorded one


@dataclass(frozen=True)
class Assignment:
    name: str
    max_score: float


@dataclass(frozen=True)
class Cell:
    """One student's standing on one assignment."""

    graded: bool  # the gradebook holds a submission
    score: float | None  # None: not due and not graded, nothing to report
    late: bool  # the LMS marked it late, or nbgrader's timestamp is past the due date
    not_final: str = ""  # why the score must not reach students yet; "" when it may


@dataclass(frozen=True)
class ClassGrades:
    students: list[Student]
    assignments: list[Assignment]
    cells: dict[tuple[str, str], Cell]  # (student id, assignment) -> cell

    def not_final(self) -> list[str]:
        """``STUDENT/ASSIGNMENT: why`` for every score the exports withhold."""
        return [f"{student}/{assignment}: {cell.not_final}"
                for (student, assignment), cell in sorted(self.cells.items()) if cell.not_final]


def class_grades(course: Course, lms: LmsRecords, now: datetime) -> ClassGrades:
    """The course's table, with ``now`` (naive UTC, as nbgrader keeps due dates) deciding
    which assignments are due."""
    order = {name: index for index, name in enumerate(course.assignments())}
    with Gradebook(course.gradebook_url) as gradebook:
        unknown = [name for name in order if name not in {assignment.name for assignment in gradebook.assignments}]
        if unknown:
            raise SystemExit(f"the gradebook does not hold {', '.join(unknown)} of source/ yet: grade the course "
                             "first (python -m autograder grade registers every assignment)")
        known = {student.id: student for student in gradebook.students}
        students = [Student(student, _name(known.get(student)) or student, lms.user_id(student))
                    for student in sorted(set(known) | lms.students())]
        assignments, cells = [], {}
        for assignment in sorted(gradebook.assignments, key=lambda each: (order.get(each.name, len(order)), each.name)):
            assignments.append(Assignment(assignment.name, assignment.max_score))
            submissions = {submission.student.id: submission for submission in assignment.submissions}
            due = assignment.duedate <= now if assignment.duedate else bool(submissions)
            for student in students:
                kept = lms.get(student.id, assignment.name)
                submission = submissions.get(student.id)
                if submission is not None:
                    cells[(student.id, assignment.name)] = Cell(
                        True, max(0.0, submission.score - submission.late_submission_penalty),
                        bool(kept and kept.late) or submission.total_seconds_late > 0,
                        NEEDS_A_PERSON if submission.needs_manual_grade else "")
                elif kept is not None:
                    cells[(student.id, assignment.name)] = Cell(False, None, kept.late, NOT_GRADED_YET)
                else:
                    cells[(student.id, assignment.name)] = Cell(False, 0.0 if due else None, False)
    return ClassGrades(students, assignments, cells)


def _name(student) -> str:
    """A gradebook student's name as Canvas lists it ("Last, First"), or "" without one."""
    if student is None:
        return ""
    return ", ".join(part for part in (student.last_name, student.first_name) if part)
