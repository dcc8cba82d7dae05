"""What feedback pages may show of a graded notebook: nbgrader's hidden-test regions gone,
and no output that quotes them.

nbgrader's feedback renders the autograded notebook, whose test cells carry the full
instructor source, hidden section included, and whose error outputs quote the failing
line of it in the traceback. ``RedactHiddenTests`` keeps only the name and message of
each test cell's error (the message from ``autograder.checks`` is written to be read on
its own) and removes quotes of the hidden lines from every output; then nbgrader's own
``ClearHiddenTests`` removes the hidden section, from test cells only
(``ClearHiddenTestsInTestCells``: a student's own cell may mention the delimiters, which
would stop nbgrader's step for that notebook).

A notebook can also show the hidden tests itself: its own function runs inside them and
can read their source. So every output is compared with the hidden lines after undoing
what would hide a quote from a plain comparison (ANSI codes between the characters,
HTML or SVG markup, character entities, spacing): a text line that quotes one is removed,
and so is any image or markup output that does. (A notebook that *encodes* what it
leaks, or draws it in a PNG, gets past this; the policy scan names the frame inspection
such a leak needs.)
"""

from __future__ import annotations

import html
import re
import unicodedata

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

from autograder.course import hidden_delimiters, split_hidden

# Shorter lines ("x = 1", "else:") are too common to count as a leak.
SHORTEST_LEAK = 12
REMOVED = "[a line of the hidden tests was removed here]\n"
REMOVED_OUTPUT = "[an output that showed the hidden tests was removed]"
BINARY_IMAGES = ("image/png", "image/jpeg", "image/gif")  # base64: not text to compare
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_MARKUP = re.compile(r"<[^>]*>")


class ClearHiddenTestsInTestCells(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, on test cells only."""

    def preprocess_cell(self, cell, resources, cell_index):
        if not utils.is_grade(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)


class RedactHiddenTests(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        delimiters = hidden_delimiters(ClearHiddenTests(parent=self))
        hidden = set().union(*(hidden_lines(cell.source, delimiters) for cell in nb.cells
                               if cell.cell_type == "code"))
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs = [_shown(output, hidden) for output in cell.outputs]
            if utils.is_grade(cell):
                for output in cell.outputs:
                    if output.output_type == "error":
                        output.traceback = [f"{output.ename}: {output.evalue}"]
        return nb, resources


def hidden_lines(source: str, delimiters: tuple[str, str]) -> set[str]:
    """The hidden lines of a test cell, normalised (``normalised``), long enough to matter
    (the delimiter lines always)."""
    _, inside = split_hidden(source, delimiters)
    return {normalised(line) for line in inside
            if len(line.strip()) >= SHORTEST_LEAK or any(mark in line for mark in delimiters)}


def normalised(text: str) -> str:
    """``text`` as a reader sees it: no ANSI codes, no markup, entities decoded, nothing
    invisible, and no spacing (which markup can put between the characters)."""
    text = _ANSI.sub("", text)
    text = _MARKUP.sub("", text)
    for _ in range(3):  # "&amp;#102;" decodes twice
        text = html.unescape(text)
    return "".join(char for char in text if not char.isspace() and unicodedata.category(char) not in ("Cc", "Cf"))


def quotes(text: str, hidden: set[str]) -> bool:
    flat = normalised(text)
    return any(line in flat for line in hidden)


def _shown(output, hidden: set[str]):
    """The output as the feedback page may show it."""
    if output.output_type == "stream":
        output.text = _without_quoting_lines(output.text, hidden)
    elif output.output_type == "error":
        output.ename = _without_quoting_lines(output.ename, hidden)
        output.evalue = _without_quoting_lines(output.evalue, hidden)
        output.traceback = [_without_quoting_lines(line, hidden) for line in output.traceback]
    elif "data" in output:
        data = dict(output.data)
        if isinstance(data.get("text/plain"), str):
            data["text/plain"] = _without_quoting_lines(data["text/plain"], hidden)
        if any(quotes(value, hidden) for mime, value in data.items()
               if mime != "text/plain" and isinstance(value, str) and mime not in BINARY_IMAGES):
            data = {"text/plain": REMOVED_OUTPUT}
        output.data = data
    return output


def _without_quoting_lines(text: str, hidden: set[str]) -> str:
    """``text`` with every line that quotes a hidden line replaced by one notice; all of
    it replaced when the quote is spread over several lines."""
    if not quotes(text, hidden):
        return text
    kept = [line if not quotes(line, hidden) else REMOVED for line in text.splitlines(keepends=True)]
    text = "".join(line for i, line in enumerate(kept) if not (line is REMOVED and i and kept[i - 1] is REMOVED))
    return text if not quotes(text, hidden) else REMOVED_OUTPUT + "\n"
