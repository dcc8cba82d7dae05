"""Bring each folder's outcome into the course: the gradebook, ``autograded/``,
``feedback/`` and the folder's record.

A job's graded notebooks come over with the rows nbgrader wrote for them in the job's
gradebook (``gradebook.merge_job``); a
folder that left no graded notebook scores zero throughout and keeps no feedback page
(and, when it could not be graded at all, is marked for manual grading, as nbgrader leaves
a submission it failed on); a notebook the policy scan flagged is held for review: its score stands, nbgrader's
formgrader lists it for manual grading. A grader error changes nothing in the course but the
folder's record, which has no fingerprint, so that the next run grades the folder again.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from pathlib import Path

import nbformat

from autograder import gradebook
from autograder.course import TIMESTAMP_FILE, Course
from autograder.grading import witness_runs
from autograder.grading.jobs import (NO_FEEDBACK, GradingJob, JobResult, feedback_pages, graded_notebooks,
                                     render_pages, scratch)
from autograder.grading.records import Record, Records
from autograder.grading.status import NOT_GRADED, Status
from autograder.grading.submission_files import FolderRefused, copy_file, list_folder

# What nbgrader's release_feedback reads beside each page; its exchange's collect writes both.
EXCHANGE_FILES = (TIMESTAMP_FILE, "submission_secret.txt")


def finish(course: Course, records: Records, planned: Record, job: GradingJob, result: JobResult,
           references: dict | None = None) -> Status:
    """Bring a job's result into the course and record it, its passing tests confirmed by
    the second witness's ``references`` (notebook -> test cell id -> record); return its
    final status."""
    status, detail = result.status, result.detail
    if status is Status.GRADER_ERROR:  # nothing of it is the student's: the course keeps what it had
        kept = records.get(planned.student, planned.assignment)
        records.save(dataclasses.replace(planned, status=status, detail=detail, fingerprint="",
                                         problems=planned.problems + list(result.problems),
                                         score=kept.score if kept else 0.0,
                                         max_score=kept.max_score if kept else 0.0))
        return status
    if status is Status.GRADED and planned.status is not Status.GRADED:
        status, detail = planned.status, planned.detail  # a notebook triage left out names the folder
    merged, held, problems = False, [], list(result.problems)
    notebooks = graded_notebooks(job)
    if notebooks:
        held, problems = _confirmed(job, references or {}, result.records, problems)
        try:
            # The folder first: one that cannot be copied whole leaves the rows as they were.
            target = course.folder("autograded", job.student, job.assignment)
            _copy_graded_folder(scratch(job.workdir).folder("autograded", job.student, job.assignment), target)
            uncopied = [path.name for path in notebooks if not (target / path.name).is_file()]
            if uncopied:  # over the size cap that copying a file has
                raise RuntimeError(f"{', '.join(uncopied)} could not be copied into autograded/")
            gradebook.merge_job(course, scratch(job.workdir), job.assignment, job.student)
            merged = True
        except (RuntimeError, OSError, FolderRefused) as failure:
            status, detail = Status.FAILED, f"merging the graded notebook failed: {failure}"[:300]
    _publish_feedback(course, job, merged)
    flags = planned.flags + held
    if flags and status is not Status.TAMPERED:
        also = f" (also {status.value}: {detail})" if status is not Status.GRADED else ""
        found = [f"the policy scan found {len(planned.flags)} line(s) to read"] if planned.flags else []
        found += [f"the second witness disagreed on {len(held)} test(s)"] if held else []
        status, detail = Status.HELD, (f"{' and '.join(found)} (Code to read); the score stands until a person "
                                       f"has looked{also}")
    save(course, records, dataclasses.replace(planned, status=status, detail=detail, flags=flags,
                                              problems=planned.problems + problems,
                                              seconds=round(result.seconds, 2),
                                              witness_seconds=round(result.witness_seconds, 2)), merged)
    return status


def _confirmed(job: GradingJob, references: dict, records: dict, problems: list[str]) -> tuple[list[str], list[str]]:
    """The job's passing tests against the witness's records: a test whose record differs
    from the reference, or never came, is failed in the job's graded notebook (an error
    output: it scores zero there, in the job's gradebook and on its feedback page, made
    again). The lines a TA must read, and the job's problems (a page that could not be made
    again replaces the first one's)."""
    job_course = scratch(job.workdir)
    folder = job_course.folder("autograded", job.student, job.assignment)
    held, changed = [], {}
    for name in job.notebooks:
        if not references.get(name) or not (folder / name).is_file():
            continue
        graded = nbformat.read(folder / name, as_version=4)
        found = witness_runs.disagreements(graded, references[name], records.get(name, {}))
        if found:
            witness_runs.mark_failed(graded, found)
            changed[name] = graded
            held += witness_runs.held_lines(name, found)
    if not changed:
        return held, problems
    target = job.workdir / "witnessed" / job.student / job.assignment
    shutil.copytree(folder, target, dirs_exist_ok=True)
    for name, graded in changed.items():
        nbformat.write(graded, target / name)
    gradebook.merge_executed(job_course, job.assignment, job.student, job.workdir / "witnessed")
    return held, [problem for problem in problems if not problem.startswith(NO_FEEDBACK)] + render_pages(job)


def save(course: Course, records: Records, record: Record, merged: bool = False) -> None:
    """Record a folder's outcome, with its score from the gradebook; a folder of a known
    assignment that left no graded notebook scores zero throughout. A student the course
    does not create (``Autograde.create_student`` off) is never written into the gradebook."""
    known = course.creates_students or record.student in gradebook.students(course)
    if record.assignment in course.assignments() and known:
        if not merged:
            gradebook.record_zero(course, record.assignment, record.student, flagged=record.status in NOT_GRADED)
            _remove_feedback(course, record.student, record.assignment)
        if record.flags:
            gradebook.hold_for_review(course, record.assignment, record.student)
        record.score, record.max_score = gradebook.score(course, record.assignment, record.student)
    records.save(record)


def _copy_graded_folder(graded: Path, destination: Path) -> None:
    """Replace ``destination`` with the regular files of a job's graded folder, their
    permission bits kept (nbgrader set them), no link followed."""
    if destination.is_symlink() or destination.is_file():
        destination.unlink()
    elif destination.is_dir():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for relative in list_folder(graded).files:
        copy_file(graded, relative, destination / relative)
        mode = os.stat(graded / relative, follow_symlinks=False).st_mode
        os.chmod(destination / relative, stat.S_IMODE(mode) & 0o777)


def _publish_feedback(course: Course, job: GradingJob, merged: bool) -> None:
    """The job's feedback pages into the course's ``feedback/``, or none at all (no stale
    page), with the files nbgrader's ``release_feedback`` reads beside them, as its own
    ``generate_feedback`` leaves them (``EXCHANGE_FILES``, from the submission folder)."""
    _remove_feedback(course, job.student, job.assignment)
    pages = feedback_pages(job) if merged else []
    target = course.folder("feedback", job.student, job.assignment)
    for page in pages:
        copy_file(page.parent, page.name, target / page.name)
    submitted = course.folder("submitted", job.student, job.assignment)
    for name in EXCHANGE_FILES if pages else ():
        try:
            copy_file(submitted, name, target / name)
        except OSError:  # absent (not collected through the exchange), or not a regular file: never followed
            continue


def _remove_feedback(course: Course, student: str, assignment: str) -> None:
    folder = course.folder("feedback", student, assignment)
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
