"""A course of the kind other instructors write, graded by plain ``nbgrader autograde`` and
by our command: two notebooks in one assignment sharing a data folder and an instructor
module, numpy and matplotlib imported in the cells students read, ``%matplotlib inline``,
a decorator of the instructor's, figures drawn before and after the test cells and a
hand-graded plot. Honest students (the release handed back, right answers written their
own way, a wrong one) are never held, and every score, manual-grading flag and figure
agrees with nbgrader's."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.nbgrader_api import generate_assignment
from tests.helpers.parity import graded_alike

pytestmark = pytest.mark.slow

SETUP = ("%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\nfrom functools import wraps\n"
         "from helpers import load_column\n\ndef shown(f):\n    @wraps(f)\n    def inner(*args):\n"
         "        return f(*args)\n    return inner")
HELPERS = "import os\nimport numpy as np\n\n\ndef load_column(name):\n" \
          "    return np.loadtxt(os.path.join('data', name + '.csv'), delimiter=',')\n"
ANALYSIS = {
    "mean": "def column_mean(values):\n    ### BEGIN SOLUTION\n    return float(np.mean(values))\n    ### END SOLUTION",
    "test_mean": "assert column_mean(np.array([1.0, 3.0])) == 2.0\n### BEGIN HIDDEN TESTS\n"
                 "assert column_mean(load_column('heights')) == 2.0\n### END HIDDEN TESTS",
    "after": "plt.plot(load_column('heights'))\nplt.title('heights')\nplt.show()",
}
PLOTS = {
    "draw": "fig, ax = plt.subplots()\n### BEGIN SOLUTION\nax.hist(load_column('heights'))\n### END SOLUTION",
    "spread": "def spread(values):\n    ### BEGIN SOLUTION\n    return float(np.max(values) - np.min(values))\n"
              "    ### END SOLUTION",
    "test_spread": "assert spread(np.array([1.0, 4.0])) == 3.0",
    "after": "plt.plot([1, 2, 3])\nplt.show()",
}
MARKS = {
    "mean": {"solution": True, "grade": False}, "spread": {"solution": True, "grade": False},
    "test_mean": {"grade": True, "solution": False, "points": 2, "locked": True},
    "test_spread": {"grade": True, "solution": False, "points": 1, "locked": True},
    "draw": {"grade": True, "solution": True, "points": 2},  # a hand-graded plot
}
# Honest answers written as students write them: other functions than the solution's.
RIGHT = {"mean": "def column_mean(values):\n    return float(np.average(values))",
         "spread": "def spread(values):\n    return float(np.ptp(values))",
         "draw": "fig, ax = plt.subplots()\nax.plot(np.sort(load_column('heights')))\nax.set_xlabel('rank')"}
WRONG = {**RIGHT, "mean": "def column_mean(values):\n    return float(values[0])"}


def notebook(cells: dict[str, str]) -> nbformat.NotebookNode:
    made = [new_markdown_cell("# Heights\nRead the data, then answer."), new_code_cell(SETUP)]
    for name, source in cells.items():
        cell = new_code_cell(source)
        if name in MARKS:
            cell.metadata["nbgrader"] = {"grade_id": name, "locked": False, "schema_version": 3, **MARKS[name]}
        made.append(cell)
    return new_notebook(cells=made, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})


def answered(release: Path, answers: dict[str, str]) -> nbformat.NotebookNode:
    submitted = nbformat.read(release, as_version=4)
    for cell in submitted.cells:
        name = cell.metadata.get("nbgrader", {}).get("grade_id")
        if name in answers:
            cell.source = answers[name]
    return submitted


def lay_out(root: Path) -> Path:
    source = root / "source" / "ps1"
    (source / "data").mkdir(parents=True)
    (source / "data" / "heights.csv").write_text("1.0\n2.0\n3.0\n")
    (source / "helpers.py").write_text(HELPERS)
    nbformat.write(notebook(ANALYSIS), source / "analysis.ipynb")
    nbformat.write(notebook(PLOTS), source / "plots.ipynb")
    (root / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'heights'\n")
    generate_assignment(root, "ps1")
    release = root / "release" / "ps1"
    for student, answers in (("unanswered", {}), ("right", RIGHT), ("wrong", WRONG)):
        folder = root / "submitted" / student / "ps1"
        shutil.copytree(release, folder)  # students hand back the whole folder, data and module too
        for name in ("analysis.ipynb", "plots.ipynb"):
            nbformat.write(answered(release / name, answers), folder / name)
    return root


def figures(root: Path) -> dict[tuple[str, str], list[int]]:
    """The figures in each graded notebook, cell by cell."""
    def count(cell) -> int:
        return sum("image/png" in output.get("data", {}) for output in cell.get("outputs", []))
    return {(path.parts[-3], path.name): [count(cell) for cell in nbformat.read(path, as_version=4).cells]
            for path in sorted((root / "autograded").glob("*/ps1/*.ipynb"))}


def test_another_courses_kind_of_notebooks_grade_as_nbgrader_grades_them_without_a_hold(tmp_path):
    plain = lay_out(tmp_path / "plain")
    got, records, ours = graded_alike(plain)
    assert {student: (outcome["notebooks"]["analysis"][0], outcome["notebooks"]["plots"][0])
            for (student, _), outcome in got.items()} == {"unanswered": (0, 0), "right": (2, 1), "wrong": (0, 1)}
    assert records == [(student, "graded", [], []) for student in ("right", "unanswered", "wrong")]
    drawn = figures(ours)
    assert drawn == figures(plain)
    assert drawn[("right", "plots.ipynb")].count(1) == 2  # the hand-graded plot, and the figure after the test
