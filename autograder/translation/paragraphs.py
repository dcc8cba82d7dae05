"""A Markdown text cut into the pieces a translator translates one at a time.

A piece is a block between blank lines (a paragraph, a heading, a list, a table, an HTML
line such as ``<details><summary>Answer</summary>``); a fenced code block or a display-math
block is kept as it is and never offered for translation, even where no blank line
separates it from the prose. Joining the pieces gives back the text byte for byte, so a
text whose pieces are all kept is unchanged, and a translated text differs from the
English one only inside the pieces that were translated. Pieces are what gettext calls
messages: a changed sentence marks only its own paragraph's translation fuzzy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MATH_FENCE = re.compile(r"^ {0,3}\$\$\s*$")
_LETTER = re.compile(r"[^\W\d_]")
# What holds letters but no word to translate: code spans, link targets, math, HTML tags.
_NOT_PROSE = re.compile(r"(`+).+?\1|\]\([^)]*\)|\$[^$\n]+\$|</?[A-Za-z][^<>]*>", re.DOTALL)


@dataclass(frozen=True)
class Piece:
    text: str
    translatable: bool  # prose; False for code, math, blank lines and what holds no word outside them


def pieces(text: str) -> list[Piece]:
    """``text`` as pieces whose texts, joined, are ``text``."""
    return list(_merged(_lines_as_pieces(text)))


def translatable(text: str) -> list[str]:
    """The texts of the pieces a translator sees, in order."""
    return [piece.text for piece in pieces(text) if piece.translatable]


def translated(text: str, translate: Callable[[str], str]) -> str:
    """``text`` with every translatable piece replaced by ``translate(piece)``."""
    return "".join(translate(piece.text) if piece.translatable else piece.text for piece in pieces(text))


def _lines_as_pieces(text: str) -> Iterator[Piece]:
    lines = text.splitlines(keepends=True)
    prose: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        closing = fence_closing(line)
        if closing is not None:  # a fenced block, up to its closing line (or the text's end)
            yield from _prose(prose)
            prose = []
            end = index + 1
            while end < len(lines) and not closing(lines[end]):
                end += 1
            yield Piece("".join(lines[index:end + 1]), False)
            index = end + 1
            continue
        if line.strip():
            prose.append(line)
        else:
            yield from _prose(prose)
            prose = []
            yield Piece(line, False)
        index += 1
    yield from _prose(prose)


def fence_closing(line: str) -> Callable[[str], bool] | None:
    """For the opening line of a fenced block (code, or display math), the test of its
    closing line; None for another line (a backtick fence's info string holds no backtick:
    a line of backticks around code is an inline span)."""
    if (fence := _FENCE.match(line)) and not (fence.group(1)[0] == "`" and "`" in line[fence.end():]):
        mark = fence.group(1)
        return lambda candidate: re.match(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}\s*$", candidate) is not None
    if _MATH_FENCE.match(line):
        return lambda candidate: _MATH_FENCE.match(candidate) is not None
    return None


def _prose(lines: list[str]) -> Iterator[Piece]:
    """A block of prose lines: its text without the last line's end, which comes after it
    as a piece of its own (so that a translation need not end with a newline)."""
    if not lines:
        return
    block = "".join(lines)
    body = block.rstrip("\r\n")
    yield Piece(body, _LETTER.search(_NOT_PROSE.sub(" ", body)) is not None)
    if block[len(body):]:
        yield Piece(block[len(body):], False)


def _merged(found: Iterator[Piece]) -> Iterator[Piece]:
    """Neighbouring pieces that are not translated as one piece (fewer, same text)."""
    kept: list[str] = []
    for piece in found:
        if piece.translatable:
            if kept:
                yield Piece("".join(kept), False)
                kept = []
            yield piece
        else:
            kept.append(piece.text)
    if kept:
        yield Piece("".join(kept), False)
