"""Cutting Markdown into the paragraphs a translator sees, and putting it back together."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.translation import catalogues, paragraphs
from tests.helpers.assignments import REPO

TEXT = """# A heading

A paragraph that
runs over two lines.

```python
x.add_(1)

y = x
```
Prose right after the fence.
$$
a + b
$$

* a list item
* another

| a | b |
|---|---|
| `x` | 1 |
"""


def test_every_markdown_cell_of_the_course_comes_back_byte_for_byte():
    texts = [text for document in catalogues.documents(REPO) for text, _ in catalogues.markdown_texts(REPO / document)]
    assert len(texts) > 200
    for text in texts:
        assert "".join(piece.text for piece in paragraphs.pieces(text)) == text


def test_paragraphs_are_the_blocks_between_blank_lines_and_code_and_math_are_kept():
    assert paragraphs.translatable(TEXT) == [
        "# A heading",
        "A paragraph that\nruns over two lines.",
        "Prose right after the fence.",
        "* a list item\n* another",
        "| a | b |\n|---|---|\n| `x` | 1 |",
    ]


def test_a_line_of_backticks_around_code_is_prose_not_a_fence():
    """A backtick fence's info string holds no backtick (CommonMark): the paragraph after
    such a line is still offered."""
    assert paragraphs.translatable("```x``` is code in a sentence.\n\nAnother paragraph.") == [
        "```x``` is code in a sentence.", "Another paragraph."]


def test_a_translation_changes_only_the_paragraphs_it_translates():
    translated = paragraphs.translated(TEXT, lambda text: text.upper())
    assert "```python\nx.add_(1)\n\ny = x\n```\n" in translated
    assert "$$\na + b\n$$\n" in translated
    assert "# A HEADING\n\nA PARAGRAPH THAT\nRUNS OVER TWO LINES.\n\n" in translated
    assert translated.count("\n") == TEXT.count("\n")


@pytest.mark.parametrize("text", ["", "\n\n", "```\nno closing fence", "![](figure.png)\n", "`x.add_(1)`", "<br>"])
def test_what_holds_no_word_is_not_offered(text):
    assert "".join(piece.text for piece in paragraphs.pieces(text)) == text
    assert paragraphs.translatable(text) == []


def test_a_figure_with_words_is_offered():
    figure = "![Two views of one storage](figure.png)"
    assert paragraphs.translatable(figure) == [figure]


def test_a_notebooks_code_cells_are_never_offered():
    notebook = nbformat.read(REPO / "notebooks" / "01-inplace-basics.ipynb", as_version=4)
    offered = {message.id for message in catalogues.template(REPO, Path("notebooks/01-inplace-basics.ipynb"))}
    code = {line.strip() for cell in notebook.cells if cell.cell_type == "code" for line in cell.source.splitlines()}
    assert len(offered) > 50 and not {line for text in offered for line in text.splitlines()} & (code - {""})
