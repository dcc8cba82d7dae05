"""Triage on its own: which notebook of a folder is graded, and the named reason when none is."""

from __future__ import annotations

import json

import pytest

from autograder.status import Status
from autograder.intake.submission_files import list_folder
from autograder.intake.triage import triage

CELLS = {"a01": {"a01.ipynb": {"intro", "add", "test_add"}}, "a02": {"a02.ipynb": {"intro", "mask", "test_mask"}}}
# nbgrader's own layout: one assignment of two notebooks, each named differently from it.
TWO = {"ps1": {"p1.ipynb": {"p1_answer", "p1_test"}, "p2.ipynb": {"p2_answer", "p2_test"}}}


def notebook(*grade_ids: str) -> str:
    cells = [{"cell_type": "code", "source": "", "outputs": [], "execution_count": None,
              "metadata": {"nbgrader": {"grade_id": name}}} for name in grade_ids]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "submitted" / "ada" / "a01"
    path.mkdir(parents=True)
    return path


def verdict(folder, cells=CELLS, assignment="a01"):
    return triage(folder, list_folder(folder), assignment, cells)


def test_the_notebook_named_after_the_assignment_is_graded(folder):
    (folder / "a01.ipynb").write_text(notebook("add", "test_add"))
    (folder / "scratch.ipynb").write_text(notebook())
    found = verdict(folder)
    assert (found.status, list(found.notebooks), found.student) == (None, ["a01.ipynb"], "ada")
    assert found.problems == ["extra notebook ignored: scratch.ipynb"]


def test_a_renamed_notebook_is_found_by_its_own_cells_not_the_shared_ones(folder):
    (folder / "a01 (1).ipynb").write_text(notebook("intro", "add"))
    (folder / "other.ipynb").write_text(notebook("intro"))
    found = verdict(folder)
    assert found.notebooks["a01.ipynb"][0] == "a01 (1).ipynb"
    assert "renamed notebook: a01 (1).ipynb graded as a01.ipynb" in found.problems


@pytest.mark.parametrize(("files", "status", "detail"), [
    ({}, Status.MISSING, "expected a01.ipynb; found no notebook at all"),
    ({"notes.ipynb": notebook("intro")}, Status.MISSING, "expected a01.ipynb; found notes.ipynb"),
    ({"a01.ipynb": "{not json"}, Status.UNREADABLE, "a01.ipynb is not valid notebook JSON"),
    ({"a01.ipynb": notebook()}, Status.EMPTY, "a01.ipynb has no cells"),
    ({"a01.ipynb": notebook("intro", "mask")}, Status.WRONG_ASSIGNMENT, "a01.ipynb holds the exercises of a02"),
])
def test_what_cannot_be_graded_is_named(folder, files, status, detail):
    for name, content in files.items():
        (folder / name).write_text(content)
    found = verdict(folder)
    assert (found.status, found.detail) == (status, detail)


def test_each_notebook_of_an_assignment_is_found_by_name_or_by_its_cells(folder):
    (folder / "p1.ipynb").write_text(notebook("p1_answer", "p1_test"))
    (folder / "p2 (copy).ipynb").write_text(notebook("p2_answer"))
    found = verdict(folder, TWO, "ps1")
    assert {name: submitted for name, (submitted, _) in found.notebooks.items()} == {
        "p1.ipynb": "p1.ipynb", "p2.ipynb": "p2 (copy).ipynb"}
    assert found.problems == ["renamed notebook: p2 (copy).ipynb graded as p2.ipynb"]


def test_a_notebook_left_out_or_broken_scores_zero_and_the_others_are_graded(folder):
    """nbgrader gives a missing notebook zero and grades the rest; a broken one is named."""
    (folder / "p2.ipynb").write_text(notebook("p2_answer", "p2_test"))
    found = verdict(folder, TWO, "ps1")
    assert (list(found.notebooks), found.problems) == (["p2.ipynb"], ["p1.ipynb is missing: scored zero"])
    (folder / "p1.ipynb").write_text("{not json")
    found = verdict(folder, TWO, "ps1")
    assert (found.status, list(found.notebooks), found.problems) == (None, ["p2.ipynb"], [])
    assert found.unusable == [(Status.UNREADABLE, "p1.ipynb is not valid notebook JSON")]


def test_another_notebook_of_the_assignment_is_never_graded_as_a_missing_one(folder):
    (folder / "p2.ipynb").write_text(notebook("p1_answer", "p2_answer"))
    assert list(verdict(folder, TWO, "ps1").notebooks) == ["p2.ipynb"]
