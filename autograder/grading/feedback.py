"""Feedback that shows students what failed, never the hidden tests themselves.

nbgrader's feedback renders the autograded notebook, whose test cells carry the full
instructor source, hidden section included, and whose error outputs quote the failing
line of it in the traceback. This preprocessor, added to nbgrader's GenerateFeedback,
removes the hidden section and keeps only the name and message of each test cell's
error: the message from ``autograder.checks`` is written to be read on its own.

A notebook can also print the hidden tests itself: its own function runs inside them and
can read their source. So every output line of every cell that quotes a line of the
hidden tests is removed too. (A notebook that encodes what it leaks gets past this; the
static scan names the frame inspection such a leak needs.)
"""

from __future__ import annotations

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
# Shorter lines ("x = 1", "else:") are too common to count as a leak.
SHORTEST_LEAK = 12
REMOVED = "[a line of the hidden tests was removed here]\n"


class HideHiddenTests(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        clear = ClearHiddenTests(parent=self)
        hidden = set().union(*(_hidden_lines(cell.source) for cell in nb.cells if cell.cell_type == "code"))
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for output in cell.outputs:
                _redact(output, hidden)
            if not utils.is_grade(cell):
                continue
            clear._remove_hidden_test_region(cell)
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return nb, resources


def _hidden_lines(source: str) -> set[str]:
    lines, inside = set(), False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped in (HIDDEN_BEGIN, HIDDEN_END):
            inside = stripped == HIDDEN_BEGIN
            lines.add(stripped)
        elif inside and len(stripped) >= SHORTEST_LEAK:
            lines.add(stripped)
    return lines


def _redact(output, hidden: set[str]) -> None:
    """Drop every line of an output's text that contains a hidden line."""
    def clean(text: str) -> str:
        kept = [line if not any(leak in line for leak in hidden) else REMOVED
                for line in text.splitlines(keepends=True)]
        return "".join(line for i, line in enumerate(kept) if not (line is REMOVED and i and kept[i - 1] is REMOVED))

    if output.output_type == "stream":
        output.text = clean(output.text)
    elif output.output_type == "error":
        output.evalue = clean(output.evalue)
        output.traceback = [clean(line) for line in output.traceback]
    elif "data" in output:
        for mime, value in output.data.items():
            if isinstance(value, str) and mime.startswith("text/"):
                output.data[mime] = clean(value)
