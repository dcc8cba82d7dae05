"""The answer suite: hidden tests accept every right answer and reject every wrong one.

Each answer in ``tests/answers/<function>.py`` is run against the visible and the hidden
tests of its graded function, in this process (the test cells are plain Python), so the
whole suite takes seconds. A wrong answer must fail the check its file pins for it
(``CAUGHT_BY``: the start of that check's message), not merely fail something: an edit of a
test that lets it through the check meant for it shows here. The table printed at the end
of the run shows every verdict.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import traceback

import pytest

from tests.helpers.answer_suite import answer_cases, answers_for, global_settings_restored
from tests.helpers.assignments import GradedFunction, graded_functions

MIN_RIGHT_ANSWERS = 2
MIN_WRONG_ANSWERS = 3


def run_tests(function: GradedFunction, answer, hidden: bool) -> str | None:
    """Run the visible or the hidden tests of ``function`` with ``answer`` in its place.

    Returns None when they pass, else the exception they raised. The namespace is the
    instructor notebook's (imports and reference solutions); before hidden tests, the
    visible ones run on the reference, as they do before them in the graded cell, so
    that the helpers they define exist.
    """
    namespace = {"__name__": "__answer_suite__"}
    exec(compile(function.setup_code, "<setup>", "exec"), namespace)
    exec(compile(function.reference_code, "<reference solutions>", "exec"), namespace)
    if hidden:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(function.visible_tests, "<visible tests>", "exec"), namespace)
    namespace[function.name] = answer
    tests = function.hidden_tests if hidden else function.visible_tests
    try:
        with global_settings_restored():
            exec(compile(tests, f"<tests of {function.name}>", "exec"), namespace)
    except Exception as failure:  # noqa: BLE001 (any exception fails a test cell in nbgrader)
        return "".join(traceback.format_exception_only(failure)).strip()
    return None


CASES = answer_cases()


@pytest.mark.parametrize("function", graded_functions(), ids=lambda f: f.name)
def test_every_graded_function_has_enough_answers(function):
    names = answers_for(function)
    right = [name for name in names if name.startswith("right_")]
    wrong = [name for name in names if name.startswith("wrong_")]
    assert len(right) >= MIN_RIGHT_ANSWERS, f"{function.name}: only {right} right answers"
    assert len(wrong) >= MIN_WRONG_ANSWERS, f"{function.name}: only {wrong} wrong answers"


def caught_by(function: GradedFunction) -> dict[str, str]:
    """wrong answer -> the start of the message of the check that must catch it."""
    return importlib.import_module(f"tests.answers.{function.name}").CAUGHT_BY


@pytest.mark.parametrize("function", graded_functions(), ids=lambda f: f.name)
def test_every_wrong_answer_names_the_check_that_catches_it(function):
    wrong = {name for name in answers_for(function) if name.startswith("wrong_")}
    assert set(caught_by(function)) == wrong


@pytest.mark.parametrize(("function", "name", "answer"), CASES)
def test_answer(function, name, answer, answer_verdicts):
    visible = run_tests(function, answer, hidden=False)
    hidden = run_tests(function, answer, hidden=True)
    answer_verdicts(function.name, name, visible, hidden)
    if name.startswith("right_"):
        assert visible is None, f"right answer fails a visible test: {visible}"
        assert hidden is None, f"right answer fails a hidden test: {hidden}"
    else:
        assert hidden is not None, "wrong answer passes every hidden test"
        pinned = caught_by(function).get(name, "")
        assert pinned in hidden, f"not caught by the check pinned for it ({pinned!r}), but: {hidden}"
