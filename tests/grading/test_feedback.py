"""Feedback pages never show the hidden tests, however an output dresses them up, nor
anything their run produced but its verdict, nor a raw cell as markup; honest content is
left as it was."""

from __future__ import annotations

import functools
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader.converters import GenerateFeedback

from autograder.grading import feedback
from autograder.preprocessors.hidden_tests import HIDDEN_OUTPUTS_FROM, REMOVED, REMOVED_OUTPUT, normalised

SECRET = "for case in cases.operand_cases(seed=101, count=24):"
TEST = ("checks.assert_values_close(result, expected, 'f')\n"
        f"### BEGIN HIDDEN TESTS\n{SECRET}\n    pass\n### END HIDDEN TESTS")
NOT_SHOWN = "hidden tests' output is not shown"
JOINER = "\u034f"  # combining grapheme joiner (Mn), which draws nothing


@functools.cache
def feedback_steps() -> tuple:
    """The steps ``render_feedback`` appends to nbgrader's feedback preprocessors."""
    given = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(feedback, "generate_feedback", lambda course, assignment, student, config: given.update(config))
        feedback.render_feedback(Path("course"), "a", "s")
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    return tuple(step for step in given["GenerateFeedback"]["preprocessors"] if step not in defaults)


def as_feedback(*cells) -> nbformat.NotebookNode:
    notebook = new_notebook()
    notebook.cells = list(cells)  # as nbformat reads a graded notebook: marks and all
    for step in feedback_steps():
        notebook, _ = step().preprocess(notebook, {})
    return notebook


def code_cell(source: str, *outputs):
    cell = new_code_cell(source)
    cell.outputs = list(outputs)  # nbformat's schema has no metadata for streams: set after it checked
    return cell


def grade_cell(*outputs, source: str = TEST, hidden_from: int | None = None):
    """A graded test cell; ``hidden_from``: the first of ``outputs`` the grader saw its hidden tests make."""
    cell = code_cell(source, *outputs)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f", "points": 1, "solution": False}
    if hidden_from is not None:
        cell.metadata["autograder"] = {HIDDEN_OUTPUTS_FROM: hidden_from}
    return cell


def shown(*outputs, markdown: str = "hello **world**", own: str = "x = 1") -> nbformat.NotebookNode:
    return as_feedback(grade_cell(), new_code_cell(own, outputs=list(outputs)), new_markdown_cell(markdown))


def stream(text: str):
    return new_output("stream", name="stdout", text=text)


def test_the_hidden_section_leaves_the_test_cell():
    notebook = shown()
    assert SECRET not in notebook.cells[0].source and "assert_values_close" in notebook.cells[0].source


def test_a_students_cell_naming_the_delimiters_is_left_alone():
    own = 'found = [s for s in history if "BEGIN HIDDEN TESTS" in s]'
    notebook = shown(own=own)
    assert notebook.cells[1].source == own and SECRET not in notebook.cells[0].source


def test_a_quoted_hidden_line_is_removed_however_it_is_dressed():
    dressed = [
        stream(f"before\n{SECRET}\nafter\n"),
        stream("\x1b[0m".join(SECRET)),
        stream("\n".join(SECRET)),
        new_output("display_data", data={"text/html": "".join(f"&#{ord(c)};" for c in SECRET)}),
        new_output("display_data", data={"image/svg+xml":
                                         f"<svg><text>{SECRET[:20]}</text><text>{SECRET[20:]}</text></svg>",
                                         "text/plain": "<SVG>"}),
        new_output("error", ename="AssertionError", evalue=SECRET, traceback=[f"\x1b[31m{SECRET}\x1b[0m"]),
    ]
    outputs = shown(*dressed).cells[1].outputs
    assert outputs[0].text == f"before\n{REMOVED}after\n"
    assert outputs[1].text.startswith(REMOVED) and outputs[2].text.startswith(REMOVED_OUTPUT)
    assert outputs[3].data == {"text/plain": REMOVED_OUTPUT}
    assert outputs[4].data == {"text/plain": REMOVED_OUTPUT}
    assert outputs[5].evalue == REMOVED and outputs[5].traceback == [REMOVED]
    for output in outputs:
        assert normalised(SECRET) not in normalised(str(output))


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def bold(text: str) -> str:
    """Mathematical bold letters and digits, which NFKC folds back."""
    return "".join(chr(0x1D400 + ord(c) - 65) if "A" <= c <= "Z" else chr(0x1D41A + ord(c) - 97) if "a" <= c <= "z"
                   else chr(0x1D7CE + ord(c) - 48) if "0" <= c <= "9" else c for c in text)


@pytest.mark.parametrize("dressed", [
    JOINER.join(SECRET),  # combining grapheme joiner: the leak that got all 203 lines through
    "\ufe0f".join(SECRET),  # a variation selector
    "\u0301".join(SECRET),  # an accent that NFKC would compose with the letter before it
    "\u3164".join(SECRET),  # Hangul filler
    "\u2800".join(SECRET),  # braille blank
    fullwidth(SECRET),
    bold(SECRET),
    "".join(f"\x1b[3{i % 8}m{c}\u200b\u2060" + (JOINER if i % 2 else "\ufe0e")
            for i, c in enumerate(fullwidth(SECRET))),
], ids=["grapheme-joiner", "variation-selector", "composing-accent", "hangul-filler", "braille-blank", "fullwidth",
        "mathematical-bold", "ansi-zero-width-and-marks"])
def test_a_quote_in_invisible_or_folded_characters_is_removed(dressed):
    (output,) = shown(stream(f"before\n{dressed}\nafter\n")).cells[1].outputs
    assert output.text == f"before\n{REMOVED}after\n"


def test_honest_output_is_left_as_it_was():
    outputs = shown(stream("add_scaled: the visible tests pass.\n"),
                    new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
                    stream("résumé: 测试 ｔｅｓｔ passed\n"),
                    ).cells[1].outputs
    assert outputs[0].text == "add_scaled: the visible tests pass.\n"
    assert outputs[1].data == {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
    assert outputs[2].text == "résumé: 测试 ｔｅｓｔ passed\n"


def test_a_test_cell_shows_its_visible_part_and_of_the_hidden_part_only_the_verdict():
    message = "\n".join(f"line {i}: " + JOINER.join("expected 3.0") + " " + "x" * 60 for i in range(20))
    cell = grade_cell(
        stream("visible: add_scaled passes\n"),
        new_output("display_data", data={"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}),
        stream("hidden: case 7 of 24, seed 101, operands (3, 5)\n"),
        new_output("display_data", data={"text/html": "<b>hidden case table</b>"}),
        new_output("error", ename=f"Assertion{JOINER}Error", evalue=f"\x1b[31m{message}\x1b[0m",
                   traceback=["Traceback", "hidden frame"]),
        hidden_from=2,
    )
    (test,) = as_feedback(cell).cells
    visible, figure, notice, error = test.outputs
    assert visible.text == "visible: add_scaled passes\n" and figure.data["image/png"] == "iVBORw0KGgo="
    assert notice.output_type == "stream" and NOT_SHOWN in notice.text
    assert error.ename == "AssertionError"
    assert error.evalue.startswith("line 0: expected 3.0 xxx") and len(error.evalue.splitlines()) <= 5
    assert len(error.evalue) <= 510 and "\x1b" not in error.evalue and JOINER not in error.evalue
    assert error.traceback == [f"AssertionError: {error.evalue}"]
    for produced in ("case 7 of 24", "hidden case table", "hidden frame", "autograder"):
        assert produced not in str(test.outputs)
    nbformat.validate(new_notebook(cells=[test]))  # a stream or an error has no metadata


def test_the_verdict_of_the_hidden_part_does_not_quote_it():
    cell = grade_cell(new_output("error", ename="AssertionError", evalue=f"case 3 of\n{JOINER.join(SECRET)}\n",
                                 traceback=[]), hidden_from=0)
    (error,) = as_feedback(cell).cells[0].outputs
    assert error.evalue.startswith("case 3 of\n") and REMOVED.strip() in error.evalue
    assert normalised(SECRET) not in normalised(str(error))


def test_a_notebook_graded_without_the_marks_shows_a_test_cells_hidden_part_as_its_verdict_only():
    without_hidden = grade_cell(stream("visible only\n"), source="checks.assert_values_close(result, expected, 'f')")
    with_hidden = grade_cell(stream("printed by a hidden test\n"),
                            new_output("error", ename="AssertionError", evalue="f(2) should be 4", traceback=["tb"]))
    own = new_code_cell("x = 1", outputs=[stream("mine\n")])
    kept, (notice, error), (mine,) = (cell.outputs for cell in as_feedback(without_hidden, with_hidden, own).cells)
    assert kept[0].text == "visible only\n" and mine.text == "mine\n"
    assert NOT_SHOWN in notice.text and (error.ename, error.evalue) == ("AssertionError", "f(2) should be 4")


def test_the_graders_mark_leaves_the_page_and_a_students_own_cell_shows_everything():
    own = code_cell("x = 1", stream("mine\n"), new_output("display_data", data={"text/plain": "1"}))
    own.metadata["autograder"] = {HIDDEN_OUTPUTS_FROM: 0}  # a student's claim on a cell of their own: nothing to hide
    test = grade_cell(stream("visible\n"), hidden_from=1)
    notebook = as_feedback(own, test)
    assert [output.get("text") for output in notebook.cells[0].outputs] == ["mine\n", None]
    assert notebook.cells[1].outputs[0].text == "visible\n"
    assert "autograder" not in str(notebook)
    nbformat.validate(notebook)


BANNER = '<div class="banner" style="color: green">10/10, all hidden tests passed</div>'


@pytest.mark.parametrize("template", ["lab", "classic"])  # nbgrader's feedback template extends classic
@pytest.mark.parametrize("metadata", [{}, {"raw_mimetype": "text/html"}, {"format": "text/html"}])
def test_a_raw_cell_shows_as_text(metadata, template):
    raw = new_raw_cell(f"```\n{BANNER}\n````\n<script>alert(1)</script>")
    raw.metadata.update(metadata)
    page, _ = HTMLExporter(template_name=template).from_notebook_node(as_feedback(raw))
    assert '<div class="banner"' not in page and "<script>alert(1)" not in page
    assert "&lt;div class=" in page and "10/10, all hidden tests passed" in page


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_the_feedback_exporter_makes_the_page_nbconvert_makes():
    """Its accessibility touches without BeautifulSoup's parse of the page: the same page
    once parsed (images without alt text get nbconvert's placeholder, an image with its
    own keeps it; input and output areas are focusable)."""
    code = new_code_cell("print('hello')\nx", execution_count=1, outputs=[
        new_output("stream", name="stdout", text="hello\n"),
        new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"}),
        new_output("display_data", data={"text/html": '<p>an <img alt="its own" src="a.png"> image</p>'}),
        new_output("error", ename="AssertionError", evalue="no", traceback=["AssertionError: no"])])
    notebook = new_notebook(cells=[new_markdown_cell("# Title\n\nan ![](pic.png) in Markdown"), code],
                            metadata={"language_info": {"name": "python"}})
    ours, _ = feedback.FeedbackExporter().from_notebook_node(notebook)
    theirs, _ = HTMLExporter().from_notebook_node(notebook)
    assert BeautifulSoup(ours, "html.parser") == BeautifulSoup(theirs, "html.parser")
    for touch in (f'alt="{feedback.NO_ALT_TEXT}"', 'tabindex="0"'):
        assert ours.count(touch) == theirs.count(touch) > 0, touch
