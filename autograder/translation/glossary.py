"""A language's glossary (``translations/LANG/glossary.md``), read: the terms whose
translation is checked wherever their English appears, and the words kept in English."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Glossary:
    checked: dict[str, str]  # a regular expression for the English term -> what the translation must hold
    kept_words: frozenset[str]  # lower case


def read(path: Path) -> Glossary:
    checked, kept = {}, set()
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 3 and (found := re.fullmatch(r"`(.+)`", cells[2])):
            checked[_english_pattern(cells[0])] = found.group(1)
    _, _, kept_section = text.partition("## Kept in English")
    words = kept_section.strip().split("\n\n")[-1] if kept_section.strip() else ""  # its last paragraph
    kept.update(word.strip().lower() for word in words.replace("\n", " ").split(",") if word.strip())
    return Glossary(checked, frozenset(kept))


def _english_pattern(term: str) -> str:
    """'in-place (operation)' -> the term without what is in brackets, any hyphen or space
    between its words, as a whole word or its plural, any case."""
    words = re.split(r"[\s-]+", re.sub(r"\(.*?\)", "", term).strip())
    return r"(?i)\b" + r"[\s-]+".join(map(re.escape, words)) + r"s?\b"
