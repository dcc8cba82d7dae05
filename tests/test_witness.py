"""The second witness (``autograder.witness``): each graded function's recorder, run on the
instructor's solution and on every answer of ``tests/answers``, agrees for every right
answer and tells wrong values apart; records survive their trip as data."""

from __future__ import annotations

import contextlib
import io
import math

import pytest
import torch

from autograder import witness, witness_format
from tests.helpers.assignments import GradedFunction, graded_functions
from tests.helpers.answer_suite import answer_cases, answers_for, global_settings_restored


def recorder_of(function: GradedFunction) -> str:
    (source,) = witness_format.recorders_in(function.hidden_tests)
    return source


def record(function: GradedFunction, answer=None) -> witness.Record:
    """The record of ``function``'s recorder, in a notebook namespace holding the instructor's
    set-up and solutions, ``answer`` in place of the function if given; sent as a message
    would be, and read back."""
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), global_settings_restored():
        exec(compile(function.setup_code, "<setup>", "exec"), namespace)
        exec(compile(function.reference_code, "<solutions>", "exec"), namespace)
        if answer is not None:
            namespace[function.name] = answer
        message = witness.recorded(namespace, f"test_{function.name}", recorder_of(function))
    return witness.decode(message)


class _References(dict):
    """Each function's reference record, made when first asked for."""

    def __missing__(self, name: str) -> witness.Record:
        self[name] = record(next(function for function in graded_functions() if function.name == name))
        return self[name]


@pytest.fixture(scope="module")
def references() -> dict[str, witness.Record]:
    return _References()


@pytest.mark.parametrize("function", graded_functions(), ids=lambda f: f.name)
def test_every_graded_function_has_one_recorder_whose_reference_records_something(function, references):
    reference = references[function.name]
    assert reference.failure is None and len(reference.entries) >= 5, reference.failure


CASES = answer_cases(kinds=("right_",))


@pytest.mark.parametrize(("function", "name", "answer"), CASES)
def test_a_right_answer_agrees_with_the_reference(function, name, answer, references):
    assert witness.compare(references[function.name], record(function, answer)) == []


@pytest.mark.parametrize("function", graded_functions(), ids=lambda f: f.name)
def test_the_witness_tells_some_wrong_answer_from_the_reference(function, references):
    """A recorder that records nothing a wrong answer changes would agree with anything."""
    told = any(witness.compare(references[function.name], record(function, answer))
               for name, answer in answers_for(function).items() if name.startswith("wrong_"))
    assert told, f"no wrong answer of {function.name} records other values than the reference"


def test_records_travel_as_data_and_differences_are_named():
    sent = witness.Recorder()
    sent("tensor", torch.tensor([1.0, float("nan")]))
    sent("float", float("inf"))
    sent("nested", {"a": (1, [True, None, "x"]), "size": torch.Size([2])})
    sent("module", torch.nn.Linear(2, 1).requires_grad_(False))
    sent.call("raises", math.sqrt, -1)
    back = witness.decode(sent.message("test_f"))
    assert back.failure is None and witness.compare(back, back) == []
    changed = witness.Recorder()
    changed("tensor", torch.tensor([1.0, 2.0]))
    changed("float", 1.0)
    changed("nested", {"a": (1, [True, None, "y"]), "size": torch.Size([2])})
    differences = witness.compare(back, witness.decode(changed.message("test_f")), most=5)
    assert differences[0].startswith("tensor: values differ") and differences[1] == "float: 1.0, expected inf"
    assert differences[2].startswith("nested: 'a': item 1: item 2:")
    assert differences[3].startswith("module: not recorded")


def test_a_record_that_is_not_data_is_a_failure_not_a_crash():
    assert witness.decode({"entries": [], "tensors": "bm90IGEgYmxvYg=="}).failure.startswith("the witness's tensors")
    assert witness.decode("a string").failure == "the witness sent no readable record"
