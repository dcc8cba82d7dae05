"""End to end with nbgrader itself: submissions in a scratch course are autograded by
``nbgrader autograde`` and score exactly what their answers deserve."""

from __future__ import annotations

import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook

from answers import add_scaled, add_scaled_, shares_storage
from autograder.nbgrader_cli import run_nbgrader
from course import REPO, graded_functions
from submissions import answered_release

pytestmark = pytest.mark.slow

ASSIGNMENT = "01-inplace-basics"

# student -> the answer they typed into each exercise (none: the stub stays)
SUBMISSIONS = {
    "all-right": {
        "add_scaled": add_scaled.right_clone_then_in_place,
        "add_scaled_": add_scaled_.right_iadd,
        "shares_storage": shares_storage.right_storage_pointers,
    },
    "unanswered": {},
    "partial": {
        "add_scaled": add_scaled.right_operators,
        "add_scaled_": add_scaled_.wrong_rebinds,
        "shares_storage": shares_storage.wrong_identity,
    },
    # Passes every visible test and fails a hidden one in each exercise.
    "visible-tests-only": {
        "add_scaled": add_scaled.wrong_casts_to_float32,
        "add_scaled_": add_scaled_.wrong_contiguous_first,
        "shares_storage": shares_storage.wrong_data_ptr,
    },
    # Right, but torch prints a deprecation warning to stderr, which nbgrader would
    # score as a failure without the course's configuration.
    "right-with-warning": {
        "add_scaled": add_scaled.right_torch_add,
        "add_scaled_": add_scaled_.right_add_,
        "shares_storage": shares_storage.right_typed_storage,
    },
}


def expected_scores(answers: dict) -> dict[str, float]:
    """Full points for a test cell whose function got a right answer, else zero."""
    return {
        f"test_{function.name}": function.points
        if answers.get(function.name, None) and answers[function.name].__name__.startswith("right_")
        else 0.0
        for function in graded_functions()
        if function.assignment == ASSIGNMENT
    }


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    shutil.copy(REPO / "nbgrader_config.py", course)
    shutil.copytree(REPO / "source" / ASSIGNMENT, course / "source" / ASSIGNMENT)
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--log-level=WARN"], course, check=True)
    for student, answers in SUBMISSIONS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(answered_release(ASSIGNMENT, answers), folder / f"{ASSIGNMENT}.ipynb")
    run_nbgrader(
        ["autograde", ASSIGNMENT, "--create", "--log-level=WARN"], course, check=True
    )
    with Gradebook(f"sqlite:///{course}/gradebook.db") as book:
        yield {
            student: {
                grade.name: grade.score
                for grade in book.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).grades
            }
            for student in SUBMISSIONS
        }


@pytest.mark.parametrize("student", SUBMISSIONS)
def test_autograde_scores_exactly_as_expected(gradebook, student):
    scores = {name: score for name, score in gradebook[student].items() if name.startswith("test_")}
    assert scores == expected_scores(SUBMISSIONS[student])


def test_the_fixtures_cover_full_zero_and_partial_scores():
    totals = {sum(expected_scores(answers).values()) for answers in SUBMISSIONS.values()}
    assert {0.0, 10.0} < totals, totals
