"""End to end with nbgrader itself: submissions in a scratch course are autograded by
``nbgrader autograde`` and score exactly what their answers deserve. The same run shows
that each attack of ``tests/helpers/attacks.py`` does fake points under plain nbgrader (our
grader's side is in ``test_grading_attacks.py``)."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.answers import (
    add_scaled,
    add_scaled_,
    init_mlp_,
    shares_storage,
    xavier_uniform_,
)
from tests.helpers.attacks import CEILING, FORGED_CELL, SCORE_ATTACKS, STOPPED_BY_THE_CHECKS
from autograder.course import DEMO_CLASS
from autograder.nbgrader_api import run_nbgrader
from tests.conftest import A01
from tests.helpers.assignments import REPO, graded_functions
from tests.helpers.submissions import answered_release

pytestmark = pytest.mark.slow

# assignment -> student -> the answer typed into each exercise (left out: the stub stays).
# One assignment and one case of another are enough here: every assignment's full, empty
# and partial submissions go through nbgrader's autograde in test_grading.py, every answer
# through its tests in test_answers.py.
SUBMISSIONS = {
    "01-inplace-basics": {
        "all-right": {
            "add_scaled": add_scaled.right_scaled_y_plus_x,
            "add_scaled_": add_scaled_.right_sub_negated_alpha,
            "shares_storage": shares_storage.right_storage_objects,
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
            "add_scaled": add_scaled.right_torch_add_unless_float_alpha_on_integers,
            "add_scaled_": add_scaled_.right_add_,
            "shares_storage": shares_storage.right_typed_storage_objects,
        },
    },
    # init_mlp_ is right but calls the student's own xavier_uniform_, which is wrong.
    "03-no-grad-init": {
        "wrong-helper": {
            "xavier_uniform_": xavier_uniform_.wrong_writes_through_data,
            "init_mlp_": init_mlp_.right_modules,
        },
    },
}
FORGERIES_THAT_FOOL_NBGRADER = ["forgery-display-hook", "forgery-extra-module", "forgery-self-restoring-display",
                                "forgery-execute-request"]
# A right answer that depends on a wrong one scores zero: its tests run the student's code.
DEPENDS_ON = {"init_mlp_": "xavier_uniform_", "ema_update_model_": "ema_update_"}


def is_right(answers: dict, function: str) -> bool:
    answer = answers.get(function)
    return answer is not None and answer.__name__.startswith("right_")


def expected_scores(assignment: str, answers: dict) -> dict[str, float]:
    """Full points for a test cell whose function got a right answer, else zero."""
    scores = {}
    for function in graded_functions():
        if function.assignment != assignment:
            continue
        right = is_right(answers, function.name)
        if function.name in DEPENDS_ON and answers.get(function.name) is not None:
            # the answers module calls a right helper; the notebook calls the student's own
            right = right and is_right(answers, DEPENDS_ON[function.name])
        scores[f"test_{function.name}"] = function.points if right else 0.0
    return scores


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """(assignment, student) -> {grade cell: score}: the answers and the attacks in two
    scratch courses of equal size, graded at once by two nbgrader processes (one per core)."""
    answers = scratch_course(tmp_path_factory.mktemp("answers"))
    for assignment, students in SUBMISSIONS.items():
        for student, chosen in students.items():
            folder = answers / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(answered_release(assignment, chosen), folder / f"{assignment}.ipynb")
    attacks = scratch_course(tmp_path_factory.mktemp("attacks"))
    hostile = [*SCORE_ATTACKS, *FORGERIES_THAT_FOOL_NBGRADER]
    share = (len(hostile) - sum(len(students) for students in SUBMISSIONS.values())) // 2
    for index, student in enumerate(hostile):  # some in the answers' course: both take as long
        course = answers if index < share else attacks
        shutil.copytree(DEMO_CLASS / student / A01, course / "submitted" / student / A01)
    with ThreadPoolExecutor(2) as pool:
        graded = [pool.submit(autograde_everything, course) for course in (answers, attacks)]
        return {key: scores for done in graded for key, scores in done.result().items()}


def scratch_course(folder: Path) -> Path:
    shutil.copy(REPO / "nbgrader_config.py", folder)
    shutil.copytree(REPO / "source", folder / "source")
    return folder


def autograde_everything(course: Path) -> dict[tuple[str, str], dict[str, float]]:
    """``nbgrader generate_assignment`` and ``autograde`` for each assignment submitted."""
    names = sorted({folder.name for folder in course.glob("submitted/*/*")})
    for assignment in names:
        run_nbgrader(["generate_assignment", assignment, "--log-level=WARN"], course, check=True)
        run_nbgrader(["autograde", assignment, "--create", "--log-level=WARN"], course, check=True)
    with Gradebook(f"sqlite:///{course}/gradebook.db") as book:
        return {
            (assignment, submission.student.id): {grade.name: grade.score for grade in notebook.grades}
            for assignment in names
            for submission in book.find_assignment(assignment).submissions
            for notebook in submission.notebooks
        }


CASES = [
    pytest.param(assignment, student, id=f"{assignment}-{student}")
    for assignment, students in SUBMISSIONS.items()
    for student in students
]


@pytest.mark.parametrize(("assignment", "student"), CASES)
def test_autograde_scores_exactly_as_expected(gradebook, assignment, student):
    scores = {
        name: score
        for name, score in gradebook[assignment, student].items()
        if name.startswith("test_")
    }
    assert scores == expected_scores(assignment, SUBMISSIONS[assignment][student])


def test_assignment_01_has_full_zero_and_partial_fixtures():
    totals = {sum(expected_scores(A01, answers).values()) for answers in SUBMISSIONS[A01].values()}
    assert {0.0, 10.0} <= totals and len(totals) > 2, f"totals {totals}"


@pytest.mark.parametrize("student", sorted(set(SCORE_ATTACKS) - set(STOPPED_BY_THE_CHECKS)))
def test_each_score_attack_fakes_points_under_plain_nbgrader(gradebook, student):
    """Without our guard the attack works: more than the 7 points its answers deserve."""
    assert sum(gradebook[A01, student].values()) > 7.0


@pytest.mark.parametrize("student", STOPPED_BY_THE_CHECKS)
def test_patching_torch_changes_no_verdict_even_without_the_guard(gradebook, student):
    """The checks compare through torch's functions as they were at import."""
    assert sum(gradebook[A01, student].values()) == 7.0


@pytest.mark.parametrize("student", FORGERIES_THAT_FOOL_NBGRADER)
def test_each_forgery_fakes_points_under_plain_nbgrader(gradebook, student):
    """Plain nbgrader scores a test cell by its first execute_result and by the errors the
    display shows: these forgeries gain the points of their wrong answer there. (The
    other two, a tensor subclass and an object posing as a bool, fooled the checks as
    they were; ``test_checks.TestForgeries`` shows what they do to a naive comparison.)"""
    assert sum(gradebook[A01, student].values()) > CEILING[FORGED_CELL[student]]
