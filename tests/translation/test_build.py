"""Translated notebooks: their Markdown translated, everything else the English notebook's,
the released assignments' nbgrader marks and checksums included."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from autograder.translation import anchors, build, catalogues, paragraphs
from tests.helpers.assignments import REPO, assignments
from tests.helpers.translated import all_but_markdown

NOTEBOOKS = [document for document in catalogues.documents(REPO) if document.suffix == ".ipynb"]
RELEASED = [(Path("release", name, f"{name}.ipynb"), Path("source", name, f"{name}.ipynb")) for name in assignments()]


@pytest.mark.slow  # every notebook of every language, translated whole: a few seconds
@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
@pytest.mark.parametrize(("english", "document"), [(d, d) for d in NOTEBOOKS] + RELEASED,
                         ids=[d.as_posix() for d in NOTEBOOKS] + [r.as_posix() for r, _ in RELEASED])
def test_a_translated_notebook_differs_from_the_english_only_in_its_markdown(language, english, document):
    original = nbformat.read(REPO / english, as_version=4)
    translated = build.translate_file(REPO / english, language, REPO, document)
    assert all_but_markdown(nbformat.writes(translated)) == all_but_markdown(nbformat.writes(original))
    changed = [cell for cell, before in zip(translated.cells, original.cells)
               if cell.cell_type == "markdown" and cell.source != before.source]
    # the checksum of a locked Markdown cell is its translation's, which Validate compares
    assert all(cell.metadata.nbgrader.checksum == compute_checksum(cell) for cell in changed
               if "checksum" in cell.metadata.get("nbgrader", {}))
    offered = [cell for cell in original.cells if cell.cell_type == "markdown" and paragraphs.translatable(cell.source)]
    assert len(changed) == len(offered) > 0


@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
def test_the_student_readme_is_translated(language):
    text = build.translate_file(REPO / "student-edition" / "README.md", language, REPO)
    assert text != (REPO / "student-edition" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
def test_every_link_to_a_heading_finds_it_in_the_translated_notebook(language):
    """JupyterLab names a heading by its text: a translated heading has a new name, and each
    link to it is pointed there (checked against the headings each notebook really has)."""
    translated = {document.as_posix(): build.translate_file(REPO / document, language, REPO) for document in NOTEBOOKS}
    ids = {path: {anchors.heading_id(line) for cell in notebook.cells if cell.cell_type == "markdown"
                  for line in cell.source.splitlines()} - {None} for path, notebook in translated.items()}
    link = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")
    links = [(path, target, anchor) for path, notebook in translated.items() for cell in notebook.cells
             if cell.cell_type == "markdown" for target, anchor in link.findall(cell.source)
             if not target.startswith("http")]
    assert len(links) >= 7
    for path, target, anchor in links:
        linked = posixpath.normpath(posixpath.join(posixpath.dirname(path), target)) if target else path
        assert anchor in ids[linked], f"{path} links to {linked}#{anchor}, which has no such heading"


def test_a_heading_id_is_its_text_as_jupyterlab_writes_it():
    assert anchors.heading_id("## May I write in place here?") == "May-I-write-in-place-here?"
    heading = "### 3. `shares_storage`: *same* [storage](x.ipynb)?"
    assert anchors.heading_id(heading) == "3.-shares_storage:-same-storage?"
    assert anchors.heading_id("Not a heading") is None
    assert anchors.relinked("[a](../b.ipynb#X) [c](#X) [d](b.ipynb#Y)", "notebooks/b.ipynb",
                            {"b.ipynb": {"X": "엑스"}, "notebooks/b.ipynb": {"X": "X2"}}) == (
        "[a](../b.ipynb#엑스) [c](#X2) [d](b.ipynb#Y)")
