"""Bring each folder's outcome into the course: the gradebook, ``autograded/``,
``feedback/`` and the folder's record.

A job's result carries its graded folder, its feedback pages and the rows nbgrader wrote
for it in the job's gradebook: they are written here (``gradebook.merge_rows``), by the
TA's process alone; a
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
from pathlib import Path

import nbformat

from autograder import gradebook
from autograder.course import SUBMISSION_SECRET_FILE, TIMESTAMP_FILE, Course
from autograder.grading import witness_verdicts
from autograder.grading.jobs import NO_FEEDBACK, GradingJob, JobResult, rescore
from autograder.results.records import Record, Records
from autograder.status import NOT_GRADED, Status
from autograder.intake.submission_files import copy_file

# What nbgrader's release_feedback reads beside each page; its exchange's collect writes both.
EXCHANGE_FILES = (TIMESTAMP_FILE, SUBMISSION_SECRET_FILE)


def finish(course: Course, records: Records, planned: Record, job: GradingJob, result: JobResult,
           references: dict | None = None, template: Path | None = None) -> Status:
    """Bring a job's result into the course and record it, its passing tests confirmed by
    the second witness's ``references`` (notebook -> test cell id -> record; ``template``
    is the job's bundle, unpacked, to score a notebook again where they differ); return
    its final status."""
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
    merged, held, disagreed, problems = False, [], {}, list(result.problems)
    if result.graded_notebooks(job) and result.rows is not None:
        try:
            held, disagreed, result = _confirmed(job, references or {}, result, template)
            problems = list(result.problems)
            # The folder first: one that cannot be written whole leaves the rows as they were.
            _write_graded_folder(result.graded, course.folder("autograded", job.student, job.assignment))
            gradebook.merge_rows(course, job.assignment, job.student, result.rows,
                                 {Path(name).stem for name in result.graded_notebooks(job)})
            merged = True
        except (RuntimeError, OSError) as failure:
            status, detail = Status.FAILED, f"merging the graded notebook failed: {failure}"[:300]
    _publish_feedback(course, job, result.pages if merged else {})
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
                                              witness_seconds=round(result.witness_seconds, 2),
                                              worker=result.worker), merged,
         _to_review(planned.held_notebooks, disagreed, result.rows if merged else None))
    return status


def _to_review(held_notebooks: list[str], disagreed: dict[str, list[str]], rows: dict | None) -> dict[str, list[str]]:
    """The cells of a held submission a person must grade, by notebook (its gradebook
    name): in a notebook the policy scan flagged, the test cells that scored (a forgery
    can only add points; none scored: every cell, so the formgrader still lists it);
    where the second witness disagreed, those tests. Empty: every cell of the folder
    (nothing was merged to tell)."""
    if rows is None:
        return {}
    review = {}
    for name in held_notebooks:
        stem = Path(name).stem
        review[stem] = [grade for (notebook, grade), (score, _) in rows["scores"].items() if notebook == stem and score]
    for name, tests in disagreed.items():
        stem = Path(name).stem
        if review.get(stem) != []:  # [] already means every cell
            review[stem] = [*review.get(stem, []), *tests]
    return review


def _confirmed(job: GradingJob, references: dict, result: JobResult,
               template: Path | None) -> tuple[list[str], dict[str, list[str]], JobResult]:
    """The job's passing tests against the witness's records: a test whose record differs
    from the reference, or never came, is failed in the job's graded notebook (an error
    output: it scores zero there, in the rows and on its feedback page, made again from the
    bundle, ``jobs.rescore``). The lines a TA must read, the tests that disagreed by
    notebook, and the result to merge (a page that could not be made again replaces the
    first one's)."""
    held, disagreed, notebooks, changed = [], {}, {}, False
    for name in result.graded_notebooks(job):
        graded = nbformat.reads(result.graded[name][0].decode("utf-8"), as_version=4)
        found = witness_verdicts.disagreements(graded, references[name], result.records.get(name, {})) \
            if references.get(name) else {}
        if found:
            witness_verdicts.mark_failed(graded, found)
            held += witness_verdicts.held_lines(name, found)
            disagreed[name] = list(found)
            changed = True
        notebooks[name] = nbformat.writes(graded).encode()
    if not changed:
        return held, disagreed, result
    if template is None:
        raise RuntimeError("the second witness disagreed, and the assignment's bundle is not at hand to score again")
    again = rescore(job, template, notebooks)
    problems = [problem for problem in result.problems if not problem.startswith(NO_FEEDBACK)] + list(again.problems)
    return held, disagreed, dataclasses.replace(result, graded=again.graded, pages=again.pages, rows=again.rows,
                                                problems=tuple(problems))


def save(course: Course, records: Records, record: Record, merged: bool = False,
         review: dict[str, list[str]] | None = None) -> None:
    """Record a folder's outcome, with its score from the gradebook; a folder of a known
    assignment that left no graded notebook scores zero throughout; a held one has the
    cells of ``review`` (``_to_review``) marked for manual grading. A student the course
    does not create (``Autograde.create_student`` off) is never written into the gradebook."""
    known = course.creates_students or record.student in gradebook.students(course)
    if record.assignment in course.assignments() and known:
        if not merged:
            gradebook.record_zero(course, record.assignment, record.student, flagged=record.status in NOT_GRADED)
            _remove_feedback(course, record.student, record.assignment)
        if record.flags:
            gradebook.hold_for_review(course, record.assignment, record.student, review or {})
        record.score, record.max_score = gradebook.score(course, record.assignment, record.student)
    records.save(record)


def _write_graded_folder(graded: dict[str, tuple[bytes, int]], destination: Path) -> None:
    """Replace ``destination`` with a job's graded folder (relative path -> content,
    permission bits as nbgrader set them; never setuid or setgid)."""
    if destination.is_symlink() or destination.is_file():
        destination.unlink()
    elif destination.is_dir():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for relative, (content, mode) in graded.items():
        path = destination / relative
        if Path(relative).is_absolute() or ".." in Path(relative).parts:
            raise RuntimeError(f"a graded file's name leaves its folder: {relative!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        os.chmod(path, mode & 0o777)


def _publish_feedback(course: Course, job: GradingJob, pages: dict[str, bytes]) -> None:
    """The job's feedback ``pages`` into the course's ``feedback/``, or none at all (no
    stale page), with the files nbgrader's ``release_feedback`` reads beside them, as its own
    ``generate_feedback`` leaves them (``EXCHANGE_FILES``, from the submission folder)."""
    _remove_feedback(course, job.student, job.assignment)
    target = course.folder("feedback", job.student, job.assignment)
    for name, page in pages.items():
        if Path(name).name != name or name in (".", ".."):
            raise RuntimeError(f"a feedback page's name is not a file name: {name!r}")
        target.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(page)
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
