"""Graded notebooks with nothing in them that can run in a browser.

A TA opens graded notebooks in nbgrader's formgrader and students open feedback pages;
both render Markdown cells, raw cells and outputs as HTML, at the Jupyter server's origin
for the formgrader. Whatever a student's notebook made (a ``<script>`` in a Markdown cell,
an ``onerror`` in an HTML output, a JavaScript, SVG or widget output, a styled banner in a
raw cell) would run or show there as if the page made it. So right after execution, before
nbgrader saves the graded notebook, ``MakeInert``:

- turns every raw cell into a Markdown cell that shows its text in a code block
  (``raw_as_text``): nbconvert's HTML templates pass a raw cell through as HTML when its
  format is HTML *or none at all*, so dropping the format is not enough; feedback pages do
  the same to notebooks graded before this step did (``RawCellsAsText``);
- renders every Markdown cell to HTML and cleans it with nh3 (the Ammonia sanitiser: no
  script, no event handler, no ``javascript:`` link); the result is still Markdown, which
  pages render again: so the brackets left in its text are written as entities, and no
  link can form the second time (``<x>[a](javascript:...)</x>`` loses its tags to nh3,
  which would leave a Markdown link behind);
- cleans every HTML and Markdown output the same way, and removes outputs of any other
  kind than text, HTML, Markdown, LaTeX and PNG/JPEG/GIF images, and every metadata of theirs.

Errors, streams and the text of every output stay as they were: scores do not change.
An answer cell the student left exactly as released (its checksum is the gradebook's,
written by nbgrader's OverwriteCells just before) is the instructor's text and is left
as it is: nbgrader scores an unchanged answer zero without asking for manual grading,
and a cleaned one would look changed to it.
"""

from __future__ import annotations

import re

import nh3
from nbconvert.filters import markdown2html
from nbconvert.preprocessors import Preprocessor
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

SHOWN_MIME_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/gif")
REMOVED_KIND = "[an output of a kind the grader does not show was removed]"
_TAG = re.compile(r"(<[^>]*>)")
_BACKTICKS = re.compile(r"`+")


class MakeInert(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if cell.cell_type == "raw":
                raw_as_text(cell)
            if cell.cell_type == "markdown" and not _as_released(cell):
                cell.source = safe_html(cell.source, markdown=True)
            elif cell.cell_type == "code":
                for output in cell.outputs:
                    inert_output(output)
        return nb, resources


class RawCellsAsText(Preprocessor):
    """Every raw cell shown as its text (``raw_as_text``)."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if cell.cell_type == "raw":
                raw_as_text(cell)
        return nb, resources


def raw_as_text(cell) -> None:
    """A raw cell made a Markdown cell whose text is the raw cell's, in a fenced code block
    (escaped by every renderer), its format gone."""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(cell.source)), default=0))
    cell.cell_type = "markdown"
    cell.source = f"{fence}\n{cell.source}\n{fence}"
    for key in ("raw_mimetype", "format"):
        cell.metadata.pop(key, None)


def _as_released(cell) -> bool:
    checksum = cell.metadata.get("nbgrader", {}).get("checksum")
    return utils.is_solution(cell) and checksum is not None and checksum == utils.compute_checksum(cell)


def safe_html(text: str, markdown: bool = False) -> str:
    """HTML (or Markdown, rendered and made inert to a second rendering) with everything
    that could run removed."""
    if not markdown:
        return nh3.clean(text)
    parts = _TAG.split(nh3.clean(markdown2html(text)))  # tags at odd places
    return "".join(part if index % 2 else part.replace("[", "&#91;").replace("]", "&#93;")
                   for index, part in enumerate(parts))


def inert_output(output) -> None:
    """Keep only the kinds of data a page may show, HTML and Markdown cleaned."""
    if "data" not in output:
        return
    data = {mime: value for mime, value in output.data.items() if mime in SHOWN_MIME_TYPES and isinstance(value, str)}
    for mime in ("text/html", "text/markdown"):
        if mime in data:
            data[mime] = safe_html(data[mime], markdown=mime == "text/markdown")
    output.data = data or {"text/plain": REMOVED_KIND}
    output.metadata = {}
