"""Graded notebooks, which the formgrader and the feedback pages render, keep nothing
that can run in a browser; what decides a score and honest content stay as they were."""

from __future__ import annotations

import copy
import re

import pytest
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader import utils

from autograder.preprocessors.inert import REMOVED_KIND, MakeInert


def inert(*outputs, markdown: str = "hello"):
    notebook = new_notebook(cells=[new_code_cell("x = 1", outputs=list(outputs)), new_markdown_cell(markdown)])
    MakeInert().preprocess(notebook, {})
    return notebook.cells


def test_nothing_that_runs_is_left():
    code, text = inert(
        new_output("display_data", data={"text/html":
                                         '<b>bold</b><script>alert(1)</script><img src="x" onerror="alert(2)">',
                                         "application/javascript": "alert(3)", "text/plain": "plain"}),
        new_output("display_data", data={"image/svg+xml": '<svg onload="alert(4)"></svg>'}),
        new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "1"}}),
        new_output("execute_result", data={"text/markdown": "[x](javascript:alert(5))"}, execution_count=1),
        markdown='<script>alert(6)</script>\n\n**kept** [link](javascript:alert(7)) <a href="https://example.org">ok</a>',
    )
    assert code.outputs[0].data == {"text/html": '<b>bold</b><img src="x">', "text/plain": "plain"}
    assert code.outputs[1].data == code.outputs[2].data == {"text/plain": REMOVED_KIND}
    assert "javascript" not in code.outputs[3].data["text/markdown"]
    assert "<strong>kept</strong>" in text.source and 'href="https://example.org"' in text.source
    assert "script" not in text.source and "javascript" not in text.source and "alert" not in text.source


def test_markdown_rendered_twice_makes_no_link():
    """Pages render a Markdown cell again: what nh3 left must not turn into a link then."""
    from nbconvert.filters import markdown2html

    (_, text) = inert(markdown="<x-y>\n[Show hints](javascript:alert(document.cookie))\n</x-y>\n\n[ok](https://a.org)")
    page = markdown2html(text.source)
    assert re.findall(r'href="([^"]*)"', page) == ["https://a.org"] and "Show hints" in page


def test_what_decides_a_score_is_left_as_it_was():
    error = new_output("error", ename="AssertionError", evalue="<b>msg</b>", traceback=["<script>tb</script>"])
    stream = new_output("stream", name="stdout", text="<script>printed</script>\n")
    value = new_output("execute_result", data={"text/plain": "3.0"}, execution_count=2)
    (code, _) = inert(error, stream, value)
    assert code.outputs == [error, stream, value]  # shown escaped, as text, by every page


def test_an_answer_left_as_released_is_left_alone_and_a_changed_one_cleaned():
    released = new_markdown_cell("YOUR ANSWER HERE <b>[see](the notes)</b>")
    released.metadata["nbgrader"] = {"solution": True, "grade": True, "grade_id": "essay", "points": 2}
    released.metadata["nbgrader"]["checksum"] = utils.compute_checksum(released)
    changed = copy.deepcopy(released)
    changed.id = "changed"
    changed.source = '<img src="x" onerror="alert(1)"> my answer'
    notebook = new_notebook(cells=[released, changed])
    MakeInert().preprocess(notebook, {})
    assert notebook.cells[0].source == "YOUR ANSWER HERE <b>[see](the notes)</b>"
    assert "onerror" not in notebook.cells[1].source and "my answer" in notebook.cells[1].source



BANNER = '<div class="banner" style="color: green">10/10, all hidden tests passed</div>'


@pytest.mark.parametrize("template", ["lab", "classic"])  # the formgrader's and feedback's templates extend classic
@pytest.mark.parametrize("metadata", [{}, {"raw_mimetype": "text/html"}, {"format": "text/html"}])
def test_a_raw_cell_shows_as_text(metadata, template):
    """nbconvert passes a raw cell through as HTML when its format is HTML or none at all."""
    raw = new_raw_cell(f"```\n{BANNER}\n````\n<script>alert(1)</script>")
    raw.metadata.update(metadata)
    notebook = new_notebook(cells=[raw])
    MakeInert().preprocess(notebook, {})
    page, _ = HTMLExporter(template_name=template).from_notebook_node(notebook)
    assert '<div class="banner"' not in page and "<script>alert(1)" not in page
    assert "&lt;div class=" in page and "10/10, all hidden tests passed" in page
