"""Feedback pages never show the hidden tests, however an output dresses them up; honest
content is left as it was."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.preprocessors.hidden_tests import (
    REMOVED, REMOVED_OUTPUT, ClearHiddenTestsInTestCells, RedactHiddenTests, normalised,
)

SECRET = "for case in cases.operand_cases(seed=101, count=24):"
TEST = ("checks.assert_values_close(result, expected, 'f')\n"
        f"### BEGIN HIDDEN TESTS\n{SECRET}\n    pass\n### END HIDDEN TESTS")


def shown(*outputs, markdown: str = "hello **world**", own: str = "x = 1") -> nbformat.NotebookNode:
    test = new_code_cell(TEST)
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f", "points": 1, "solution": False}
    notebook = new_notebook(cells=[test, new_code_cell(own, outputs=list(outputs)), new_markdown_cell(markdown)])
    for step in (RedactHiddenTests(), ClearHiddenTestsInTestCells()):  # as render_feedback has them
        step.preprocess(notebook, {})
    return notebook


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


def test_honest_output_is_left_as_it_was():
    outputs = shown(stream("add_scaled: the visible tests pass.\n"),
                    new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
                    ).cells[1].outputs
    assert outputs[0].text == "add_scaled: the visible tests pass.\n"
    assert outputs[1].data == {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
