"""Planning, on its own: what a submission's timestamp.txt must be before anything runs,
and which kernels guard torch."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import nbformat
import pytest

from autograder.course import Course
from autograder.grading.plan import (
    TIMESTAMP_BYTES,
    _files_for_the_kernel,
    _released_files,
    _timestamp_problem,
    _uses_torch,
    _why_graded,
)
from autograder.results.records import Record
from autograder.status import Status
from tests.helpers.assignments import REPO
from tests.helpers.parity import NBGRADER_FILES


@pytest.mark.parametrize("content", [None, b"", b"  \n", b"2015-02-02 15:58:23.948203 America/Los_Angeles"])
def test_a_time_nbgrader_reads_or_none_at_all_passes(content):
    assert _timestamp_problem(content) is None


@pytest.mark.parametrize(("content", "why"), [
    (b"But I want to be a timestamp string :(", "is not a time nbgrader can read"),
    (b"2015-02-02 \xff", "is not a time nbgrader can read"),
    (b"9" * 400, "is not a time nbgrader can read"),
    (b"2015-02-02 " * TIMESTAMP_BYTES, "more than a time needs"),
])
def test_what_nbgrader_would_fail_on_is_named_before_anything_runs(content, why):
    assert why in _timestamp_problem(content)


def test_the_guard_keeps_torch_where_the_assignment_uses_it(tmp_path):
    course = Course(REPO)
    assert all(_uses_torch(course, name, course.read("source", name)) for name in course.assignments())
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    shutil.copy(NBGRADER_FILES / "submitted-unchanged.ipynb", tmp_path / "source" / "ps1" / "p1.ipynb")
    source = Course(tmp_path).read("source", "ps1")
    assert not _uses_torch(Course(tmp_path), "ps1", source)
    source.cells.append(nbformat.v4.new_code_cell("from autograder import checks"))
    assert _uses_torch(Course(tmp_path), "ps1", source)
    source.cells.pop()
    (tmp_path / "source" / "ps1" / "helpers.py").write_text("from torchvision import ops\n")  # a test may import it
    assert _uses_torch(Course(tmp_path), "ps1", source)
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.GuardedExecute.guard_torch = False\n")
    assert not _uses_torch(Course(tmp_path), "ps1", source)


def test_why_a_folder_is_graded_again_is_said():
    before = Record("ada", "a01", Status.GRADED, fingerprint="files1 source1")
    assert [_why_graded("a01", previous, fingerprint, force) for previous, fingerprint, force in [
        (None, "files1 source1", False), (Record("ada", "a01", Status.GRADER_ERROR), "files1 source1", False),
        (before, "files1 source1", True), (before, "files2 source1", False), (before, "files1 source2", False),
    ]] == ["not graded before", "its last grading did not finish", "graded again with --force",
           "the submission changed", "source/a01 changed since (the gradebook's tests were updated)"]


def test_a_released_file_handed_back_unchanged_is_no_undeclared_file(tmp_path):
    """Students hand back the whole folder they were given: the released data file,
    unchanged, is no news (nbgrader puts the instructor's copy there anyway); a changed
    one and a file of their own are named as left out."""
    release, folder = tmp_path / "release" / "ps1", tmp_path / "submitted" / "s1" / "ps1"
    for top in (release, folder):
        (top / "data").mkdir(parents=True)
        (top / "data" / "x.csv").write_text("a,b\n1,2\n")
        (top / "helpers.py").write_text("SCALE = 2\n")
    (folder / "helpers.py").write_text("SCALE = 3\n")
    (folder / "notes.txt").write_text("mine\n")
    facts = SimpleNamespace(student_files={"ps1": []}, released_files={"ps1": _released_files(release)})
    verdict = SimpleNamespace(assignment="ps1", folder=folder)
    files, notes = _files_for_the_kernel(facts, verdict, ("data/x.csv", "helpers.py", "notes.txt", "ps1.ipynb"))
    assert (files, notes) == ({}, ["files the assignment does not declare, not given to the notebook: "
                                   "helpers.py, notes.txt"])
