"""The site's MyST project, written into a folder for Jupyter Book to build (``make site``).

One project holds every language, each in its own folder (``en/``, ``ko/``, ...) with the
lecture notebooks as pages: one build, one search, one table of contents in which each
language is a part, and a front page that lists them. A page links to itself in the other
languages, so a reader switches language without losing their place.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.translation import build, catalogues
from autograder.website import pages, words

LECTURES = "notebooks"
LANGUAGES = ("en", *catalogues.LANGUAGES)
THEME = "_theme"  # where `make site` puts the built theme, beside the project's files
FRONT_PAGE = "index.md"
FAVICON = Path("docs", "favicon.png")  # the documentation's


def lay_out(repo: Path, into: Path, lab_url: str) -> list[Path]:
    """Write the project for every language into ``into``; the pages written. ``lab_url``
    is where a notebook opens in JupyterLab, the notebook's path in the course appended."""
    english = {path.name: nbformat.read(path, as_version=4) for path in sorted((repo / LECTURES).glob("*.ipynb"))}
    written = []
    for language in LANGUAGES:
        say = words.in_language(repo, language)
        notebooks = english if language == "en" else {
            name: build.translate_file(repo / LECTURES / name, language, repo) for name in english}
        labels = _labels(notebooks, english, language)
        for name, notebook in notebooks.items():
            page = pages.static_widgets(notebook, say(words.STATIC_WIDGET))
            page = pages.with_labels(page, labels.get(name, {}))
            page = pages.relinked(page, name, labels, lambda path: lab_url + _course_path(path), set(english))
            page = pages.with_header(page, _header(language, name, lab_url, say))
            for cell in page.cells:  # a cell's id names it in the whole site
                cell.id = f"{language}-{cell.id}"
            written.append(into / language / name)
            written[-1].parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(page, written[-1])
    (into / FAVICON.name).write_bytes((repo / FAVICON).read_bytes())
    (into / FRONT_PAGE).write_text(_front_page(repo, sorted(english)[0]), encoding="utf-8")
    # JSON is YAML: no quoting rules to get wrong for the titles
    (into / "myst.yml").write_text(json.dumps(_config(sorted(english)), ensure_ascii=False, indent=2) + "\n",
                                   encoding="utf-8")
    return written


def _labels(notebooks: dict[str, NotebookNode], english: dict[str, NotebookNode],
            language: str) -> dict[str, dict[str, str]]:
    """page -> JupyterLab id of each heading some page links to -> its MyST label, made from
    the English heading in the same place (labels are one namespace for the whole site)."""
    found: dict[str, dict[str, str]] = {}
    for name, notebook in notebooks.items():
        for page, anchor in pages.linked_headings(notebook, name, set(notebooks)):
            ids, english_ids = pages.headings(notebooks[page]), pages.headings(english[page])
            if anchor in ids:
                heading = english_ids[ids.index(anchor)]
                found.setdefault(page, {})[anchor] = f"{language}-{Path(page).stem}-{pages.html_id(heading)}"
    return found


def _course_path(path: str) -> str:
    """A link's target (relative to the lectures' folder) as a path in the course."""
    return posixpath.normpath(posixpath.join(LECTURES, path))


def _header(language: str, name: str, lab_url: str, say: Callable[[str], str]) -> str:
    switch = " · ".join(f"**{pages.LANGUAGE_NAMES[other]}**" if other == language
                        else f"[{pages.LANGUAGE_NAMES[other]}](../{other}/{name})" for other in LANGUAGES)
    return f"{switch}\n\n[{say(words.OPEN_IN_LAB)}]({lab_url}{_course_path(name)}) {say(words.OPEN_IN_LAB_HINT)}"


def _front_page(repo: Path, first: str) -> str:
    lines = [f"# {words.FRONT_TITLE}", ""]
    for language in LANGUAGES:
        say = words.in_language(repo, language)
        lines.append(f"- **[{pages.LANGUAGE_NAMES[language]}]({language}/{first})**: "
                     f"{say(words.FRONT_TITLE)}. {say(words.FRONT_LINE)}")
    return "\n".join(lines) + "\n"


def _config(names: list[str]) -> dict:
    return {
        "version": 1,
        "project": {
            "title": words.FRONT_TITLE,
            "toc": [{"file": FRONT_PAGE},
                    *({"title": pages.LANGUAGE_NAMES[language],
                       "children": [{"file": f"{language}/{name}"} for name in names]} for language in LANGUAGES)],
            "exclude": [f"{THEME}/**"],
        },
        # the book theme, built from docs/theme/ (no download); a page's address is its folder
        # and name (/ko/inplace-basics), so the languages' pages do not collide
        "site": {"template": THEME, "options": {"folders": True, "logo_text": words.FRONT_TITLE,
                                                        "favicon": FAVICON.name}},
    }
