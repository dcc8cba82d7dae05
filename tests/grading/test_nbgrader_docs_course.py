"""A course from elsewhere, held out from everything our grader was built on: nbgrader's
own documentation course (``nbgrader/docs/source/user_guide`` in the installed package),
its header notebook, its image beside the notebooks, its hand-graded answers, its two
students, and two of ours (the unchanged release, the instructor's own solutions),
graded by plain ``nbgrader autograde`` and by our command. Every score, manual-grading
flag, late penalty and ``autograded/`` file agrees, and no honest notebook is held or
noted."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbgrader
import pytest

from autograder.nbgrader_api import generate_assignment
from tests.helpers.parity import graded_alike

pytestmark = pytest.mark.slow

DOCS = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"
CONFIG = b"""c = get_config()
c.CourseDirectory.course_id = "example_course"
c.IncludeHeaderFooter.header = "source/header.ipynb"
"""


def lay_out(root: Path) -> Path:
    """The documentation course as its guide builds it: source, header, the release made
    by nbgrader, the guide's two submissions and ours."""
    shutil.copytree(DOCS / "source" / "ps1", root / "source" / "ps1")
    shutil.copy(DOCS / "source" / "header.ipynb", root / "source" / "header.ipynb")
    (root / "nbgrader_config.py").write_bytes(CONFIG)
    generate_assignment(root, "ps1")
    for student in ("bitdiddle", "hacker"):
        shutil.copytree(DOCS / "submitted" / student / "ps1", root / "submitted" / student / "ps1")
    shutil.copytree(root / "release" / "ps1", root / "submitted" / "unanswered" / "ps1")  # handed back as given
    shutil.copytree(root / "source" / "ps1", root / "submitted" / "instructor" / "ps1")  # every answer right
    return root


def test_the_documentation_course_grades_as_nbgrader_grades_it_and_holds_no_honest_notebook(tmp_path):
    got, records, _ = graded_alike(lay_out(tmp_path / "plain"))
    assert {key: outcome["notebooks"]["problem1"][:2] for key, outcome in got.items()} == {
        ("bitdiddle", "ps1"): (1.5, 10.0), ("hacker", "ps1"): (3.0, 10.0), ("unanswered", "ps1"): (0.0, 10.0),
        ("instructor", "ps1"): (3.0, 10.0)}  # the hand-graded points wait for a person, in both
    assert records == [(student, "graded", [], []) for student in ("bitdiddle", "hacker", "instructor", "unanswered")]
    # the image beside the notebooks reaches each graded folder, as nbgrader copies it
    assert all("jupyter.png" in outcome["files"] for outcome in got.values())
