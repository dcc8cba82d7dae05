"""The course module on its own: paths from nbgrader's CourseDirectory, a layout the
grader can use, and the hidden region found exactly where nbgrader finds it."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import ClearHiddenTests

from autograder.course import Course, grade_id, grade_ids, hidden_delimiters, split_hidden
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
    # What the grader cannot honour yet, rather than grade differently from nbgrader:
    ("c.CourseDirectory.db_url = 'sqlite:////srv/gradebook.db'", "CourseDirectory.db_url is set"),
    ("c.CourseDirectory.student_id_exclude = 'ta1'", "CourseDirectory.student_id_exclude is set"),
    ("c.Autograde.create_student = False", "Autograde.create_student is set"),
])
def test_a_layout_or_setting_the_grader_cannot_use_is_refused(tmp_path, setting, why):
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\n{setting}\n")
    assert why in Course(tmp_path).layout_problem()


def test_grade_ids_of_bytes_and_cells():
    cell = new_code_cell("x", metadata={"nbgrader": {"grade_id": "f"}})
    assert grade_id(cell) == "f"
    assert grade_id(new_code_cell("x", metadata={"nbgrader": {"grade": True}})) is None
    assert grade_ids(b'{"cells": [{"metadata": {"nbgrader": {"grade_id": "f"}}}, {"metadata": 3}]}') == {"f"}
    assert grade_ids(b"not json") is None


@pytest.mark.parametrize(("notebooks", "language", "why"), [
    (["p1.ipynb", "p2.ipynb"], "python", "source/ps1 holds p1.ipynb, p2.ipynb: one notebook per assignment"),
    (["ps1.ipynb"], "R", "source/ps1 is written in R"),
])
def test_notebooks_the_grader_cannot_grade_as_nbgrader_would_are_refused(tmp_path, notebooks, language, why):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    for name in notebooks:
        nbformat.write(new_notebook(metadata={"kernelspec": {"name": "k", "display_name": "K", "language": language}}),
                       tmp_path / "source" / "ps1" / name)
    assert why in Course(tmp_path).layout_problem()


def test_grading_a_course_the_grader_cannot_use_stops_before_anything_runs(tmp_path):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    for name in ("p1.ipynb", "p2.ipynb"):
        nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / name)
    with pytest.raises(SystemExit, match="cannot grade this course: source/ps1 holds p1.ipynb, p2.ipynb"):
        grade_course(tmp_path, Options())
    assert sorted(path.name for path in tmp_path.iterdir()) == ["source"]
