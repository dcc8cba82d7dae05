"""Feedback that shows students what failed, never the hidden tests, and nothing that runs.

nbgrader's feedback renders the autograded notebook, whose test cells carry the full
instructor source, hidden section included, and whose error outputs quote the failing
line of it in the traceback. ``HideHiddenTests``, added to nbgrader's GenerateFeedback,
removes the hidden section and keeps only the name and message of each test cell's
error: the message from ``autograder.checks`` is written to be read on its own.

A notebook can also show the hidden tests itself: its own function runs inside them and
can read their source. So every output is compared with the hidden lines after undoing
what would hide a quote from a plain comparison (ANSI codes between the characters,
HTML or SVG markup, character entities, spacing): a text line that quotes one is removed,
and so is any image or markup output that does. (A notebook that *encodes* what it
leaks, or draws it in a PNG, gets past this; the policy scan names the frame inspection
such a leak needs.)

Nothing on the page can run: the graded notebook it is made from was made inert as it
was graded (``inert.MakeInert``).
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

from autograder.grading.nbgrader_run import generate_feedback

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
# Shorter lines ("x = 1", "else:") are too common to count as a leak.
SHORTEST_LEAK = 12
REMOVED = "[a line of the hidden tests was removed here]\n"
REMOVED_OUTPUT = "[an output that showed the hidden tests was removed]"
BINARY_IMAGES = ("image/png", "image/jpeg", "image/gif")  # base64: not text to compare
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_MARKUP = re.compile(r"<[^>]*>")


def render_feedback(course: Path, assignment: str, student: str) -> None:
    """nbgrader's generate_feedback for one graded notebook, made safe to hand back."""
    generate_feedback(course, assignment, student, {
        "GenerateFeedback": {"preprocessors": [
            "nbgrader.preprocessors.GetGrades",
            "autograder.grading.feedback.HideHiddenTests",
            "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
        ]},
    })


class HideHiddenTests(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        clear = ClearHiddenTests(parent=self)
        hidden = set().union(*(hidden_lines(cell.source) for cell in nb.cells if cell.cell_type == "code"))
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs = [_shown(output, hidden) for output in cell.outputs]
            if not utils.is_grade(cell):
                continue
            clear._remove_hidden_test_region(cell)
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return nb, resources


def hidden_lines(source: str) -> set[str]:
    """The hidden lines of a test cell, normalised (``normalised``), long enough to matter."""
    lines, inside = set(), False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped in (HIDDEN_BEGIN, HIDDEN_END):
            inside = stripped == HIDDEN_BEGIN
            lines.add(normalised(stripped))
        elif inside and len(stripped) >= SHORTEST_LEAK:
            lines.add(normalised(stripped))
    return lines


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
