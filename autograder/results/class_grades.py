"""Every student of a course against every assignment: the table the exports write.

Students are the gradebook's and those an LMS import brought (``lms_records``); assignments
are the gradebook's that were handed out, in course order (every assignment of ``source/``
is registered by each grading run, and any the gradebook still holds besides; one nobody
has submitted and not yet due is left out), or those the TA names. A graded submission scores
as in nbgrader's own CSV export: its points less its late penalty, never below zero. A
student with no submission scores 0 once the assignment's due date has passed; before
that, and for an assignment without a due date, there is nothing to report (``None``), so
that grading the early submissions never uploads zeros for everyone else.

A score is **not final** while nbgrader says the submission needs manual grading (held for
review, not graded, or cells a person grades), while an LMS import brought a submission
the gradebook does not hold yet (not graded since), or while a folder in ``submitted/`` is
not what its grading record says was graded (never graded, changed since, or its last run
a grader error, which leaves the gradebook's older score in place): the exports withhold
those from what students see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.intake.folders import submission_folders
from autograder.results.lms_records import LmsRecords
from autograder.results.records import Records, fingerprint
from autograder.status import Status
from autograder.intake.submission_files import FolderRefused, list_folder

NEEDS_A_PERSON = "needs manual grading (held for review, not graded, or cells a person grades)"
NOT_GRADED_YET = "imported from the LMS but not in the gradebook: not graded yet, or refused (grading/report.html)"
NEVER_GRADED = "in submitted/ but not graded yet: run the grader"
CHANGED = "submitted/ changed since it was graded: run the grader"
GRADER_FAILED = "the last run had a grader error on it: run the grader again"


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
class Standing:
    """One student's standing on one assignment."""

    graded: bool  # the gradebook holds a submission
    score: float | None  # None: not due and not graded, nothing to report
    late: bool  # the LMS marked it late, or nbgrader's timestamp is past the due date
    not_final: str = ""  # why the score must not reach students yet; "" when it may


@dataclass(frozen=True)
class ClassGrades:
    students: list[Student]
    assignments: list[Assignment]
    standings: dict[tuple[str, str], Standing]  # (student id, assignment) -> standing

    def not_final(self) -> list[str]:
        """``STUDENT/ASSIGNMENT: why`` for every score the exports withhold."""
        return [f"{student}/{assignment}: {cell.not_final}"
                for (student, assignment), cell in sorted(self.standings.items()) if cell.not_final]


def class_grades(course: Course, lms: LmsRecords, records: Records, now: datetime,
                 chosen: Sequence[str] = ()) -> ClassGrades:
    """The course's table, with ``now`` (naive UTC, as nbgrader keeps due dates) deciding
    which assignments are due. Its columns: the ``chosen`` assignments, or else those
    handed out, as far as the course can tell (someone submitted it: in the gradebook, in
    submitted/, a grading record or an LMS import; or its due date has passed): one no
    student has met yet would be a column of zeros or blanks, which an LMS offers to create
    as an assignment."""
    ungraded = unsettled_folders(course, records)
    order = {name: index for index, name in enumerate(course.assignments())}
    with Gradebook(course.gradebook_url) as gradebook:
        held = {assignment.name for assignment in gradebook.assignments}
        unknown = [name for name in order if name not in held]
        if unknown:
            raise SystemExit(f"the gradebook does not hold {', '.join(unknown)} of source/ yet: grade the course "
                             "first (python -m autograder grade registers every assignment)")
        if set(chosen) - held:
            raise SystemExit(f"the course has no assignment {', '.join(sorted(set(chosen) - held))}; "
                             f"it has {', '.join(sorted(held, key=lambda name: order.get(name, len(order))))}")
        known = {student.id: student for student in gradebook.students}
        students = [Student(student, _name(known.get(student)) or student, lms.user_id(student))
                    for student in sorted(set(known) | lms.students())]
        assignments, standings = [], {}
        met = {name for _, name in ungraded} | {record.assignment for record in records.all()} | lms.assignments()
        for assignment in sorted(gradebook.assignments, key=lambda each: (order.get(each.name, len(order)), each.name)):
            due = bool(assignment.duedate) and assignment.duedate <= now
            submissions = {submission.student.id: submission for submission in assignment.submissions}
            if not (assignment.name in chosen if chosen else submissions or due or assignment.name in met):
                continue
            assignments.append(Assignment(assignment.name, assignment.max_score))
            for student in students:
                kept = lms.get(student.id, assignment.name)
                submission = submissions.get(student.id)
                unsettled = ungraded.get((student.id, assignment.name), "")
                if submission is not None:
                    standings[(student.id, assignment.name)] = Standing(
                        True, max(0.0, submission.score - submission.late_submission_penalty),
                        bool(kept and kept.late) or submission.total_seconds_late > 0,
                        NEEDS_A_PERSON if submission.needs_manual_grade else unsettled)
                elif kept is not None:
                    standings[(student.id, assignment.name)] = Standing(False, None, kept.late, NOT_GRADED_YET)
                elif unsettled:
                    standings[(student.id, assignment.name)] = Standing(False, None, False, unsettled)
                else:
                    standings[(student.id, assignment.name)] = Standing(False, 0.0 if due else None, False)
    return ClassGrades(students, assignments, standings)


def unsettled_folders(course: Course, records: Records) -> dict[tuple[str, str], str]:
    """Why each submission folder's score is not settled yet, by (student, assignment): no
    record of its grading, files that changed since, or a grader error in its last run.
    Folders the grader refuses are settled by their refusal."""
    submitted, unsettled = course.folder("submitted"), {}
    for folder in submission_folders(submitted) if submitted.is_dir() else []:
        if folder.refused:
            continue
        record = records.get(folder.student, folder.assignment)
        if record is None:
            unsettled[(folder.student, folder.assignment)] = NEVER_GRADED
        elif record.status is Status.GRADER_ERROR:
            unsettled[(folder.student, folder.assignment)] = GRADER_FAILED
        elif record.status is not Status.REFUSED:
            try:
                now = fingerprint(course, folder.assignment, list_folder(folder.path))
            except FolderRefused:
                now = ""  # the next run refuses it: not what was graded
            if now != record.fingerprint:
                unsettled[(folder.student, folder.assignment)] = CHANGED
    return unsettled


def _name(student) -> str:
    """A gradebook student's name as Canvas lists it ("Last, First"), or "" without one."""
    if student is None:
        return ""
    return ", ".join(part for part in (student.last_name, student.first_name) if part)
