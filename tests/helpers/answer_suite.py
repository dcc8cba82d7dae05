"""The answer suite's parts that its two users share (``tests/test_answers.py`` runs each
answer against the hidden tests, ``tests/test_witness.py`` against the second witness):
the answers of a graded function, the pytest cases made of them, and the process-wide
torch settings each answer runs between."""

from __future__ import annotations

import contextlib
import importlib
import inspect

import pytest
import torch

from tests.helpers.assignments import GradedFunction, graded_functions


def answers_for(function: GradedFunction) -> dict:
    """name -> answer function, from ``answers/<function name>.py``."""
    module = importlib.import_module(f"tests.answers.{function.name}")
    return {
        name: value
        for name, value in inspect.getmembers(module, inspect.isfunction)
        if value.__module__ == module.__name__ and name.startswith(("right_", "wrong_"))
    }


@contextlib.contextmanager
def global_settings_restored():
    """Every answer runs in this one process, where a wrong one may switch grad mode off or
    change the default dtype for good (each graded notebook has a kernel of its own): put
    them back, so that no answer's verdict depends on the one before."""
    grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    try:
        yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)


def answer_cases(kinds: tuple[str, ...] = ("right_", "wrong_")) -> list:
    """A pytest case per answer of every graded function. The combinatorial hidden tests
    (``residual``'s 64 paths) make the whole suite a minute of CPU: every case is marked
    ``answers``, which ``make test`` runs, except each function's first answer of each
    kind, which ``make test-fast`` runs as well (``-m "not slow and not answers"``)."""
    cases = []
    for function in graded_functions():
        seen: set[str] = set()
        for name, answer in answers_for(function).items():
            kind = next((kind for kind in kinds if name.startswith(kind)), None)
            if kind is None:
                continue
            marks = () if kind not in seen else (pytest.mark.answers,)
            seen.add(kind)
            cases.append(pytest.param(function, name, answer, id=f"{function.name}-{name}", marks=marks))
    return cases
