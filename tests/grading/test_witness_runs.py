"""The second witness's notebook (``witness_runs.witness_notebook``): what it runs of a
graded notebook, and where it stops."""

from __future__ import annotations

import nbformat

from autograder.grading import witness_runs


def _cell(source: str, test: str | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if test:
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1,
                                     "grade_id": test, "schema_version": 3}
    return cell


def _graded() -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[
        _cell("x = 1"), nbformat.v4.new_markdown_cell("text"), _cell("assert x == 1", test="first"),
        _cell("while True: pass"), _cell("assert x == 1", test="second")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def _sources(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.metadata.get("autograder", {}).get("recorder") or cell.source for cell in notebook.cells]


def test_the_witness_stops_after_its_last_recorder():
    """A loop after the last test it confirms is not run again (it timed out once already)."""
    assert _sources(witness_runs.witness_notebook(_graded(), {"first": "record(x)"})) == ["x = 1", "first"]


def test_the_witness_runs_every_cell_up_to_a_later_recorder_and_no_test():
    assert _sources(witness_runs.witness_notebook(_graded(), {"first": "r", "second": "r"})) == \
        ["x = 1", "first", "while True: pass", "second"]


def test_a_recorder_whose_test_is_gone_leaves_the_whole_notebook_to_run():
    """Its record never comes (a difference, collect's to name); nothing is cut short."""
    assert _sources(witness_runs.witness_notebook(_graded(), {"first": "r", "renamed": "r"})) == \
        ["x = 1", "first", "while True: pass"]
