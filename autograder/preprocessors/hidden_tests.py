"""What feedback pages may show of a graded notebook: nbgrader's hidden-test regions gone,
nothing their run produced but its verdict, and no output that quotes them.

nbgrader's feedback renders the autograded notebook, whose test cells carry the full
instructor source, hidden section included, and the outputs of all of it: whatever the
hidden tests printed or showed, and error outputs that quote the failing line of them in
the traceback. Three steps, in this order:

- ``HiddenTestsVerdictOnly`` keeps, of a test cell's outputs, those made before its hidden
  tests began (the grader writes into every test cell it ran, over whatever a student's
  copy held, the index of the first output after that point:
  ``cell.metadata["autograder"]["hidden_outputs_from"]``). Of the rest it keeps only an
  error's verdict: its name and a few lines of its message, made readable (``readable``)
  and redacted; the others make way for one line that says the hidden tests' output is not
  shown. A test cell without the mark (a notebook graded before the grader set it) counts
  all its outputs as the hidden tests' when it has a hidden region. The mark is taken off.
- ``RedactHiddenTests`` keeps only the name and message of each test cell's error (the
  message from ``autograder.checks`` is written to be read on its own) and removes quotes
  of the hidden lines from every output;
- nbgrader's own ``ClearHiddenTests`` removes the hidden section, from test cells only
  (``ClearHiddenTestsInTestCells``: a student's own cell may mention the delimiters, which
  would stop nbgrader's step for that notebook).

A notebook can also show the hidden tests itself: its own function runs inside them and
can read their source. So every output is compared with the hidden lines after undoing
what would hide a quote from a plain comparison (``normalised``: ANSI codes between the
characters, HTML or SVG markup, character entities, compatibility forms such as fullwidth
or mathematical letters, combining marks, invisible characters, spacing): a text line that
quotes one is removed, and so is any image or markup output that does. (A notebook that
*encodes* what it leaks, writes it in look-alike letters of another script, or draws it in
a PNG, gets past this; the policy scan names the frame inspection such a leak needs.)
"""

from __future__ import annotations

import html
import re
import unicodedata

from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

from autograder.course import hidden_delimiters, split_hidden

# Where a graded test cell's metadata says its hidden tests' outputs begin (under "autograder").
HIDDEN_OUTPUTS_FROM = "hidden_outputs_from"

# Shorter lines ("x = 1", "else:") are too common to count as a leak.
SHORTEST_LEAK = 12
REMOVED = "[a line of the hidden tests was removed here]\n"
REMOVED_OUTPUT = "[an output that showed the hidden tests was removed]"
NOT_SHOWN = "[the hidden tests' output is not shown]\n"
BINARY_IMAGES = ("image/png", "image/jpeg", "image/gif")  # base64: not text to compare
# An error of the hidden tests is shown as its name and the start of its message.
MESSAGE_LINES, MESSAGE_CHARS, NAME_CHARS = 5, 500, 100
CUT = " [...]"
# Letters and symbols that draw nothing, though Unicode calls them neither marks, controls
# nor spaces: Hangul fillers, the braille blank, a musical null notehead.
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")
_DROPPED = ("M", "C")  # combining marks; controls, format, unassigned, private use, surrogates
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_MARKUP = re.compile(r"<[^>]*>")


class ClearHiddenTestsInTestCells(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, on test cells only."""

    def preprocess_cell(self, cell, resources, cell_index):
        if not utils.is_grade(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)


class HiddenTestsVerdictOnly(NbGraderPreprocessor):
    """Of what a test cell's hidden tests produced, only their error's verdict; no output
    keeps the grader's mark."""

    def preprocess(self, nb, resources):
        delimiters = hidden_delimiters(ClearHiddenTests(parent=self))
        hidden = _hidden(nb, delimiters)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            mark = cell.metadata.pop("autograder", None)
            if utils.is_grade(cell) and not utils.is_solution(cell):
                has_hidden = bool(split_hidden(cell.source, delimiters)[1])
                start = mark.get(HIDDEN_OUTPUTS_FROM) if isinstance(mark, dict) else None
                if not isinstance(start, int) or isinstance(start, bool) or start < 0:
                    start = 0 if has_hidden else len(cell.outputs)
                cell.outputs = _visible_part(cell.outputs, start, hidden)
        return nb, resources


class RedactHiddenTests(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        hidden = _hidden(nb, hidden_delimiters(ClearHiddenTests(parent=self)))
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


def _hidden(nb, delimiters: tuple[str, str]) -> set[str]:
    return set().union(*(hidden_lines(cell.source, delimiters) for cell in nb.cells if cell.cell_type == "code"))


def normalised(text: str) -> str:
    """``text`` reduced to what a reader sees, to compare: no ANSI codes, no markup,
    entities decoded, compatibility forms folded and accents split off (NFKD, so that a
    mark NFKC would compose with the letter before it is dropped too), and no combining
    mark, nothing invisible and no spacing (which markup can put between the characters)."""
    text = _ANSI.sub("", text)
    text = _MARKUP.sub("", text)
    for _ in range(3):  # "&amp;#102;" decodes twice
        text = html.unescape(text)
    return unicodedata.normalize("NFKD", text).translate(_FLAT)


def readable(text: str) -> str:
    """``text`` to show: no ANSI codes, compatibility forms folded (NFKC), no combining mark
    and nothing invisible; spaces of every kind shown as plain spaces, line breaks kept."""
    return unicodedata.normalize("NFKC", _ANSI.sub("", text).replace("\r\n", "\n")).translate(_READABLE)


def _drawn(char: str) -> bool:
    return not unicodedata.category(char).startswith(_DROPPED) and char not in INVISIBLE


class _Characters(dict):
    """A ``str.translate`` table that decides each character once, on first sight (up to a
    bound: a notebook can print every character there is)."""

    def __init__(self, decide):
        super().__init__()
        self._decide = decide

    def __missing__(self, code: int) -> str | None:
        shown = self._decide(chr(code))
        if len(self) < 1 << 16:
            self[code] = shown
        return shown


_FLAT = _Characters(lambda char: char if _drawn(char) and not char.isspace() else None)
_READABLE = _Characters(lambda char: "\n" if char in "\n\r\u2028\u2029\x85" else " " if char.isspace()
                        or unicodedata.category(char).startswith("Z") else char if _drawn(char) else None)


def quotes(text: str, hidden: set[str]) -> bool:
    flat = normalised(text)
    return any(line in flat for line in hidden)


def _visible_part(outputs: list, start: int, hidden: set[str]) -> list:
    """A test cell's outputs from before its hidden tests began (those before ``start``);
    for those after, the last error's verdict and a line saying the rest is not shown."""
    kept, dropped, verdict = [], None, None
    for index, output in enumerate(outputs):
        if index < start:
            kept.append(output)
            continue
        if verdict is not None or output.output_type != "error":
            dropped = len(kept) if dropped is None else dropped
        if output.output_type == "error":
            verdict = _verdict(output, hidden)
    if dropped is not None:
        kept.insert(dropped, new_output("stream", name="stdout", text=NOT_SHOWN))
    return kept + ([verdict] if verdict is not None else [])


def _verdict(error, hidden: set[str]):
    """An error output of the hidden tests as its name and the start of its message only."""
    name = _cut(" ".join(readable(str(error.get("ename", ""))).split()), 1, NAME_CHARS)
    message = _cut(_without_quoting_lines(readable(str(error.get("evalue", ""))), hidden), MESSAGE_LINES,
                   MESSAGE_CHARS)
    return new_output("error", ename=name, evalue=message, traceback=[f"{name}: {message}"])


def _cut(text: str, lines: int, chars: int) -> str:
    short = "\n".join(text.strip("\n").splitlines()[:lines])[:chars]
    return short if short == text.strip("\n") else short.rstrip() + CUT


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
