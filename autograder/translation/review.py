"""What is wrong with a catalogue's translations, message by message: a part the English
keeps that the translation lost or added (``faithful.problems``), a sentence left in
English, a glossary term translated otherwise than the glossary says."""

from __future__ import annotations

import re

from babel.messages.catalog import Catalog

from autograder.translation import faithful
from autograder.translation.glossary import Glossary


def problems(catalog: Catalog, glossary: Glossary) -> list[tuple[str, str]]:
    """(English paragraph, what is wrong) for each fault of each translated message."""
    found = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        english, translation = message.id, message.string
        found += [(english, problem) for problem in faithful.problems(english, translation)]
        if left := faithful.english_left(translation, glossary.kept_words):
            found.append((english, f"English left in the translation: {left!r}"))
        for pattern, wanted in glossary.checked.items():
            if re.search(pattern, faithful.without_code(english)) and wanted not in translation:
                found.append((english, f"the glossary's {wanted!r} is not in the translation"))
    return found
