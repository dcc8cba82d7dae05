"""Repair on its own: nbgrader marks that editing broke are put back from the release, and
each repair is named; what the student wrote is never dropped."""

from __future__ import annotations

import copy

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.course import grade_id
from autograder.intake.repair import repair


def marked(cell, grade_id: str, **marks):
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "grade": False, "solution": False, "locked": False, **marks}
    return cell


RELEASE = new_notebook(cells=[
    marked(new_markdown_cell("# Exercise"), "intro", locked=True),
    marked(new_code_cell("def add(x, y):\n    # YOUR CODE HERE\n    raise NotImplementedError()"), "add",
           solution=True),
    marked(new_code_cell("assert add(1, 2) == 3"), "test_add", grade=True, locked=True, points=2),
])


def submission():
    notebook = copy.deepcopy(RELEASE)
    notebook.cells[1].source = "def add(x, y):\n    return x + y"
    return notebook


def test_an_untouched_submission_needs_no_repair():
    notebook = submission()
    assert repair(notebook, RELEASE) == []
    assert [grade_id(cell) for cell in notebook.cells] == ["intro", "add", "test_add"]


def test_edited_marks_get_the_released_ones_back():
    notebook = submission()
    notebook.cells[2].metadata.nbgrader.update(solution=True, points=100)
    assert repair(notebook, RELEASE) == ["put back the released nbgrader marks of cell test_add"]
    assert notebook.cells[2].metadata.nbgrader == RELEASE.cells[2].metadata.nbgrader


def test_marks_edited_in_several_cells_come_back_in_one_note():
    notebook = submission()
    for cell in notebook.cells:
        cell.metadata.nbgrader["points"] = 7
    assert repair(notebook, RELEASE) == ["put back the released nbgrader marks of 3 cells: intro, add, test_add"]
    assert [cell.metadata.nbgrader for cell in notebook.cells] == [cell.metadata.nbgrader for cell in RELEASE.cells]


def test_a_notebook_made_from_an_older_release_gets_its_marks_back_without_a_note():
    """nbgrader's bookkeeping differs (checksums, schema version, points written 1.0):
    nothing the student did, and nothing that grades differently."""
    notebook = submission()
    for cell in notebook.cells:
        cell.metadata.nbgrader.update(checksum="0ld", schema_version=1)
        cell.metadata.nbgrader.pop("cell_type", None)
        if "points" in cell.metadata.nbgrader:
            cell.metadata.nbgrader["points"] = float(cell.metadata.nbgrader["points"])
    assert repair(notebook, RELEASE) == []
    assert [cell.metadata.nbgrader for cell in notebook.cells] == [cell.metadata.nbgrader for cell in RELEASE.cells]


def test_a_cell_the_assignment_lacks_loses_its_marks_and_keeps_its_code():
    notebook = submission()
    notebook.cells.append(marked(new_code_cell("bonus = 1"), "my_bonus", grade=True, points=5))
    assert repair(notebook, RELEASE) == ["removed the nbgrader marks of a cell the assignment does not have: my_bonus"]
    assert "nbgrader" not in notebook.cells[-1].metadata and notebook.cells[-1].source == "bonus = 1"


def test_of_duplicated_cells_the_matching_one_keeps_the_marks():
    notebook = submission()
    notebook.cells.insert(2, copy.deepcopy(notebook.cells[2]))
    notebook.cells[2].source = "print('my own check')"
    notes = repair(notebook, RELEASE)
    assert notes == ["cell test_add appeared 2 times: graded the one that matches"]
    assert [grade_id(cell) for cell in notebook.cells] == ["intro", "add", None, "test_add"]


def test_a_deleted_test_cell_comes_back_after_its_answer():
    notebook = submission()
    del notebook.cells[2]
    notebook.cells.append(new_code_cell("print('later work')"))
    assert repair(notebook, RELEASE) == ["restored the deleted test cell test_add"]
    assert [grade_id(cell) for cell in notebook.cells] == ["intro", "add", "test_add", None]


def test_stripped_marks_come_back_where_the_source_matches():
    notebook = submission()
    for cell in notebook.cells:
        del cell.metadata["nbgrader"]
    assert repair(notebook, RELEASE) == ["restored the nbgrader metadata of 3 cells: intro, add, test_add"]
    assert [grade_id(cell) for cell in notebook.cells] == ["intro", "add", "test_add"]


def test_malformed_marks_are_removed_by_name():
    notebook = submission()
    notebook.cells.append(new_code_cell("x = 1", metadata={"nbgrader": {"grade": True}}))
    assert repair(notebook, RELEASE) == ["removed malformed nbgrader metadata from a cell"]
