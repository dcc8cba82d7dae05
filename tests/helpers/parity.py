"""nbgrader's own autograde scenarios, laid out as its 0.9.6 test-suite lays them out
(``nbgrader/tests/apps/test_nbgrader_autograde.py``, its fixture notebooks from the
installed package), for grading one course twice: by plain ``nbgrader autograde`` and by
our command. Several scenarios share a course, each as an assignment of its own, so that
one run of each tool grades them all; a scenario whose setting is course-wide (a time
limit, a late-penalty method) gets a course of its own.

What is compared, for each (student, assignment): every notebook's score, maximum, manual-
grading flag and late penalty, whether the submission is late, and the files of its
``autograded/`` folder with their permissions; and which folders failed to grade.
"""

from __future__ import annotations

import glob
import re
import shutil
import stat
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import nbgrader
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook

from autograder.cli import not_graded
from autograder.course import Course
from autograder.grading.pipeline import Options, grade_course
from autograder.course import GraderFolder
from autograder.results.records import Records
from autograder.nbgrader_api import generate_assignment, run_nbgrader

NBGRADER_FILES = Path(nbgrader.__file__).parent / "tests" / "apps" / "files"
DUEDATE = "2015-02-02 14:58:23.948203 America/Los_Angeles"
# Our course policy holds what the scenario notebooks import and call for review: allowed here.
POLICY = ("c.PolicyScan.allowed_imports = ['os', 'time']\nc.PolicyScan.allowed_builtins.append('open')\n"
          "c.PolicyScan.allowed_names.extend(['os.*', 'os.path.*', 'time.*'])\n")
# A submission file that is the released notebook (nbgrader's hidden-test scenarios submit it).
RELEASED = b"<the released notebook>"


def fixture(name: str) -> bytes:
    return (NBGRADER_FILES / name).read_bytes()


def empty(kernel: str | None = None) -> bytes:
    """An empty notebook, as nbgrader's tests make one (``_empty_notebook``)."""
    notebook = new_notebook()
    if kernel is not None:
        notebook.metadata.kernelspec = {"display_name": "kernel", "language": kernel, "name": kernel}
    return nbformat.writes(notebook).encode()


def late(hour: int) -> bytes:
    """A ``timestamp.txt`` for 2 February 2015 at ``hour`` o'clock (the due date is 14:58)."""
    return f"2015-02-02 {hour}:58:23.948203 America/Los_Angeles".encode()


@dataclass
class Scenarios:
    """One course: ``sources`` (assignment -> {path: content}), ``submitted``
    ((student, assignment) -> {path: content}), students already in the gradebook and
    lines of ``nbgrader_config.py``."""

    sources: dict[str, dict[str, bytes]]
    submitted: dict[tuple[str, str], dict[str, bytes]]
    config: str = ""
    course_files: dict[str, bytes] = field(default_factory=dict)
    students: tuple[str, ...] = ("foo", "bar")

    def lay_out(self, root: Path) -> Path:
        """The course in ``root``, as nbgrader's tests build it: assignments with their due
        date and students added to the gradebook, every assignment generated, then the
        submissions copied in."""
        _write(root, {"nbgrader_config.py": f"c = get_config()\n{POLICY}{self.config}".encode(), **self.course_files})
        for assignment, files in self.sources.items():
            _write(root / "source" / assignment, files)
        course = Course(root)
        with Gradebook(course.gradebook_url) as gradebook:
            for assignment in self.sources:
                gradebook.update_or_create_assignment(assignment, duedate=DUEDATE)
            for student in self.students:
                gradebook.update_or_create_student(student)
        for assignment in self.sources:
            generate_assignment(root, assignment)
        for (student, assignment), files in self.submitted.items():
            folder = course.folder("submitted", student, assignment)
            folder.mkdir(parents=True, exist_ok=True)
            _write(folder, {name: (course.notebook("release", assignment, name=name).read_bytes()
                                   if content == RELEASED else content) for name, content in files.items()})
        return root


def graded_by_nbgrader(root: Path, args: list[str] | None = None, parts: int = 1) -> tuple[dict, set]:
    """Outcomes after ``nbgrader autograde "*" ARGS``, and the (student, assignment) folders
    nbgrader said it failed on. nbgrader grades one notebook after another: with ``parts``,
    copies of the course, each holding the submissions of a share of its assignments, are
    graded at once."""
    roots = [root] if parts == 1 else [_part(root, index, parts) for index in range(parts)]
    command = ["autograde", "*", "--log-level=ERROR", *(args or [])]
    with ThreadPoolExecutor(len(roots)) as pool:
        done = list(pool.map(lambda course: run_nbgrader(command, course, capture_output=True, text=True), roots))
    failed = _still_failed(roots, {key for run in done for key in _failed_on(run.stderr)}, args or [],
                           " | ".join(run.stderr[-2000:] for run in done))
    found = {key: outcome for course in roots for key, outcome in outcomes(course).items()}
    # Python's bytecode cache of a module the notebook imports from its folder, which plain
    # nbgrader's kernel writes there (where the environment lets Python write it), is a file
    # the notebook wrote: ours keeps those in its sandbox (docs/parity.md).
    for outcome in found.values():
        if "files" in outcome:
            outcome["files"] = {name: mode for name, mode in outcome["files"].items()
                                if "__pycache__" not in Path(name).parts}
    return found, failed


def _still_failed(roots: list[Path], failed: set[tuple[str, str]], args: list[str], log: str) -> set[tuple[str, str]]:
    """Of the folders plain nbgrader failed on, those it fails on again, each graded alone.

    Plain nbgrader once failed on a folder it grades in every other run (one run in four, two
    of its processes at once): a folder counts as graded only if the run alone ends well and
    leaves its graded folder (the reference may not flake; a recovery is shown as a warning
    with ``log``, what the first runs said)."""
    still, courses = set(failed), [Course(root) for root in roots]
    for student, assignment in sorted(failed):
        course = next(course for course in courses if course.folder("submitted", student, assignment).is_dir())
        again = run_nbgrader(["autograde", glob.escape(assignment), "--log-level=ERROR", *args,
                              "--student", glob.escape(student)], course.root, capture_output=True, text=True)
        if again.returncode == 0 and course.folder("autograded", student, assignment).is_dir():
            warnings.warn(f"plain nbgrader failed on {student}/{assignment}, then graded it alone: {log}", stacklevel=3)
            still.discard((student, assignment))
    return still


def _failed_on(stderr: str) -> set[tuple[str, str]]:
    """The (student, assignment) folders ``nbgrader autograde`` said it failed on."""
    return {(student, assignment) for assignment, student in
            re.findall(r"error processing assignment '([^']*)' for student '([^']*)'", stderr)}


def _part(root: Path, index: int, parts: int) -> Path:
    """A copy of the course with the submissions of every ``parts``-th assignment only."""
    copy = root.with_name(f"{root.name}-part-{index}")
    shutil.copytree(root, copy, symlinks=True)
    mine = Course(copy).assignments()[index::parts]
    for folder in Course(copy).folder("submitted").glob("*/*"):
        if folder.name not in mine:
            shutil.rmtree(folder)
    return copy


def ours(students: tuple[str, ...] = (), force: bool = False, **overrides) -> Options:
    """Our command with nbgrader's own settings (its cell timeout, not the test-suite's
    short one), two workers, no progress bar; ``overrides`` ({Class: {trait: value}}) on top."""
    return Options(force=force, students=students, quiet=True,
                   overrides={"GradingSettings": {"workers": 2}, **overrides})


def graded_by_us(root: Path, options: Options | None = None) -> tuple[dict, set]:
    """Outcomes after our command's run, and the folders it could not grade."""
    run = grade_course(root, options or ours())
    return outcomes(root), {(record.student, record.assignment) for record in not_graded(run.records)}


def outcomes(root: Path) -> dict[tuple[str, str], dict]:
    """What nbgrader's tests assert, for every (student, assignment) either the gradebook
    or ``autograded/`` knows."""
    course = Course(root)
    found: dict[tuple[str, str], dict] = {}
    with Gradebook(course.gradebook_url) as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                found[(submission.student.id, assignment.name)] = {
                    "late": submission.total_seconds_late > 0,
                    "notebooks": {notebook.name: (notebook.score, notebook.max_score, notebook.needs_manual_grade,
                                                  notebook.late_submission_penalty)
                                  for notebook in submission.notebooks}}
    autograded = course.folder("autograded")
    for folder in sorted(autograded.glob("*/*")) if autograded.is_dir() else []:
        files = {str(path.relative_to(folder)): stat.filemode(path.stat().st_mode)
                 for path in sorted(folder.rglob("*")) if path.is_file()}
        found.setdefault((folder.parent.name, folder.name), {})["files"] = files
    return found


def graded_both_ways(plain: Path, copy: Path, nbgrader_args: list[str], options: Options,
                     parts: int = 1) -> tuple[tuple, tuple]:
    """``graded_by_nbgrader(plain, nbgrader_args, parts)`` and ``graded_by_us(copy, options)``,
    one after the other (at once, on two cores, both take longer)."""
    return graded_by_nbgrader(plain, nbgrader_args, parts), graded_by_us(copy, options)


def graded_alike(plain: Path) -> tuple[dict, list[tuple], Path]:
    """A course laid out in ``plain``, graded there by plain nbgrader and in a copy beside
    it by ours: both grade every folder, with the same outcomes. Those outcomes, our records
    as (student, status, flags, problems), and our copy."""
    ours = plain.with_name(f"{plain.name}-ours")
    shutil.copytree(plain, ours, symlinks=True)
    (expected, nbgrader_failed), (got, we_failed) = graded_by_nbgrader(plain), graded_by_us(ours)
    assert nbgrader_failed == we_failed == set()
    assert got == expected
    records = Records(GraderFolder.of(ours).records).all()
    return got, [(record.student, record.status.value, record.flags, record.problems) for record in records], ours


def copies(tmp_path: Path, scenarios: Scenarios) -> tuple[Path, Path]:
    """Two identical courses, one for each tool, each with its own gradebook: a copy of
    the first, or, where the configuration puts the gradebook outside, laid out again."""
    plain = scenarios.lay_out(tmp_path / "plain")
    if Course(plain).gradebook_file.parent != plain:
        return plain, scenarios.lay_out(tmp_path / "ours")
    shutil.copytree(plain, tmp_path / "ours", symlinks=True)
    return plain, tmp_path / "ours"


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
