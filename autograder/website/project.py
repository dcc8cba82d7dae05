"""The site's MyST project, written into a folder for Jupyter Book to build (``make site``),
and the language of each page it built.

One project holds every language, each in its own folder (``en/``, ``ko/``, ...) with the
lecture notebooks as pages: one build, one search, one table of contents in which each
language is a part, and a front page that lists them. A page links to itself in the other
languages, so a reader switches language without losing their place.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

import nbformat
from nbformat import NotebookNode

from autograder.translation import build, catalogues
from autograder.website import pages, words

LECTURES = "notebooks"
LANGUAGES = ("en", *catalogues.LANGUAGES)
FRONT_PAGE = "index.md"
FAVICON = Path("docs", "favicon.png")  # the documentation's
# JupyterLab on the student's own machine, where `make lab` serves it: the link says so
_LOCAL_HOSTS = {"localhost", "127.0.0.1"}
# In a folder that `make site` wrote, so that it replaces that folder and no other.
MARK = ".written-by-make-site"


class FolderRefused(ValueError):
    """A folder the site would replace that is not the site's to replace."""


def lay_out(repo: Path, into: Path, lab_url: str, theme: str, languages: tuple[str, ...] = LANGUAGES) -> list[Path]:
    """Write the project for ``languages`` into ``into``; the pages written. ``lab_url`` is
    where a notebook opens in JupyterLab, the notebook's path in the course appended;
    ``theme`` the folder, in ``into``, of the site's theme. A lecture that would make a
    broken page stops it (``pages.PageError``, its path named)."""
    english = {path.name: nbformat.read(path, as_version=4) for path in sorted((repo / LECTURES).glob("*.ipynb"))}
    _replace(into, repo)
    says = {language: words.in_language(repo, language) for language in languages}
    written = []
    for language, say in says.items():
        notebooks = english if language == "en" else {
            name: build.translate_file(repo / LECTURES / name, language, repo) for name in english}
        labels = _labels(notebooks, english, language)
        for name, notebook in notebooks.items():
            try:
                page = pages.static_widgets(notebook, say(words.STATIC_WIDGET), say(words.LIVE_WIDGET))
                page = pages.with_labels(page, labels.get(name, {}))
                page = pages.relinked(page, name, labels, lambda path: lab_url + _course_path(path), set(english))
                # last: its links are the site's own, to pages of other languages
                page = pages.with_header(page, _header(language, languages, name, lab_url, say))
            except pages.PageError as error:
                raise pages.PageError(f"{LECTURES}/{name} ({language}): {error}") from None
            for cell in page.cells:  # a cell's id names it in the whole site
                cell.id = f"{language}-{cell.id}"
            written.append(into / language / name)
            written[-1].parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(page, written[-1])
    (into / FAVICON.name).write_bytes((repo / FAVICON).read_bytes())
    (into / FRONT_PAGE).write_text(_front_page(says, next(iter(english))), encoding="utf-8")
    # JSON is YAML: no quoting rules to get wrong for the titles
    (into / "myst.yml").write_text(json.dumps(_config(languages, list(english), theme), ensure_ascii=False,
                                              indent=2) + "\n", encoding="utf-8")
    return written


def _labels(notebooks: dict[str, NotebookNode], english: dict[str, NotebookNode],
            language: str) -> dict[str, dict[str, str]]:
    """page -> JupyterLab id of each heading some page links to -> its MyST label, made from
    the English heading in the same place (labels are one namespace for the whole site); of
    two headings whose English reads alike as an identifier, the later one is numbered."""
    wanted: dict[str, set[str]] = {}
    for name, notebook in notebooks.items():
        for page, anchor in pages.linked_headings(notebook, name, set(notebooks)):
            wanted.setdefault(page, set()).add(anchor)
    found: dict[str, dict[str, str]] = {}
    for page, anchors in sorted(wanted.items()):
        ids, english_ids = pages.headings(notebooks[page]), pages.headings(english[page])
        if len(ids) != len(english_ids) and anchors & set(ids):
            raise pages.PageError(f"{LECTURES}/{page} ({language}): {len(ids)} headings, the English "
                                  f"{len(english_ids)}: a heading's label cannot be found")
        labels = found.setdefault(page, {})
        for index, heading in enumerate(ids):  # a link to a heading not there is left: the build names it
            if heading in anchors and heading not in labels:
                label = f"{language}-{Path(page).stem}-{pages.html_id(english_ids[index]) or 'heading'}"
                labels[heading] = f"{label}-{index + 1}" if label in labels.values() else label
    return found


def _course_path(path: str) -> str:
    """A link's target (relative to the lectures' folder) as a path in the course."""
    return posixpath.normpath(posixpath.join(LECTURES, path))


def _header(language: str, languages: tuple[str, ...], name: str, lab_url: str, say: Callable[[str], str]) -> str:
    """The language switch (in a site of several), then the link to the notebook in
    JupyterLab (a line each)."""
    switch = " · ".join(f"**{pages.LANGUAGE_NAMES[other]}**" if other == language
                        else f"[{pages.LANGUAGE_NAMES[other]}](../{other}/{name})" for other in languages)
    phrase = words.OPEN_IN_LAB if urlparse(lab_url).hostname in _LOCAL_HOSTS else words.OPEN_ON_HUB
    link = say(phrase).format(address=lab_url + _course_path(name))
    return f"{switch}\\\n{link}" if len(languages) > 1 else link


def _front_page(says: dict[str, Callable[[str], str]], first: str) -> str:
    """The site's title, then each language (``says``: language -> its words): its name (the
    link to its first lecture), the course's title in it (but in English, the title above)
    and what the site holds."""
    lines = [f"# {words.FRONT_TITLE}", ""]
    for language, say in says.items():
        title = "" if language == "en" else f" · {say(words.FRONT_TITLE)}"
        # a line break between the title and the line: no punctuation of one language joins them
        lines.append(f"- **[{pages.LANGUAGE_NAMES[language]}]({language}/{first})**{title}\\\n"
                     f"  {say(words.FRONT_LINE)}")
    return "\n".join(lines) + "\n"


def _config(languages: tuple[str, ...], names: list[str], theme: str) -> dict:
    return {
        "version": 1,
        "project": {
            "title": words.FRONT_TITLE,
            "toc": [{"file": FRONT_PAGE},
                    *({"title": pages.LANGUAGE_NAMES[language],
                       "children": [{"file": f"{language}/{name}"} for name in names]} for language in languages)],
            "exclude": [f"{theme}/**"],
        },
        # the book theme, built from docs/theme/ (no download); a page's address is its folder
        # and name (/ko/inplace-basics), so the languages' pages do not collide; no previous
        # and next links under a page, which would lead from one language's last lecture into
        # the next language (the table of contents lists every lecture)
        "site": {"template": theme, "options": {"folders": True, "logo_text": words.FRONT_TITLE,
                                                "favicon": FAVICON.name, "hide_footer_links": True}},
    }


def publish(built: Path, into: Path, repo: Path, languages: tuple[str, ...] = LANGUAGES) -> int:
    """Put the site Jupyter Book built into ``into`` (replacing the site there, and nothing
    else), each page of a translation marked with its language; the number marked."""
    _refuse_repository(into, repo)
    if built.resolve().is_relative_to(into.resolve()):
        raise FolderRefused(f"{into}: holds the build itself ({built}); give the site another folder")
    _replace(into, repo)
    shutil.copytree(built, into, dirs_exist_ok=True)
    return mark_languages(into, languages)


def _refuse_repository(folder: Path, repo: Path) -> None:
    if repo.resolve().is_relative_to(folder.resolve()):
        raise FolderRefused(f"{folder}: the course's repository or a folder holding it; give the site its own folder")


def _replace(folder: Path, repo: Path) -> None:
    """Make ``folder`` empty but for the mark that `make site` wrote it: refused for the
    repository or a folder that holds it, and for a folder holding files without the mark."""
    _refuse_repository(folder, repo)
    if folder.exists():
        if any(folder.iterdir()) and not (folder / MARK).is_file():
            raise FolderRefused(f"{folder}: holds files that make site did not write; not replaced (move them, "
                                "or give the site another folder)")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / MARK).write_text("make site writes this folder and replaces it whole at its next run\n")


def mark_languages(site: Path, languages: tuple[str, ...] = LANGUAGES) -> int:
    """Give each built page of a translation (``site``/LANG/) its language, which the theme
    writes as English on every page (``<html lang="en">``): a screen reader reads a page in
    its language, and a browser draws Chinese and Japanese characters in their own shapes.
    The number of pages marked."""
    marked = 0
    for language in languages:
        if language == "en":
            continue
        tag = catalogues.LANGUAGES[language][1].replace("_", "-")
        for page in sorted((site / language).rglob("index.html")):
            html = page.read_text(encoding="utf-8")
            page.write_text(html.replace('<html lang="en"', f'<html lang="{tag}"', 1), encoding="utf-8")
            marked += '<html lang="en"' in html
    return marked
