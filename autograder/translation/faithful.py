"""What a translation must keep of its English paragraph, and English it must not keep.

A translator rewrites the prose and nothing else: inline code, math, link and image
targets, HTML tags, a message's ``{placeholders}`` and a heading's level are the same in both (in any order, since
languages order words differently). A sentence left in English is found as a run of
English words outside those kept parts; words the glossary keeps in English (PyTorch's
names, "autograd") do not count.
"""

from __future__ import annotations

import re
from collections import Counter

CODE = re.compile(r"(`+)(.+?)\1|<code>.*?</code>", re.DOTALL)  # an inline code span
_MATH = re.compile(r"\$[^$\n]+\$")
_TARGET = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_URL = re.compile(r"https?://\S+")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”]*”")  # what a program prints, quoted as it prints it
_HEADING = re.compile(r"^#{1,6} ")
_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}")  # a message's {value} (or any braces), filled in as it is said
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# A run of this many English words in a row is a sentence left untranslated.
ENGLISH_RUN = 4


def kept_parts(text: str) -> Counter:
    """The parts of a paragraph a translation keeps unchanged, counted."""
    parts = Counter()
    for pattern, kind in ((CODE, "code"), (_MATH, "math"), (_TARGET, "target"), (_TAG, "tag"),
                          (_PLACEHOLDER, "placeholder")):
        for found in pattern.finditer(without_code(text) if kind != "code" else text):
            parts[kind, found.group(0) if kind != "target" else found.group(1)] += 1
    if heading := _HEADING.match(text):
        parts["heading", heading.group(0)] += 1
    return parts


def problems(english: str, translation: str) -> list[str]:
    """What the translation of ``english`` changed that it must keep, said plainly."""
    wanted, got = kept_parts(english), kept_parts(translation)
    said = [f"{kind} {part!r} is missing" for (kind, part), count in (wanted - got).items() for _ in range(count)]
    said += [f"{kind} {part!r} is not in the English" for (kind, part), count in (got - wanted).items()
             for _ in range(count)]
    return said


def english_left(translation: str, kept_words: frozenset[str]) -> str | None:
    """A run of ``ENGLISH_RUN`` English words in a row outside code, math, links, tags and
    double quotes (words of ``kept_words``, lower case, excepted), or None."""
    prose = _QUOTED.sub(" ", _TAG.sub(" ", _TARGET.sub("] ", _URL.sub(" ", _MATH.sub(" ", without_code(translation))))))
    run: list[str] = []
    for token in re.split(r"(\s+|[^\sA-Za-z'’-]+)", prose):
        if not token or token.isspace():
            continue
        if _ENGLISH_WORD.fullmatch(token) and token.lower() not in kept_words:
            run.append(token)
            if len(run) >= ENGLISH_RUN:
                return " ".join(run)
        elif not re.fullmatch(r"[\s,;:()\"“”'*_]+", token):
            run = []
    return None


def without_code(text: str) -> str:
    return CODE.sub(" ", text)
