"""The course's gradebook (nbgrader's ``gradebook.db``): the one module that writes it.

A grading job is nbgrader's own autograde in a course of its own, on a worker, with a
gradebook that holds its assignment (``grading.bundle``): its rows for the submission
(scores, comments, late penalty, timestamp) are nbgrader's, read there
(``submission_rows``) and written here (``merge_rows``) as nbgrader would have written them.
(Running nbgrader's autograde again here, execution off, gives the same rows at a quarter
of a notebook's grading time, in the one process that collects every job.) A scratch
course's own gradebook is changed by nbgrader's autograde, execution off
(``merge_executed``), where the second witness failed some of its tests. A submission
that never ran gets zero on every grade cell through nbgrader's gradebook API, as nbgrader
does for a missing notebook. A notebook held for review is marked for manual grading, so
that nbgrader's formgrader lists it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from nbgrader.api import Grade, Gradebook, MissingEntry, SubmittedNotebook

from autograder.course import Course
from autograder.json_files import write_json
from autograder.nbgrader_api import GRADEBOOK, autograde, generate_assignment, gradebook_url



def register_assignments(course: Course) -> list[str]:
    """Make the gradebook hold every assignment as ``source/`` has it now, and return the
    assignments whose entries were (re)made.

    nbgrader grades with the test cells its gradebook holds, filled by ``generate_assignment``,
    so a hidden test fixed in ``source/`` counts only once the gradebook has it. An
    assignment is regenerated when the gradebook lacks it or its notebooks, or when its
    instructor files changed since the gradebook was last made from them (``GraderFolder.sources``
    keeps the digest each was made from), or when its compiled student version
    (``GraderFolder.graded_release``: what a submission is repaired against; not ``release/``,
    which is the instructor's to write) is missing. nbgrader updates the cells of an assignment that
    has submissions, but refuses to add or remove one; the updates are tried on a copy of the
    gradebook first, so a refused update leaves the gradebook as it was, and the other
    assignments' updates are not made either (``SourceUpdateRefused``)."""
    made_from = _made_from(course)
    stale = [name for name in course.assignments()
             if made_from.get(name) != course.source_digests[name] or not _registered(course, name)
             or not all(released_notebook(course, name, file).is_file() for file in course.notebook_names(name))]
    if stale:
        _regenerate(course, stale)
        write_json(course.grader_folder.sources, made_from | {name: course.source_digests[name] for name in stale})
    return stale


class SourceUpdateRefused(RuntimeError):
    """nbgrader could not bring the gradebook's copy of an assignment up to its ``source/``."""


def _registered(course: Course, assignment: str) -> bool:
    """Whether the gradebook has the assignment with the notebooks ``source/`` has (an
    assignment added with ``nbgrader db assignment add`` has none yet)."""
    if not course.gradebook_file.exists():
        return False
    with Gradebook(course.gradebook_url) as gradebook:
        try:
            notebooks = {notebook.name for notebook in gradebook.find_assignment(assignment).notebooks}
        except MissingEntry:
            return False
    return notebooks == {Path(file).stem for file in course.notebook_names(assignment)}


def _regenerate(course: Course, assignments: list[str]) -> None:
    """``generate_assignment`` of each of ``assignments`` into the gradebook, tried first on
    a copy of it: if one is refused, none is made (the fixes of the others wait for it).

    nbgrader changes a gradebook as it goes, so a refused update tried on the gradebook
    itself could leave it half changed; a refusal on the copy leaves it as it was. What
    succeeded on the copy is then done on the gradebook itself, not by swapping files in: a
    formgrader open on the gradebook would go on writing to a replaced file, and lose what a
    TA entered. Where there is no gradebook yet (a course's first run), nothing can be
    refused or lost: the one made aside becomes the gradebook, by a link that fails if one
    has appeared since (then all is done again, the safe way), and nbgrader runs once per
    assignment, not twice. The student version nbgrader writes on the way is kept in
    ``GraderFolder.graded_release``, never ``release/``: that is the instructor's (``make
    release``), and nbgrader empties it before it writes."""
    scratch = course.grader_folder.scratch / "gradebook-update"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    aside = scratch / GRADEBOOK
    new = not course.gradebook_file.exists()
    if not new:
        with closing(sqlite3.connect(course.gradebook_file)) as live, closing(sqlite3.connect(aside)) as into:
            live.backup(into)  # a consistent copy even while a formgrader writes
    release = {"release_directory": str(scratch / "release")}
    for assignment in assignments:
        try:
            generate_assignment(course.root, assignment,
                                {"CourseDirectory": {"db_url": gradebook_url(scratch), **release}})
        except RuntimeError as refused:
            raise SourceUpdateRefused(
                f"source/{assignment} changed, and nbgrader cannot update the gradebook to it "
                f"({str(refused)[-300:]}); the gradebook and release/ are as they were. nbgrader can change the "
                "cells of an assignment with submissions, never add or remove one: undo that change, or give the "
                "new cells to a new assignment"
            ) from None
    if new and not _placed(aside, course.gradebook_file):
        _regenerate(course, assignments)  # a gradebook appeared meanwhile (a formgrader's): updated as any is
        return
    if not new:
        for assignment in assignments:
            generate_assignment(course.root, assignment, {"CourseDirectory": release})
    for assignment in assignments:
        kept = course.grader_folder.graded_release / assignment
        if kept.exists():
            shutil.rmtree(kept)
        kept.parent.mkdir(parents=True, exist_ok=True)
        os.replace(scratch / "release" / assignment, kept)
    shutil.rmtree(scratch)


def _placed(made: Path, gradebook: Path) -> bool:
    """Whether ``made`` now is the gradebook too: False if a gradebook appeared meanwhile
    (a formgrader started) or the two folders are on different file systems."""
    try:
        os.link(made, gradebook)
    except OSError:
        return False
    return True


def released_notebook(course: Course, assignment: str, name: str) -> Path:
    """The student version of one notebook as the gradebook has the assignment (made by
    ``register_assignments``)."""
    return course.grader_folder.graded_release / assignment / name


def _made_from(course: Course) -> dict[str, str]:
    path = course.grader_folder.sources
    return json.loads(path.read_text()) if path.is_file() else {}


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


def submission_rows(job_course: Course, assignment: str, student: str) -> dict:
    """The rows nbgrader's autograde wrote for a graded submission in a job's course (its
    timestamp, each notebook's late penalty, each grade's score and review mark, each
    comment), as plain values that travel back from a worker."""
    with Gradebook(job_course.gradebook_url) as source:
        done = source.find_submission(assignment, student)
        return {
            "timestamp": done.timestamp,
            "penalties": {notebook.name: notebook.late_submission_penalty for notebook in done.notebooks},
            "scores": {(grade.notebook.name, grade.name): (grade.auto_score, grade.needs_manual_grade)
                       for grade in _grades(done.notebooks)},
            "comments": {(comment.notebook.name, comment.name): comment.auto_comment
                         for notebook in done.notebooks for comment in notebook.comments},
        }


def merge_rows(course: Course, assignment: str, student: str, rows: dict, ran: set[str]) -> None:
    """Write a graded submission's ``rows`` (``submission_rows``) into ``course``'s
    gradebook; ``ran`` names the notebooks (without ``.ipynb``) that have a graded
    notebook. A grade a person has scored since the run began is marked for review, as
    nbgrader's autograde marks it. ``RuntimeError`` for a student the course does not
    create and does not know."""
    with Gradebook(course.gradebook_url) as target:
        if course.creates_students:
            target.update_or_create_student(student)
        else:
            try:
                target.find_student(student)
            except MissingEntry:
                raise RuntimeError(f"No student with ID '{student}' exists in the database") from None
        when = {"timestamp": rows["timestamp"]} if rows["timestamp"] is not None else {}
        submission = target.update_or_create_submission(assignment, student, **when)
        for notebook in submission.notebooks:
            notebook.late_submission_penalty = rows["penalties"].get(notebook.name)
            for grade in notebook.grades:
                grade.auto_score, needs_review = rows["scores"][notebook.name, grade.name]
                grade.needs_manual_grade = needs_review or (notebook.name in ran and grade.manual_score is not None)
            for comment in notebook.comments:
                comment.auto_comment = rows["comments"][notebook.name, comment.name]
        target.db.commit()


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


def hold_for_review(course: Course, assignment: str, student: str, cells: dict[str, list[str]]) -> None:
    """Mark a submission's grades for manual grading: of each notebook ``cells`` names,
    the grade cells listed (every one, for an empty list); every grade of the submission
    when ``cells`` is empty or names one the gradebook does not have. The autograde scores
    stay as they are until a person grades it."""
    with Gradebook(course.gradebook_url) as gradebook:
        notebooks = gradebook.find_submission(assignment, student).notebooks
        known = {notebook.name: {grade.name for grade in notebook.grades} for notebook in notebooks}
        if any(name not in known or not set(ids) <= known[name] for name, ids in cells.items()):
            cells = {}  # a cell the gradebook does not know: every grade, rather than none
        for notebook in notebooks:
            if cells and notebook.name not in cells:
                continue
            for grade in notebook.grades:
                if not cells.get(notebook.name) or grade.name in cells[notebook.name]:
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
