"""The feedback pages of ``feedback/``, packed to hand back:

- ``feedback.zip``: ``STUDENT/ASSIGNMENT/NOTEBOOK.html``, every page of every final score;
- ``lms-feedback-ASSIGNMENT.zip``, for the students an LMS import brought: each page named
  as the course's LMS format names feedback for the platform's bulk upload
  (``LmsFormat.feedback_name``): as the platform named the student's own file up to the
  file's own name, then the page's (Canvas: ``smithjohn_LATE_1001_5550_hw.html``, at the
  top level; Moodle: ``John Smith_12345_assignsubmission_file/hw.html``, in the
  participant's folder), which the platform reads to find the student.

A page of a score that is not final (``class_grades``) is left out, and so is a page of a
student whose id an unzip tool on Windows would read as a path (``\\`` or ``:``, which the
grader allows in a folder name). Pages are read through
``submission_files``: no link is followed, only regular files are opened. The grader wrote
them, but an unsandboxed kernel runs as the TA and could have planted a link there.
"""

from __future__ import annotations

import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import Course
from autograder.intake.submission_files import read_file
from autograder.lms.formats import LmsFormat, shared_users
from autograder.results.class_grades import ClassGrades
from autograder.results.lms_records import LmsRecords

# Characters a folder name may hold on Linux but Windows' unzip tools read as part of a path.
PATH_CHARACTERS_ELSEWHERE = ("\\", ":")


@dataclass
class FeedbackArchives:
    """The archives written, and every page left out of one, with why."""

    written: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def write_feedback_archives(course: Course, grades: ClassGrades, lms: LmsRecords, into: Path,
                            platform: LmsFormat) -> FeedbackArchives:
    archives = FeedbackArchives()
    pages = _final_pages(course, grades, archives.left_out)
    everyone = into / "feedback.zip"
    _write_zip(everyone, {f"{student}/{assignment}/{page}": data
                          for (student, assignment, page), data in pages.items()})
    archives.written.append(everyone)
    named: dict[str, dict[str, bytes]] = defaultdict(dict)
    shared = shared_users(lms)
    for (student, assignment, page), data in pages.items():
        kept = lms.get(student, assignment)
        if kept is None or not kept.prefixes:
            continue
        if (student, assignment) in shared:
            archives.left_out.append(f"feedback/{student}/{assignment}/{page}: {shared[(student, assignment)]}")
            continue
        name = platform.feedback_name(kept.prefixes, page)
        if name in named[assignment]:
            archives.left_out.append(f"feedback/{student}/{assignment}/{page}: its LMS name {name} is another "
                                   "page's: left out of the LMS archive")
        else:
            named[assignment][name] = data
    for assignment, files in sorted(named.items()):
        archive = into / f"lms-feedback-{assignment}.zip"
        _write_zip(archive, files)
        archives.written.append(archive)
    return archives


def _final_pages(course: Course, grades: ClassGrades, left_out: list[str]) -> dict[tuple[str, str, str], bytes]:
    """(student, assignment, page name) -> the page, for every final score that has pages
    (one per notebook of the assignment, named as nbgrader names them)."""
    feedback = course.folder("feedback")
    pages = {}
    for (student, assignment), cell in sorted(grades.standings.items()):
        if not cell.graded or cell.not_final:
            continue
        if any(character in student for character in PATH_CHARACTERS_ELSEWHERE):
            left_out.append(f"feedback/{student}/{assignment}: the student id holds \\ or :, which unzip tools on "
                            "Windows read as a path: left out")
            continue
        for notebook in course.notebook_names(assignment):
            page = f"{Path(notebook).stem}.html"
            try:
                pages[(student, assignment, page)] = read_file(feedback, f"{student}/{assignment}/{page}")
            except FileNotFoundError:
                continue
            except OSError as error:
                why = error.strerror or error
                left_out.append(f"feedback/{student}/{assignment}/{page}: not read ({why}): left out")
    return pages


def _write_zip(path: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
