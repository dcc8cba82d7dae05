"""The course's translations as gettext catalogues: one ``.po`` file per English document
and language, ``translations/LANG/<the document's path>.po``, and one of the messages the
checks show students (``translations/LANG/autograder/checks.po``, compiled to the ``.mo``
file the checks read).

The English documents stay the one source (the lectures, the assignments' source
notebooks, the student edition's README); a catalogue holds one message per paragraph of
their Markdown (``paragraphs``), and never a code cell. ``update`` merges the English as
it is now into each catalogue the way ``msgmerge`` does: a paragraph whose English
changed a little keeps its old translation marked fuzzy (with the English it was made from
beside it, so a translator sees what changed), a new or much rewritten one arrives
untranslated, and a removed one becomes obsolete (kept at the end of the file as ``#~``,
where the old translation of a much rewritten paragraph can be taken from). A fuzzy or
empty message is never used: a build refuses it by name.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract
from babel.messages.mofile import write_mo
from babel.messages.pofile import normalize, read_po, unescape, write_po

from autograder.message_language import DOMAIN
from autograder.translation import paragraphs

# The languages of the course besides English: code -> (name, JupyterLab's locale, the
# language's name in itself, as a reader looks for their own).
LANGUAGES = {"ko": ("Korean", "ko_KR", "한국어"), "zh": ("Chinese (Simplified)", "zh_CN", "中文"),
             "ja": ("Japanese", "ja_JP", "日本語")}
FOLDER = "translations"
CHECKS = Path("autograder", "checks.py")
WEBSITE_WORDS = Path("autograder", "website", "words.py")  # the lecture site's own words
SAY = "_say"  # the function through which the checks (and the site's words) say a message
PROJECT = "PyTorch in-place operations"


def documents(repo: Path) -> list[Path]:
    """The English documents that are translated, relative to ``repo``."""
    found = [*sorted((repo / "notebooks").glob("*.ipynb")), *sorted((repo / "source").glob("*/*.ipynb")),
             repo / "student-edition" / "README.md"]
    return [path.relative_to(repo) for path in found]


def catalogued(repo: Path) -> list[Path]:
    """Everything a catalogue translates: the documents, then the code whose messages
    students read (``_say("...")`` calls): the checks' (compiled for the kernels,
    ``compiled_path``) and the lecture site's."""
    return [*documents(repo), CHECKS, WEBSITE_WORDS]


def compiled_path(repo: Path, language: str) -> Path:
    """Where the checks find their messages in ``language`` (``message_language.LOCALE``)."""
    return repo / "autograder" / "locale" / language / "LC_MESSAGES" / f"{DOMAIN}.mo"


def compiled(catalog: Catalog) -> bytes:
    """A catalogue as the ``.mo`` file Python's gettext reads: its finished messages only."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def catalogue_path(repo: Path, language: str, document: Path) -> Path:
    return repo / FOLDER / language / document.with_suffix(".po")


def glossary_path(repo: Path, language: str) -> Path:
    return repo / FOLDER / language / "glossary.md"


def markdown_texts(path: Path) -> list[tuple[str, int]]:
    """The Markdown of a document, with where it starts: each Markdown cell of a notebook
    with its number (from 1), or a Markdown file whole (at line 1)."""
    if path.suffix == ".ipynb":
        notebook = nbformat.read(path, as_version=4)
        return [(cell.source, number) for number, cell in enumerate(notebook.cells, 1) if cell.cell_type == "markdown"]
    return [(path.read_text(encoding="utf-8"), 1)]


def new_catalog(language: str | None = None) -> Catalog:
    name = LANGUAGES[language][0] if language else "English"
    return Catalog(locale=language, project=PROJECT, fuzzy=False, copyright_holder="the course's authors",
                   msgid_bugs_address="the course's issue tracker", last_translator="the course's translators",
                   language_team=f"{name} translators of the course",
                   header_comment=f"# {name} translation of {PROJECT}: one message per paragraph of the English.\n"
                                  "# Made and merged by `make translations`; translations/README.md says how.")


def template(repo: Path, document: Path) -> Catalog:
    """Every paragraph of ``document`` to translate, once each, with where it is (the
    notebook's cell number, from 1, or the file's line 1); of code, every message it says
    (the first argument of each ``_say`` call)."""
    catalog = new_catalog()
    if document.suffix == ".py":
        with (repo / document).open("rb") as source:
            for _, message, _, _ in extract("python", source, keywords={SAY: (1,)}):
                # no line number: it would change the catalogue at every edit of the code
                catalog.add(message, locations=[(document.as_posix(), None)])
        return catalog
    for text, where in markdown_texts(repo / document):
        for piece in paragraphs.translatable(text):
            catalog.add(piece, locations=[(document.as_posix(), where)])
    return catalog


def read(path: Path) -> Catalog:
    """A catalogue, with the previous English of its fuzzy messages (``#| msgid``), which
    Babel's reader drops: so a second ``make translations`` keeps it."""
    with path.open("rb") as stream:
        catalog = read_po(stream)
    for english, previous in _previous_ids(path.read_text(encoding="utf-8")).items():
        if english in catalog:
            catalog[english].previous_id = [previous]
    return catalog


def _previous_ids(text: str) -> dict[str, str]:
    """msgid -> the ``#| msgid`` written above it."""
    found, previous, current, into = {}, None, None, None
    for line in text.splitlines():
        if line.startswith("#| msgid "):
            previous, into = [unescape(line[len("#| msgid "):])], "previous"
        elif line.startswith('#| "') and into == "previous":
            previous.append(unescape(line[3:]))
        elif line.startswith("msgid ") and previous is not None:
            current, into = [unescape(line[len("msgid "):])], "current"
        elif line.startswith('"') and into == "current":
            current.append(unescape(line))
        else:
            if into == "current":
                found["".join(current)] = "".join(previous)
                previous, current = None, None
            if not line.startswith("#"):
                into = None
    return found


def write(path: Path, catalog: Catalog) -> None:
    """The catalogue as a ``.po`` file, lines unwrapped, the previous English of each fuzzy
    message above it as ``msgmerge`` writes it (``#| msgid`` and its lines; Babel's own
    writer folds a message of several lines into a comment nothing reads back)."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, omit_header=False)
    text = buffer.getvalue().decode("utf-8")
    for message in catalog:
        if message.id and message.fuzzy and message.previous_id:
            block = f"\nmsgid {normalize(message.id, width=0)}\n"
            was = f"msgid {normalize(message.previous_id[0], width=0)}"
            previous = "".join(f"#| {line}\n" for line in was.splitlines())
            text = text.replace(block, f"\n{previous}{block[1:]}", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


@dataclass(frozen=True)
class Counts:
    translated: int
    fuzzy: int
    untranslated: int

    @property
    def complete(self) -> bool:
        return not (self.fuzzy or self.untranslated)


def counts(catalog: Catalog) -> Counts:
    messages = [message for message in catalog if message.id]
    fuzzy = sum(1 for message in messages if message.fuzzy)
    empty = sum(1 for message in messages if not message.string and not message.fuzzy)
    return Counts(len(messages) - fuzzy - empty, fuzzy, empty)


def update(repo: Path, language: str, document: Path) -> Counts:
    """Merge ``document``'s English into its catalogue for ``language`` (made if missing)."""
    path = catalogue_path(repo, language, document)
    catalog = read(path) if path.exists() else new_catalog(language)
    # the English each fuzzy message's translation was made from, which a merge must keep
    translated_from = {message.id: message.previous_id for message in catalog if message.fuzzy and message.previous_id}
    catalog.update(template(repo, document), update_creation_date=False)
    for message in catalog:
        if not message.fuzzy:
            continue
        if not message.previous_id and message.id in translated_from:  # still fuzzy, its English unchanged
            message.previous_id = translated_from[message.id]
        elif message.previous_id and message.previous_id[0] in translated_from:  # its English changed again
            message.previous_id = translated_from[message.previous_id[0]]
    write(path, catalog)
    return counts(catalog)


def unfinished(catalog: Catalog) -> list[str]:
    """The English of every message without a usable translation (empty or fuzzy)."""
    return [message.id for message in catalog if message.id and (message.fuzzy or not message.string)]


def usable(catalog: Catalog) -> dict[str, str]:
    """English paragraph -> its translation, for every message translated and not fuzzy."""
    return {message.id: message.string for message in catalog
            if message.id and message.string and not message.fuzzy and isinstance(message, Message)}
