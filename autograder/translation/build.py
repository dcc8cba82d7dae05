"""Translated documents, written from the English ones and their catalogues.

Only Markdown changes: a translated notebook's code cells, outputs, metadata (nbgrader's
marks and checksums among them) and cell ids are the English notebook's, byte for byte
once written, so a translated assignment grades exactly as the English one does. The one
exception is the checksum nbgrader keeps of a locked Markdown cell (an assignment's
instructions; never of an answer cell, whose checksum says whether it was answered),
which is the translated text's: nbgrader's Validate would otherwise tell the student that
a read-only cell changed. Grading puts the English cell back from the gradebook as it
does for any locked cell, and scores only the code cells. A paragraph without a usable
translation (missing, empty or fuzzy) stops the build, every such paragraph named,
rather than ship English in its place.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.utils import compute_checksum

from autograder.translation import anchors, catalogues, paragraphs


class Untranslated(Exception):
    """Paragraphs a build needed and their catalogue does not translate."""

    def __init__(self, catalogue: Path, missing: list[str]):
        self.missing = missing
        shown = "\n".join(f"  - {text[:100]!r}" for text in missing[:10])
        more = f"\n  ... and {len(missing) - 10} more" if len(missing) > 10 else ""
        super().__init__(f"{catalogue}: {len(missing)} paragraph(s) without a finished translation "
                         f"(run `make translations`, then translate or unmark the fuzzy ones):\n{shown}{more}")


def translate_markdown(text: str, translations: dict[str, str], missing: list[str],
                       relink: Callable[[str], str] = str) -> str:
    def translate(piece: str) -> str:
        if piece in translations:
            return relink(translations[piece])
        missing.append(piece)
        return piece

    return paragraphs.translated(text, translate)


def translate_notebook(notebook: NotebookNode, translations: dict[str, str], catalogue: Path,
                       relink: Callable[[str], str] = str) -> NotebookNode:
    """A copy of ``notebook`` whose Markdown cells are translated (each translation passed
    through ``relink``, which points its links at translated headings)."""
    translated, missing = copy.deepcopy(notebook), []
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, translations, missing, relink)
            marks = cell.metadata.get("nbgrader", {})
            if marks.get("locked") and not marks.get("solution") and "checksum" in marks:
                marks.checksum = compute_checksum(cell)
    if missing:
        raise Untranslated(catalogue, missing)
    return translated


def translate_file(english: Path, language: str, repo: Path, document: Path | None = None) -> str | NotebookNode:
    """``english`` translated with the catalogue of ``document`` (by default ``english``
    itself, relative to ``repo``; a released notebook uses its source's)."""
    document = document or english.relative_to(repo)
    catalogue = catalogues.catalogue_path(repo, language, document)
    translations = _translations(catalogue)
    ids = {path.as_posix(): anchors.heading_ids(_translations(catalogues.catalogue_path(repo, language, path)))
           for path in catalogues.documents(repo)}
    relink = functools.partial(anchors.relinked, document=document.as_posix(), ids=ids)
    if english.suffix == ".ipynb":
        return translate_notebook(nbformat.read(english, as_version=4), translations, catalogue, relink)
    missing: list[str] = []
    text = translate_markdown(english.read_text(encoding="utf-8"), translations, missing, relink)
    if missing:
        raise Untranslated(catalogue, missing)
    return text


def _translations(catalogue: Path) -> dict[str, str]:
    """The catalogue's usable translations (none if it is missing), read once per version
    of the file: a build reads every catalogue of its language for each document's links."""
    if not catalogue.exists():
        return {}
    stat = catalogue.stat()
    return dict(_read_translations(catalogue, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _read_translations(catalogue: Path, modified: int, size: int) -> tuple[tuple[str, str], ...]:
    return tuple(catalogues.usable(catalogues.read(catalogue)).items())


def write_translation(translated: str | NotebookNode, into: Path) -> None:
    into.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(translated, str):
        into.write_text(translated, encoding="utf-8")
    else:
        nbformat.write(translated, into)
