"""A course folder as nbgrader lays it out: the one place that knows where things are.

Paths come from nbgrader's own ``CourseDirectory`` under the course's configuration
(``nbgrader_api.course_config``), so a course that renames ``release/`` or ``submitted/``
in its ``nbgrader_config.py`` is read where nbgrader reads it. Each assignment has one
notebook, ``ASSIGNMENT.ipynb`` (the course's convention; a submission's other notebooks
are triage's business). A notebook's grade ids and a test cell's hidden region (between
nbgrader's own ``ClearHiddenTests`` delimiters) are read here and nowhere else.
"""

from __future__ import annotations

import json
import shutil
from functools import cached_property
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests

from autograder.nbgrader_api import CONFIG_FILE, GRADEBOOK, config_files, course_config, gradebook_url

STEPS = ("source", "release", "submitted", "autograded", "feedback")
DEFAULT_STRUCTURE = CourseDirectory.class_traits()["directory_structure"].default()
# nbgrader settings the grader cannot honour yet: a course that sets one is refused.
UNSUPPORTED_SETTINGS = (("CourseDirectory", "db_url"), ("CourseDirectory", "student_id_exclude"),
                        ("Autograde", "create_student"))


class Course:
    """The course in ``root``: its configuration, its folders, its assignments. Its
    ``source/`` is read once: a course does not change its assignments while it is graded."""

    def __init__(self, root: Path, overrides: dict | None = None):
        self.root = Path(root).resolve()
        self.declared = config_files(self.root)  # what the configuration files say, before our settings
        self.config = course_config(self.root, overrides, self.declared)
        self.directory = CourseDirectory(config=self.config)
        self.hidden_delimiters = hidden_delimiters(ClearHiddenTests(config=self.config))

    @property
    def gradebook_file(self) -> Path:
        return self.root / GRADEBOOK

    @property
    def gradebook_url(self) -> str:
        return gradebook_url(self.root)

    def folder(self, step: str, student: str = ".", assignment: str = "") -> Path:
        """The folder of one step (``STEPS``), for one student and assignment or all."""
        return Path(self.directory.format_path(getattr(self.directory, f"{step}_directory"), student, assignment))

    def notebook_name(self, assignment: str) -> str:
        """The file name of the assignment's notebook: the one notebook of its ``source/``
        folder (``ASSIGNMENT.ipynb`` when there is none yet)."""
        found = self._source_notebooks.get(assignment, [])
        return found[0] if len(found) == 1 else f"{assignment}.ipynb"

    def notebook(self, step: str, assignment: str, student: str = ".") -> Path:
        return self.folder(step, student, assignment) / self.notebook_name(assignment)

    @cached_property
    def _source_notebooks(self) -> dict[str, list[str]]:
        """Each assignment's notebooks in ``source/``."""
        source = self.folder("source")
        folders = sorted(path for path in source.iterdir() if path.is_dir()) if source.is_dir() else []
        return {folder.name: sorted(path.name for path in folder.glob("*.ipynb")) for folder in folders}

    def read(self, step: str, assignment: str, student: str = ".") -> nbformat.NotebookNode:
        return nbformat.read(self.notebook(step, assignment, student), as_version=4)

    def layout_problem(self) -> str | None:
        """Why the grader cannot use this course, or None. Every step's folder must lie
        inside the course (a job's scratch copy of the course must not reach the real one),
        in nbgrader's default structure; what the grader does not support yet is refused
        here rather than graded differently from nbgrader."""
        if self.directory.directory_structure != DEFAULT_STRUCTURE:
            return f"CourseDirectory.directory_structure must be {DEFAULT_STRUCTURE!r}"
        for step in STEPS:
            folder = getattr(self.directory, f"{step}_directory")
            if Path(folder).is_absolute() or ".." in Path(folder).parts:
                return f"CourseDirectory.{step}_directory ({folder!r}) must be a folder inside the course"
        unsupported = [f"{section}.{name}" for section, name in UNSUPPORTED_SETTINGS if name in self.declared[section]]
        if unsupported:
            return f"{', '.join(unsupported)} is set, which this grader does not support yet"
        for assignment in self.assignments():
            found = self._source_notebooks.get(assignment, [])
            if len(found) != 1:
                return (f"source/{assignment} holds {', '.join(found) or 'no notebook'}: one notebook per "
                        "assignment is all this grader supports yet")
            language = self.read("source", assignment).metadata.get("kernelspec", {}).get("language", "python")
            if language != "python":
                return f"source/{assignment} is written in {language}: this grader runs Python kernels only"
        return None

    def assignments(self) -> list[str]:
        """Every assignment: the folders of ``source/``, in order (none without one)."""
        return list(self._source_notebooks)

def hidden_delimiters(clear: ClearHiddenTests) -> tuple[str, str]:
    """What marks a hidden region, as configured for nbgrader's own ``ClearHiddenTests``."""
    return clear.begin_test_delimeter, clear.end_test_delimeter


def scratch_course(course: Course, into: Path, assignments: list[str] | None = None) -> Course:
    """A new course in ``into`` with ``course``'s configuration and the sources of
    ``assignments`` (all by default): no gradebook, no submissions."""
    into.mkdir(parents=True)
    if (course.root / CONFIG_FILE).is_file():
        shutil.copy(course.root / CONFIG_FILE, into)
    for assignment in course.assignments() if assignments is None else assignments:
        source = course.folder("source", assignment=assignment)
        shutil.copytree(source, into / source.relative_to(course.root))
    return Course(into)


def split_hidden(source: str, delimiters: tuple[str, str]) -> tuple[list[str], list[str]]:
    """A test cell's lines outside its hidden region, and those inside it (the delimiter
    lines counted as inside), as nbgrader's ``ClearHiddenTests`` finds the region."""
    begin, end = delimiters
    shown, hidden, inside = [], [], False
    for line in source.split("\n"):
        if begin in line:
            inside = True
            hidden.append(line)
        elif end in line:
            inside = False
            hidden.append(line)
        else:
            (hidden if inside else shown).append(line)
    return shown, hidden


def grade_id(cell: dict) -> str | None:
    """The cell's nbgrader grade_id, or None when it has none or its marks are malformed."""
    marks = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
    if isinstance(marks, dict) and isinstance(marks.get("grade_id"), str):
        return marks["grade_id"]
    return None


def grade_ids(data: bytes) -> set[str] | None:
    """The grade_ids in a notebook's bytes, or None if they are not a readable notebook."""
    try:
        cells = json.loads(data.decode("utf-8")).get("cells")
    except (UnicodeDecodeError, ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    return {grade_id(cell) for cell in cells if isinstance(cell, dict)} - {None}
