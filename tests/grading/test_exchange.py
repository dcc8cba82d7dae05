"""nbgrader's exchange, the second way to hand out the course, end to end with a folder in
tmp as the exchange: the instructor releases an assignment, a student fetches it, solves it
and submits it, the instructor collects it and grades it with the course's grader, releases
the feedback, and the student fetches the grader's page. Each role has its own home,
Jupyter configuration (where the exchange's root is set, as a JupyterHub's admin sets it)
and Jupyter data folder (where ``submit`` keeps what ``fetch_feedback`` looks for). The
grader registers the assignment in the gradebook itself: releasing needs no
``generate_assignment`` beyond the committed ``release/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils

from autograder.course import scratch_course
from tests.conftest import A01, CELL_TIMEOUT
from tests.helpers.assignments import COURSE, RELEASE
from tests.fixtures.build_demo_class import RIGHT
from tests.helpers.submissions import answer_source

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Role:
    """Someone who runs nbgrader: in a folder of their own, with their own Jupyter setup."""

    home: Path
    workdir: Path

    def run(self, *command: str) -> str:
        environment = {**os.environ, "HOME": str(self.home), "JUPYTER_CONFIG_DIR": str(self.home / "config"),
                       "JUPYTER_DATA_DIR": str(self.home / "data"),
                       "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run([sys.executable, "-m", *command], cwd=self.workdir, env=environment,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr


def role(folder: Path, exchange: Path, workdir: Path, course_id: str | None = None) -> Role:
    """A role whose nbgrader configuration names the exchange (and, for a student, the course)."""
    (folder / "config").mkdir(parents=True)
    workdir.mkdir(parents=True, exist_ok=True)
    settings = [f"c.Exchange.root = {str(exchange)!r}"]
    if course_id:
        settings.append(f"c.CourseDirectory.course_id = {course_id!r}")
    (folder / "config" / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n" + "\n".join(settings))
    return Role(folder, workdir)


def test_an_assignment_goes_out_and_its_feedback_comes_back_through_the_exchange(tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    course = scratch_course(COURSE, tmp_path / "instructor" / "course", [A01]).root
    course_id = COURSE.directory.course_id
    instructor = role(tmp_path / "instructor", exchange, course)
    student = role(tmp_path / "student", exchange, tmp_path / "student" / "work", course_id)

    # The committed student version, the one the student edition ships, is what goes out.
    shutil.copytree(RELEASE / A01, course / "release" / A01)
    instructor.run("nbgrader", "release_assignment", A01)
    student.run("nbgrader", "fetch_assignment", A01)
    fetched = student.workdir / A01 / f"{A01}.ipynb"
    assert fetched.read_bytes() == (RELEASE / A01 / f"{A01}.ipynb").read_bytes()

    notebook = nbformat.read(fetched, as_version=4)
    for cell in notebook.cells:
        if utils.is_solution(cell):
            cell.source = answer_source(cell.metadata.nbgrader.grade_id, RIGHT[cell.metadata.nbgrader.grade_id])
    nbformat.write(notebook, fetched)
    student.run("nbgrader", "submit", A01)

    instructor.run("nbgrader", "collect", A01)
    name = utils.get_username()  # nbgrader's name for the student: the account that submitted
    submitted = course / "submitted" / name / A01
    assert sorted(path.name for path in submitted.iterdir()) == [f"{A01}.ipynb", "submission_secret.txt",
                                                                 "timestamp.txt"]
    instructor.run("autograder", "grade", "--course", str(course), "--quiet", "--cell-timeout", str(CELL_TIMEOUT))
    (record,) = json.loads((course / "grading" / "records.json").read_text())
    # graded without a note: nbgrader's own files (its secret among them) are no undeclared files
    assert (record["student"], record["status"], record["score"], record["problems"]) == (name, "graded", 10.0, [])
    instructor.run("nbgrader", "release_feedback", A01)

    student.run("nbgrader", "fetch_feedback", A01)
    (page,) = (student.workdir / A01 / "feedback").glob(f"*/{A01}.html")
    assert page.read_bytes() == (course / "feedback" / name / A01 / f"{A01}.html").read_bytes()
    assert "BEGIN HIDDEN TESTS" not in page.read_text()
