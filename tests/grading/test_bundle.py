"""An assignment's bundle: what a worker gets instead of the TA's course folder, and a
job that names nothing of the TA's machine."""

from __future__ import annotations

import io
import pickle
import sqlite3
import tarfile

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.gradebook import register_assignments
from autograder.grading.bundle import config_folders, job_course, make_bundle, unpacked
from autograder.grading.jobs import JobSettings, make_job
from autograder.nbgrader_api import use_config_folders

pytestmark = pytest.mark.slow  # each test makes a course and its gradebook through nbgrader: about half a second

TEST_CELL = {"grade": True, "grade_id": "check", "locked": True, "points": 2, "schema_version": 3, "solution": False}


@pytest.fixture
def course(tmp_path, monkeypatch) -> Course:
    """Two assignments, a graded submission of the other one, a student with a name, and
    the TA's own Jupyter configuration setting the per-cell timeout."""
    ta_config = tmp_path / "ta-jupyter"
    ta_config.mkdir()
    (ta_config / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = 77\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(ta_config))
    root = tmp_path / "ta-course-folder"
    for assignment in ("ps1", "ps2"):
        (root / "source" / assignment).mkdir(parents=True)
        nbformat.write(new_notebook(cells=[new_code_cell("assert True", metadata={"nbgrader": TEST_CELL})]),
                       root / "source" / assignment / "p1.ipynb")
    course = Course(root)
    register_assignments(course)
    with Gradebook(course.gradebook_url) as gradebook:
        gradebook.update_or_create_student("eve", first_name="Eve", email="eve@example.org")
        gradebook.update_or_create_submission("ps2", "eve")
    return course


def test_a_bundle_holds_its_assignment_the_students_ids_and_the_tas_configuration(course, tmp_path, monkeypatch):
    bundle = make_bundle(course, "ps1", tmp_path / "scratch")
    names = tarfile.open(fileobj=io.BytesIO(bundle.content)).getnames()
    assert "source/ps1/p1.ipynb" in names and not any("ps2" in name for name in names)
    assert str(course.root).encode() not in bundle.content  # no path of the TA's machine
    template = unpacked(bundle.digest, bundle.content, tmp_path / "worker")
    with sqlite3.connect(template / "gradebook.db") as database:
        assert database.execute("select name from assignment").fetchall() == [("ps1",)]
        assert database.execute("select id, first_name, email from student").fetchall() == [("eve", None, None)]
        assert database.execute("select count(*) from submitted_assignment").fetchall() == [(0,)]
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "the-workers-own"))  # another host's configuration
    try:
        use_config_folders(config_folders(template))
        assert job_course(template, tmp_path / "job", {}).config.Execute.timeout == 77
    finally:
        use_config_folders(None)
    assert Course(tmp_path / "job").config.Execute.get("timeout") != 77  # the host's own, once it reads its own


def test_a_bundle_that_does_not_match_its_digest_is_refused(course, tmp_path):
    bundle = make_bundle(course, "ps1", tmp_path / "scratch")
    with pytest.raises(ValueError, match="does not match its digest"):
        unpacked(bundle.digest, bundle.content + b"\0", tmp_path / "worker")


def test_a_job_names_nothing_of_the_tas_machine(course, tmp_path):
    bundle = make_bundle(course, "ps1", tmp_path / "scratch")
    job = make_job(student="eve", assignment="ps1", bundle=bundle.digest,
                   notebooks={"p1.ipynb": course.read("source", "ps1", name="p1.ipynb")}, files={},
                   settings=JobSettings(60.0, {"Execute": {"timeout": 5}}))
    assert str(course.root).encode() not in pickle.dumps(job)
    assert str(tmp_path).encode() not in pickle.dumps(job)
