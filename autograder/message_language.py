"""Which language the checks' messages speak, and which language a notebook is written in.

A translated student edition holds the file ``locale/EDITION`` (its language); the
variable ``COURSE_LANGUAGE`` overrides it; without either the messages are English. The
grader sets the variable for a grading kernel from the notebook's own Markdown (a Korean
notebook's instructions are in Hangul), so a student reads the feedback in the language
they worked in while the grade never depends on it. No torch here: grading workers read it.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

LANGUAGE_VARIABLE = "COURSE_LANGUAGE"
LOCALE = Path(__file__).resolve().parent / "locale"  # LANGUAGE/LC_MESSAGES/checks.mo, and EDITION
DOMAIN = "checks"
EDITION_FILE = LOCALE / "EDITION"
# A notebook counts as written in a language when this share of its letters is in its script.
SHARE = 0.2


def message_language() -> str | None:
    """The language the checks speak now, or None for English."""
    if chosen := os.environ.get(LANGUAGE_VARIABLE):
        return chosen
    if EDITION_FILE.is_file():
        return EDITION_FILE.read_text().strip() or None
    return None


def text_language(text: str) -> str | None:
    """'ko', 'ja' or 'zh' for a text mostly in Hangul, in Japanese kana (with or without
    kanji) or in Chinese characters; None for any other (English)."""
    counts = {"HANGUL": 0, "KANA": 0, "CJK": 0, "LATIN": 0}
    for character in text:
        if not character.isalpha():
            continue
        name = unicodedata.name(character, "")
        script = next((script for script in ("HANGUL", "CJK", "LATIN") if name.startswith(script)), None)
        if "HIRAGANA" in name or "KATAKANA" in name:
            script = "KANA"
        if script:
            counts[script] += 1
    letters = sum(counts.values())
    if not letters:
        return None
    if counts["HANGUL"] / letters >= SHARE:
        return "ko"
    if counts["KANA"] / letters >= SHARE / 4:
        return "ja"
    if counts["CJK"] / letters >= SHARE:
        return "zh"
    return None
