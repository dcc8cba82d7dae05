"""Text from students on the TA's terminal: shown, never obeyed.

A student id, a file name inside an LMS download or a link target can hold escape
sequences that move the cursor, hide the lines after them or retitle the terminal.
``printable`` shows every control or invisible character as a visible escape instead.
"""

from __future__ import annotations

import unicodedata

# Control, format (bidirectional overrides, zero-width), line/paragraph separators, surrogates.
HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs")


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on shown as ``\\x1b``, ``\\u202e``..."""
    return "".join(ascii(char)[1:-1] if unicodedata.category(char) in HIDDEN else char for char in text)
