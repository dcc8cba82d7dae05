"""A course folder as nbgrader lays it out: the one place that knows where things are.

Paths come from nbgrader's own ``CourseDirectory`` under the course's configuration
(``nbgrader_api.course_config``), so a course that renames ``release/`` or ``submitted/``
in its ``nbgrader_config.py`` is read where nbgrader reads it. An assignment's notebooks
are those of its ``source/`` folder, any names, any number. A notebook's grade ids and a
test cell's hidden region (between nbgrader's own ``ClearHiddenTests`` delimiters) are
read here and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager, NoSuchKernel
from jupyter_core.paths import jupyter_path
from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions
from sqlalchemy.engine import make_url

from autograder.nbgrader_api import CONFIG_FILE, CONFIG_JSON, config_files, course_config, gradebook_url
from autograder.sandbox import bwrap

# The demo class that ships with this repository, one student per situation a TA meets
# (`grade` without `--course`, `make bench`; tests/fixtures/build_demo_class.py writes it).
DEMO_CLASS = Path(__file__).resolve().parents[1] / "examples" / "demo-class"
STEPS = ("source", "release", "submitted", "autograded", "feedback")
DEFAULT_STRUCTURE = CourseDirectory.class_traits()["directory_structure"].default()
# Where nbgrader's collection records when a submission came in (its name is fixed in nbgrader).
TIMESTAMP_FILE = "timestamp.txt"
# What nbgrader's exchange writes beside a submission for its feedback's names (the student's own secret).
SUBMISSION_SECRET_FILE = "submission_secret.txt"
# How much of an instructor's file is searched for solutions or hidden tests.
MAX_SCANNED_BYTES = 64 * 2**20


@dataclass(frozen=True)
class GraderFolder:
    """The grader's own folder in a course, ``grading/``: every file and folder it keeps
    there is named here, once (nbgrader's folders are ``Course.folder``'s). Nothing in it
    is the instructor's or a student's: the grader may empty any part of it."""

    path: Path

    @classmethod
    def of(cls, course_root: Path) -> GraderFolder:
        return cls(Path(course_root) / "grading")

    @property
    def records(self) -> Path:
        """What became of each submission folder (``results.records``)."""
        return self.path / "records.json"

    @property
    def sources(self) -> Path:
        """Which version of each assignment's ``source/`` the gradebook was made from."""
        return self.path / "sources.json"

    @property
    def graded_release(self) -> Path:
        """The student version nbgrader compiled into the gradebook, per assignment."""
        return self.path / "release"

    @property
    def scratch(self) -> Path:
        """Work in progress: staged LMS files, job bundles, workers' logs, gradebook updates."""
        return self.path / "scratch"

    @property
    def lms(self) -> Path:
        """What LMS imports learnt about each student (``results.lms_records``)."""
        return self.path / "lms.json"

    @property
    def lms_left_out(self) -> Path:
        """The files each assignment's last LMS import left out, and why."""
        return self.path / "lms-left-out.json"

    @property
    def report(self) -> Path:
        return self.path / "report.html"

    @property
    def exports(self) -> Path:
        """What goes back to the learning platform, rewritten whole by each export."""
        return self.path / "exports"


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
    def grader_folder(self) -> GraderFolder:
        return GraderFolder.of(self.root)

    @property
    def gradebook_url(self) -> str:
        return self.config.CourseDirectory.db_url

    @property
    def gradebook_file(self) -> Path | None:
        """The gradebook's SQLite file (None when the gradebook is another kind of database)."""
        url = make_url(self.gradebook_url)
        return Path(url.database) if url.get_backend_name() == "sqlite" and url.database else None

    def folder(self, step: str, student: str = ".", assignment: str = "") -> Path:
        """The folder of one step (``STEPS``), for one student and assignment or all."""
        return Path(self.directory.format_path(getattr(self.directory, f"{step}_directory"), student, assignment))

    def notebook_names(self, assignment: str) -> list[str]:
        """The file names of the assignment's notebooks, those of its ``source/`` folder
        (``ASSIGNMENT.ipynb`` for a folder that has none yet)."""
        return self._source_notebooks.get(assignment) or [f"{assignment}.ipynb"]

    @property
    def creates_students(self) -> bool:
        """Whether grading adds a student the gradebook does not know (nbgrader's
        ``Autograde.create_student``, on by default)."""
        return self.config.Autograde.get("create_student", True)

    def notebook(self, step: str, assignment: str, student: str = ".", name: str | None = None) -> Path:
        """One notebook of one step; ``name`` may be left out for an assignment of one notebook."""
        if name is None:
            names = self.notebook_names(assignment)
            if len(names) != 1:
                raise ValueError(f"{assignment} has {len(names)} notebooks: say which")
            name = names[0]
        return self.folder(step, student, assignment) / name

    @cached_property
    def _source_notebooks(self) -> dict[str, list[str]]:
        """Each assignment's notebooks in ``source/``, as nbgrader finds them (no hidden
        files); a folder without one is no assignment yet."""
        source = self.folder("source")
        folders = sorted(path for path in source.iterdir() if path.is_dir()) if source.is_dir() else []
        found = {folder.name: sorted(path.name for path in folder.glob("*.ipynb") if not path.name.startswith("."))
                 for folder in folders}
        return {name: notebooks for name, notebooks in found.items() if notebooks}

    def read(self, step: str, assignment: str, student: str = ".", name: str | None = None) -> nbformat.NotebookNode:
        return nbformat.read(self.notebook(step, assignment, student, name), as_version=4)

    def layout_problem(self) -> str | None:
        """Why the grader cannot use this course, or None. Every step's folder must lie
        inside the course (a job's scratch copy of the course must not reach the real one),
        in nbgrader's default structure; the gradebook must be an SQLite file (jobs grade
        into copies of it); notebooks are always run (never graded on the outputs students
        saved); and every source notebook must run in a Python kernel installed here (the
        only kind of kernel the sandbox runs)."""
        if self.directory.directory_structure != DEFAULT_STRUCTURE:
            return f"CourseDirectory.directory_structure must be {DEFAULT_STRUCTURE!r}"
        for step in STEPS:
            folder = getattr(self.directory, f"{step}_directory")
            if Path(folder).is_absolute() or ".." in Path(folder).parts:
                return f"CourseDirectory.{step}_directory ({folder!r}) must be a folder inside the course"
        if self.gradebook_file is None:
            return (f"the gradebook ({make_url(self.gradebook_url).render_as_string()}) is not an SQLite file, "
                    "the only kind this grader supports")
        for what, path in (("the course", self.root), ("the gradebook", self.gradebook_file)):
            if bwrap.visible_to_kernels(path):
                return f"{what} ({path}) lies in a folder every grading kernel can read: move it"
        if self.directory.notebook_id != "*":
            return "CourseDirectory.notebook_id (--notebook) is set: this grader grades a submission as a whole"
        if self.config.Execute.get("enabled", True) is False:
            return ("Execute.enabled is False: this grader always runs the notebooks; grading the outputs "
                    "students saved would grade whatever they typed")
        for assignment in self.assignments():
            for name in self.notebook_names(assignment):
                problem = kernel_problem(self.read("source", assignment, name=name).metadata.get("kernelspec"))
                if problem:
                    return f"source/{assignment}/{name}: {problem}"
            for path, start in self.instructor_files[assignment].items():
                if any(marker.encode() in start for marker in self._secret_markers):
                    return (f"{path.relative_to(self.root)} holds solutions or hidden tests, and nbgrader copies it "
                            "beside every graded notebook, where the student's code can read it: keep that version "
                            "out of source/ (or match it by c.CourseDirectory.ignore) and put a copy without them "
                            "in its place; one students complete is declared in c.Autograde.exclude_overwriting")
        return None

    @cached_property
    def instructor_files(self) -> dict[str, dict[Path, bytes]]:
        """Each assignment's files besides its notebooks in ``source/`` that nbgrader's
        autograde copies beside every graded notebook, where the kernel reads them, with
        their start (``MAX_SCANNED_BYTES``), read once. nbgrader's own rules choose them:
        not a notebook, not matched by ``CourseDirectory.ignore``, not declared for students
        in ``Autograde.exclude_overwriting`` (the student's own copy is graded instead)."""
        declared = self.config.Autograde.get("exclude_overwriting", {})
        found = {}
        for assignment in self.assignments():
            folder = self.folder("source", assignment=assignment)
            skipped = {folder / name for name in declared.get(assignment, [])}
            copied = utils.find_all_files(str(folder), [*self.directory.ignore, "*.ipynb"])
            found[assignment] = {path: _head(path) for path in sorted(map(Path, copied))
                                 if path not in skipped and path.is_file()}
        return found

    @cached_property
    def source_digests(self) -> dict[str, str]:
        """Each assignment's instructor files (its notebooks and the files beside them in
        ``source/``) as one digest, read once: when it changes, the gradebook's copy of the
        tests and every grade of the assignment are out of date. Of a notebook, only what
        grading uses counts (``graded_content``): saving it in JupyterLab, which rewrites
        metadata and outputs, or fixing a typo in its prose regrades no one."""
        digests = {}
        for assignment in self.assignments():
            folder = self.folder("source", assignment=assignment)
            digest = hashlib.sha256()
            # the files nbgrader uses, by its own rule (``CourseDirectory.ignore``: not the
            # editor's checkpoints, not Python's bytecode caches, by default)
            for path in sorted(map(Path, utils.find_all_files(str(folder), self.directory.ignore))):
                if path.is_file():
                    content = graded_content(path) if path.suffix == ".ipynb" else path.read_bytes()
                    digest.update(f"{path.relative_to(folder)}\0{len(content)}\0".encode())
                    digest.update(content)
            digests[assignment] = digest.hexdigest()
        return digests

    @cached_property
    def _secret_markers(self) -> tuple[str, ...]:
        """What begins a solution or a hidden test region, as nbgrader is configured to find them."""
        return ClearSolutions(config=self.config).begin_solution_delimeter, self.hidden_delimiters[0]

    def assignments(self) -> list[str]:
        """Every assignment: the folders of ``source/``, in order (none without one)."""
        return list(self._source_notebooks)


def kernel_problem(kernelspec: dict | None) -> str | None:
    """Why a notebook with this kernelspec cannot be run here, or None: its kernel must be
    installed (as nbgrader needs it) and run Python. No kernelspec means the default one;
    "python" is the default one too, as Jupyter's kernel manager reads it."""
    if not isinstance(kernelspec, dict) or not kernelspec.get("name"):
        return None
    name = str(kernelspec["name"])
    language = _kernel_language(NATIVE_KERNEL_NAME if name == "python" else name, tuple(jupyter_path("kernels")))
    if language is None:
        return f"its kernel {name[:60]!r} is not installed"
    if language.lower() != "python":
        return f"its kernel runs {language[:60]}: this grader runs Python kernels only"
    return None


@cache
def _kernel_language(name: str, search_path: tuple[str, ...]) -> str | None:
    """The language of the installed kernel ``name`` (None if there is none): looked up once
    per kernel and search path, not once per submission."""
    try:
        return KernelSpecManager().get_kernel_spec(name).language
    except NoSuchKernel:
        return None


def _head(path: Path) -> bytes:
    """The start of an instructor's file (``MAX_SCANNED_BYTES``), for a search."""
    with path.open("rb") as stream:
        return stream.read(MAX_SCANNED_BYTES)


def hidden_delimiters(clear: ClearHiddenTests) -> tuple[str, str]:
    """What marks a hidden region, as configured for nbgrader's own ``ClearHiddenTests``."""
    return clear.begin_test_delimeter, clear.end_test_delimeter


def graded_content(notebook: Path) -> bytes:
    """What of an instructor notebook grading depends on: the kernel it runs in, and every
    code cell and every cell nbgrader marks, with its type, source and nbgrader metadata (not
    outputs, not other metadata, not plain prose). A notebook nbformat cannot read counts
    by its bytes."""
    try:
        parsed = nbformat.reads(notebook.read_text(), as_version=4)
    except (ValueError, UnicodeDecodeError):  # nbformat's errors for text that is not a notebook
        return notebook.read_bytes()
    cells = [(cell.cell_type, cell.source, cell.metadata.get("nbgrader", {})) for cell in parsed.cells
             if cell.cell_type == "code" or "nbgrader" in cell.metadata]
    kernel = parsed.metadata.get("kernelspec", {}).get("name", "")
    return json.dumps([kernel, cells], sort_keys=True).encode()


def scratch_course(course: Course, into: Path, assignments: list[str] | None = None) -> Course:
    """A new course in ``into`` with ``course``'s configuration and the sources of
    ``assignments`` (all by default), and a gradebook of its own (none yet), written into
    its configuration, so that nothing run there (nbgrader's own commands included) ever
    writes the gradebook the course or the TA's Jupyter configuration names; no submissions."""
    into.mkdir(parents=True)
    if (course.root / CONFIG_FILE).is_file():
        shutil.copy(course.root / CONFIG_FILE, into)
    settings = json.loads((course.root / CONFIG_JSON).read_text()) if (course.root / CONFIG_JSON).is_file() else {}
    settings.setdefault("CourseDirectory", {})["db_url"] = gradebook_url(into)  # read last: it wins
    (into / CONFIG_JSON).write_text(json.dumps(settings, indent=1))
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
