"""Links to a heading, kept pointing at it once the heading is translated.

JupyterLab gives a rendered heading the id of its text with spaces turned into hyphens
(``## May I write in place here?`` is ``#May-I-write-in-place-here?``), so a translated
heading has another id. A translation keeps its English link targets (``faithful``), and
the build turns each one that names a translated heading into that heading's new id.
"""

from __future__ import annotations

import posixpath
import re

_HEADING = re.compile(r"^(#{1,6}) +(.+?)\s*#*\s*$")
_MARKUP = re.compile(r"`+|\*+|(?<!\w)_+|_+(?!\w)|<[^<>]+>")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# a Markdown link's target: a path (empty for the document itself), then an anchor or none
LINK_TARGET = re.compile(r"\]\((?P<path>[^)#\s]*?)(?:#(?P<anchor>[^)\s]+))?\)")


def heading_id(heading: str) -> str | None:
    """The id JupyterLab gives a Markdown heading line, or None for another line."""
    found = _HEADING.match(heading.strip().splitlines()[0]) if heading.strip() else None
    if not found:
        return None
    text = _MARKUP.sub("", _LINK.sub(r"\1", found.group(2)))
    return text.strip().replace(" ", "-")


def heading_ids(translations: dict[str, str]) -> dict[str, str]:
    """English heading id -> the translated heading's, for every translated heading."""
    return {english_id: translated_id for english, translated in translations.items()
            if (english_id := heading_id(english)) and (translated_id := heading_id(translated))}


def relinked(text: str, document: str, ids: dict[str, dict[str, str]]) -> str:
    """``text`` (in ``document``, a path relative to the course) with every link to a
    heading of a translated document (``ids``: its path -> its heading ids) pointing at
    the translated heading."""
    def relink(found: re.Match) -> str:
        path = found.group("path")
        if found.group("anchor") is None:
            return found.group(0)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(document), path)) if path else document
        anchor = ids.get(target, {}).get(found.group("anchor"))
        return f"]({path}#{anchor})" if anchor else found.group(0)

    return LINK_TARGET.sub(relink, text)
