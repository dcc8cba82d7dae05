"""The course module on its own: paths from nbgrader's CourseDirectory, a layout the
grader can use, and the hidden region found exactly where nbgrader finds it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import ClearHiddenTests

from autograder.course import Course, grade_id, grade_ids, hidden_delimiters, scratch_course, split_hidden
from autograder.grading.pipeline import Options, grade_course

SOURCES = [
    "visible()\n### BEGIN HIDDEN TESTS\nhidden()\n### END HIDDEN TESTS",
    "a()\n### BEGIN HIDDEN TESTS\nb()\n### END HIDDEN TESTS\nc()\n### BEGIN HIDDEN TESTS\nd()\n### END HIDDEN TESTS\n",
    "x = 1\n\n### BEGIN HIDDEN TESTS ### END HIDDEN TESTS\nstill_hidden()\n### END HIDDEN TESTS\nshown()",
    "no region at all\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_the_hidden_region_is_nbgraders(source):
    clear = ClearHiddenTests()
    cell = new_code_cell(source, metadata={"nbgrader": {"grade": True, "grade_id": "test_f", "points": 1}})
    clear.preprocess_cell(cell, {}, 0)
    shown, hidden = split_hidden(source, hidden_delimiters(clear))
    assert "\n".join(shown) == cell.source
    assert len(shown) + len(hidden) == len(source.split("\n"))


def test_paths_follow_the_course_configuration(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.release_directory = 'out'\n")
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / "p1.ipynb")
    course = Course(tmp_path)
    assert course.notebook("release", "a01") == tmp_path / "out" / "a01" / "a01.ipynb"
    assert course.notebook("submitted", "ps1", "ada") == tmp_path / "submitted" / "ada" / "ps1" / "p1.ipynb"
    assert course.folder("submitted", "ada", "a01") == tmp_path / "submitted" / "ada" / "a01"
    assert course.folder("submitted") == tmp_path / "submitted"
    assert course.layout_problem() is None


@pytest.mark.parametrize(("setting", "why"), [
    ("c.CourseDirectory.submitted_directory = '/srv/submissions'", "submitted_directory ('/srv/submissions')"),
    ("c.CourseDirectory.autograded_directory = '../elsewhere'", "autograded_directory ('../elsewhere')"),
    ("c.CourseDirectory.directory_structure = '{student_id}/{nbgrader_step}/{assignment_id}'", "directory_structure"),
    ("c.CourseDirectory.db_url = 'postgresql://grader:secret@db/gradebook'", "is not an SQLite file"),
    ("c.Execute.enabled = False", "Execute.enabled is False"),
    ("c.CourseDirectory.notebook_id = 'p1'", "notebook_id (--notebook) is set"),
    (f"c.CourseDirectory.db_url = 'sqlite:///{sys.prefix}/gradebook.db'", "lies in a folder every grading kernel"),
])
def test_a_layout_or_setting_the_grader_cannot_use_is_refused(tmp_path, setting, why):
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\n{setting}\n")
    problem = Course(tmp_path).layout_problem()
    assert why in problem
    assert "secret" not in problem


@pytest.mark.parametrize(("db_url", "where"), [
    ("sqlite:////srv/grades/gradebook.db", "/srv/grades/gradebook.db"),
    ("sqlite:///grades/gradebook.db", "COURSE/grades/gradebook.db"),  # from the course, where nbgrader runs
])
def test_a_gradebook_configured_elsewhere_is_the_one_used(tmp_path, db_url, where):
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {db_url!r}\n")
    course = Course(tmp_path)
    assert course.layout_problem() is None
    assert course.gradebook_file == Path(where.replace("COURSE", str(tmp_path)))


def test_grade_ids_of_bytes_and_cells():
    cell = new_code_cell("x", metadata={"nbgrader": {"grade_id": "f"}})
    assert grade_id(cell) == "f"
    assert grade_id(new_code_cell("x", metadata={"nbgrader": {"grade": True}})) is None
    assert grade_ids(b'{"cells": [{"metadata": {"nbgrader": {"grade_id": "f"}}}, {"metadata": 3}]}') == {"f"}
    assert grade_ids(b"not json") is None


@pytest.fixture
def r_kernel(tmp_path, monkeypatch):
    """An installed kernel that runs R (its spec only: nothing here starts it)."""
    spec = tmp_path / "jupyter" / "kernels" / "ir"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text('{"argv": ["R"], "display_name": "R", "language": "R"}')
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))


@pytest.mark.parametrize(("kernel", "why"), [
    ("ir", "source/ps1/p2.ipynb: its kernel runs R: this grader runs Python kernels only"),
    ("blah", "source/ps1/p2.ipynb: its kernel 'blah' is not installed"),
])
def test_a_source_notebook_whose_kernel_cannot_run_here_is_refused(tmp_path, r_kernel, kernel, why):
    (tmp_path / "course" / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(), tmp_path / "course" / "source" / "ps1" / "p1.ipynb")
    nbformat.write(new_notebook(metadata={"kernelspec": {"name": kernel, "display_name": "K", "language": "R"}}),
                   tmp_path / "course" / "source" / "ps1" / "p2.ipynb")
    assert Course(tmp_path / "course").layout_problem() == why


def test_an_assignment_may_have_several_notebooks_of_any_names(tmp_path):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    for name in ("p2.ipynb", "p1.ipynb"):
        nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / name)
    course = Course(tmp_path)
    assert course.layout_problem() is None
    assert course.notebook_names("ps1") == ["p1.ipynb", "p2.ipynb"]
    assert course.notebook("release", "ps1", name="p2.ipynb") == tmp_path / "release" / "ps1" / "p2.ipynb"
    with pytest.raises(ValueError, match="ps1 has 2 notebooks"):
        course.notebook("release", "ps1")


def test_a_folder_without_notebooks_is_no_assignment_and_hidden_files_no_notebooks(tmp_path):
    (tmp_path / "source" / "draft").mkdir(parents=True)
    (tmp_path / "source" / "ps1").mkdir()
    for name in ("p1.ipynb", "._p1.ipynb"):
        nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / name)
    course = Course(tmp_path)
    assert (course.assignments(), course.notebook_names("ps1"), course.layout_problem()) == (["ps1"], ["p1.ipynb"],
                                                                                              None)


@pytest.mark.parametrize("name", ["p1.ipynb~", "notes/p1.py"])
def test_an_instructor_file_the_kernels_would_see_with_solutions_or_hidden_tests_is_refused(tmp_path, name):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / "p1.ipynb")
    (tmp_path / "source" / "ps1" / "data.csv").write_text("1,2\n")
    assert Course(tmp_path).layout_problem() is None
    (tmp_path / "source" / "ps1" / name).parent.mkdir(exist_ok=True)
    (tmp_path / "source" / "ps1" / name).write_text("x = 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 4\n")
    assert Course(tmp_path).layout_problem().startswith(f"source/ps1/{name} holds solutions or hidden tests")


@pytest.mark.parametrize("config, name", [
    ("c.CourseDirectory.ignore = ['.ipynb_checkpoints', '*.pyc', '__pycache__', 'feedback', '*.md']", "p1.md"),
    ("c.CourseDirectory.ignore = ['.ipynb_checkpoints', 'solutions']", "solutions/helpers.py"),
    ("c.Autograde.exclude_overwriting = {'ps1': ['helpers.py']}", "helpers.py"),
])
def test_an_instructor_file_nbgrader_never_copies_is_no_refusal(tmp_path, config, name):
    """nbgrader's autograde copies source/ files but those ``CourseDirectory.ignore``
    matches (a jupytext twin, a folder of solutions) and those declared for students
    (the student's own copy is graded): the kernels never see these, so they are no
    reason to refuse the course; the refusal names the nbgrader way out."""
    (tmp_path / "source" / "ps1" / name).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / "p1.ipynb")
    (tmp_path / "source" / "ps1" / name).write_text("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n")
    refusal = Course(tmp_path).layout_problem()
    assert "out of source/" in refusal and "exclude_overwriting" in refusal and "remove it" not in refusal
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\n{config}\n")
    assert Course(tmp_path).layout_problem() is None


def test_a_scratch_course_keeps_its_own_gradebook_whatever_the_configuration_names(tmp_path, monkeypatch):
    """A gradebook named in the TA's Jupyter configuration or the course's: a scratch copy
    of the course (a job, the demo) never writes it, nor does nbgrader run there."""
    (tmp_path / "jupyter").mkdir()
    (tmp_path / "jupyter" / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.db_url = 'sqlite:////srv/term/gradebook.db'\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter"))
    (tmp_path / "course" / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(), tmp_path / "course" / "source" / "ps1" / "p1.ipynb")
    (tmp_path / "course" / "nbgrader_config.json").write_text('{"Execute": {"timeout": 7}}')
    course = Course(tmp_path / "course")
    assert course.gradebook_file == Path("/srv/term/gradebook.db")
    copy = scratch_course(course, tmp_path / "copy")
    assert Course(copy.root).gradebook_file == tmp_path / "copy" / "gradebook.db"
    assert json.loads((copy.root / "nbgrader_config.json").read_text())["Execute"] == {"timeout": 7}


def test_grading_a_course_the_grader_cannot_use_stops_before_anything_runs(tmp_path):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(metadata={"kernelspec": {"name": "blah", "display_name": "K", "language": "blah"}}),
                   tmp_path / "source" / "ps1" / "p1.ipynb")
    with pytest.raises(SystemExit, match="cannot grade this course: source/ps1/p1.ipynb: its kernel 'blah'"):
        grade_course(tmp_path, Options())
    assert sorted(path.name for path in tmp_path.iterdir()) == ["source"]


def _digest_after(tmp_path, change) -> tuple[str, str]:
    """The assignment's digest before and after ``change(notebook)`` is saved."""
    path = tmp_path / "source" / "ps1" / "p1.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook = new_notebook(cells=[nbformat.v4.new_markdown_cell("Prose."), new_code_cell(
        "assert f() == 1", metadata={"nbgrader": {"grade": True, "grade_id": "test_f", "points": 1}})])
    nbformat.write(notebook, path)
    before = Course(tmp_path).source_digests["ps1"]
    change(notebook)
    nbformat.write(notebook, path)
    return before, Course(tmp_path).source_digests["ps1"]


@pytest.mark.parametrize("change", [
    lambda nb: nb.cells[1].outputs.append(nbformat.v4.new_output("stream", text="ran")),
    lambda nb: nb.cells[1].metadata.update(collapsed=True, execution={"iopub.status.idle": "2026-11-24"}),
    lambda nb: nb.metadata.update(language_info={"name": "python", "version": "3.11.9"}),
    lambda nb: setattr(nb.cells[0], "source", "Prose, with a typo fixed."),
], ids=["outputs", "cell metadata", "notebook metadata", "prose"])
def test_saving_a_source_notebook_or_fixing_its_prose_regrades_no_one(tmp_path, change):
    before, after = _digest_after(tmp_path, change)
    assert before == after


def test_python_caching_a_helper_beside_a_source_notebook_regrades_no_one(tmp_path):
    """Running the instructor's notebook, which imports a helper beside it, leaves Python's
    bytecode cache there: not a change of anything grading uses."""
    before, _ = _digest_after(tmp_path, lambda nb: None)
    cache = tmp_path / "source" / "ps1" / "__pycache__"
    cache.mkdir()
    (cache / "helpers.cpython-311.pyc").write_bytes(b"compiled")
    assert Course(tmp_path).source_digests["ps1"] == before


@pytest.mark.parametrize("change", [
    lambda nb: setattr(nb.cells[1], "source", "assert f() == 2"),
    lambda nb: nb.cells[1].metadata.nbgrader.update(points=2),
    lambda nb: nb.cells.append(new_code_cell("helper = 1")),
    lambda nb: nb.metadata.update(kernelspec={"name": "other", "display_name": "Other", "language": "python"}),
], ids=["test", "points", "new code cell", "kernel"])
def test_what_grading_uses_changes_the_digest(tmp_path, change):
    before, after = _digest_after(tmp_path, change)
    assert before != after
