"""The static scan: it names the lines of every attack, and no right answer of the
answer suite (what honest students write) trips it."""

from __future__ import annotations

import importlib
import inspect

import nbformat
import pytest

from attacks import HARM_ATTACKS, SCORE_ATTACKS, UNDOABLE_ATTACKS
from autograder.grading.scan import instructor_cells, suspicious_lines
from course import graded_functions, source_notebook

QUIET_ATTACKS = ("attack-files", "attack-memory")  # plain Python and torch: the sandbox's job


def notebook_of(*sources: str, grade_id: str | None = None) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    if grade_id:
        cells[0].metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "solution": False}
    return nbformat.v4.new_notebook(cells=cells)


ATTACKS = {**SCORE_ATTACKS, **HARM_ATTACKS, **UNDOABLE_ATTACKS}


@pytest.mark.parametrize("student", sorted(ATTACKS))
def test_every_attack_is_flagged(student):
    code = ATTACKS[student]
    findings = suspicious_lines(notebook_of(code), set())
    assert bool(findings) is (student not in QUIET_ATTACKS), findings


def test_no_right_answer_is_flagged():
    sources = [
        inspect.getsource(answer)
        for function in graded_functions()
        for name, answer in vars(importlib.import_module(f"answers.{function.name}")).items()
        if name.startswith("right_")
    ]
    assert len(sources) > 30
    assert suspicious_lines(notebook_of(*sources), set()) == []


def test_only_cells_with_the_instructors_ids_are_skipped():
    source = nbformat.read(source_notebook("01-inplace-basics"), as_version=4)
    ids = instructor_cells(source)
    assert {"test_add_scaled", "imports"} <= ids and "add_scaled" not in ids
    attack = SCORE_ATTACKS["attack-input-transformer"]
    assert suspicious_lines(notebook_of(attack, grade_id="test_add_scaled"), ids) == []
    forged = suspicious_lines(notebook_of(attack, grade_id="my-own-test"), ids)
    assert forged and forged[0].startswith("cell 1 (my-own-test), line 3: get_ipython")


def test_ipython_syntax_is_scanned_too():
    findings = suspicious_lines(notebook_of("!rm -rf ~\n%time x = 1"), set())
    assert findings and "get_ipython" in findings[0]
