"""Triage on its own: which notebook of a folder is graded, and the named reason when none is."""

from __future__ import annotations

import json

import pytest

from autograder.grading.status import Status
from autograder.grading.submission_files import list_folder
from autograder.grading.triage import triage

CELLS = {"a01": {"intro", "add", "test_add"}, "a02": {"intro", "mask", "test_mask"}}


def notebook(*grade_ids: str) -> str:
    cells = [{"cell_type": "code", "source": "", "outputs": [], "execution_count": None,
              "metadata": {"nbgrader": {"grade_id": name}}} for name in grade_ids]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "submitted" / "ada" / "a01"
    path.mkdir(parents=True)
    return path


def verdict(folder):
    return triage(folder, list_folder(folder), "a01", CELLS, "a01.ipynb")


def test_the_notebook_named_after_the_assignment_is_graded(folder):
    (folder / "a01.ipynb").write_text(notebook("add", "test_add"))
    (folder / "scratch.ipynb").write_text(notebook())
    found = verdict(folder)
    assert (found.status, found.notebook, found.student) == (None, "a01.ipynb", "ada")
    assert found.problems == ["extra notebook ignored: scratch.ipynb"]


def test_a_renamed_notebook_is_found_by_its_own_cells_not_the_shared_ones(folder):
    (folder / "a01 (1).ipynb").write_text(notebook("intro", "add"))
    (folder / "other.ipynb").write_text(notebook("intro"))
    found = verdict(folder)
    assert found.notebook == "a01 (1).ipynb"
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
