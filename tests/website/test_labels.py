"""The MyST label of a heading another page links to (``project``): made from the English
heading in the same place, one per heading."""

from __future__ import annotations

from nbformat.v4 import new_markdown_cell, new_notebook

from autograder.website import project


def test_two_headings_that_read_alike_as_identifiers_get_labels_of_their_own():
    english = new_notebook(cells=[new_markdown_cell("# T\n## x.add\n## x-add\n## ???")])
    linking = new_notebook(cells=[new_markdown_cell("[a](a.ipynb#x.add) [b](a.ipynb#x-add) [c](a.ipynb#???)")])
    notebooks = {"a.ipynb": english, "b.ipynb": linking}
    assert project._labels(notebooks, notebooks, "en") == {
        "a.ipynb": {"x.add": "en-a-x-add", "x-add": "en-a-x-add-3", "???": "en-a-heading"}}
