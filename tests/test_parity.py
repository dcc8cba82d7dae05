"""Parity with nbgrader: nbgrader's own autograde scenarios (its 0.9.6 test-suite's fixture
notebooks, from the installed package), laid out as its tests lay them out
(``source/ps1/p1.ipynb``), graded by plain ``nbgrader autograde`` and by our command on
copies of one course; the scores and manual-grading flags must agree, or the difference
be deliberate (README, "Where grades differ from plain nbgrader").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbgrader
import pytest

from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.grading.pipeline import Options, grade_course
from autograder.nbgrader_api import run_nbgrader
from conftest import fast

pytestmark = pytest.mark.slow

NBGRADER_FILES = Path(nbgrader.__file__).parent / "tests" / "apps" / "files"
# The scenario notebooks import what the course's policy would hold for review.
CONFIG = "c = get_config()\nc.PolicyScan.allowed_imports = ['os']\n"


def course_with(tmp_path: Path, name: str, source: str, submissions: dict[str, str]) -> Path:
    root = tmp_path / name
    (root / "source" / "ps1").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(CONFIG)
    shutil.copy(NBGRADER_FILES / source, root / "source" / "ps1" / "p1.ipynb")
    for student, fixture in submissions.items():
        (root / "submitted" / student / "ps1").mkdir(parents=True)
        shutil.copy(NBGRADER_FILES / fixture, root / "submitted" / student / "ps1" / "p1.ipynb")
    return root


def outcomes(root: Path) -> dict[str, tuple[float, float, bool]]:
    """Each student's (score, max_score, needs_manual_grade) for the notebook of ps1."""
    with Gradebook(Course(root).gradebook_url) as gradebook:
        return {submission.student.id: (notebook.score, notebook.max_score, notebook.needs_manual_grade)
                for submission in gradebook.find_assignment("ps1").submissions
                for notebook in submission.notebooks}


def graded_both_ways(tmp_path: Path, source: str, submissions: dict[str, str]) -> tuple[dict, dict]:
    plain = course_with(tmp_path, "plain", source, submissions)
    run_nbgrader(["generate_assignment", "ps1", "--log-level=WARN"], plain, check=True, capture_output=True)
    run_nbgrader(["autograde", "ps1", "--create", "--log-level=WARN"], plain, capture_output=True)
    ours = course_with(tmp_path, "ours", source, submissions)
    grade_course(ours, Options(**fast()))
    return outcomes(plain), outcomes(ours)


def test_the_kernel_is_told_it_is_autograding(tmp_path):
    """nbgrader's test_grade_with_validating_envvar: the cell fails under NBGRADER_EXECUTION."""
    plain, ours = graded_both_ways(tmp_path, "validating-environment-variable.ipynb",
                                   {"foo": "validating-environment-variable.ipynb"})
    assert plain == ours == {"foo": (0.0, 1.0, False)}


def test_submissions_and_cheat_attempts_score_as_under_nbgrader(tmp_path):
    """nbgrader's test_grade and test_showtraceback_exploit: an unchanged submission, a
    changed one (manually graded cells answered), and two attempts to hide errors through
    IPython's showtraceback (ours also holds those two for review: the same flag here)."""
    plain, ours = graded_both_ways(tmp_path, "submitted-unchanged.ipynb", {
        "foo": "submitted-unchanged.ipynb", "bar": "submitted-changed.ipynb",
        "spam": "submitted-cheat-attempt.ipynb", "eggs": "submitted-cheat-attempt-alternative.ipynb"})
    assert plain == ours == {"foo": (1.0, 7.0, False), "bar": (2.0, 7.0, True),
                             "spam": (1.0, 7.0, True), "eggs": (1.0, 7.0, True)}
