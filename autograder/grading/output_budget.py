"""Caps on what a graded notebook's outputs may add up to, applied as they arrive.

A notebook can print 300 MB on one line or a million short lines, and every byte of it
would be held by the grader, written into the graded notebook and rendered into the
feedback page. The grader passes every output message through an ``OutputBudget``
before keeping it: an output over ``per_output`` bytes is cut (text) or replaced by a
notice (images, HTML), and once the notebook's outputs reach ``per_notebook`` bytes the
rest are dropped, with one notice saying so. The defaults are far above what an honest
notebook prints: the largest output of the course's lectures is 170 kB, the largest
lecture 380 kB in all. (Single messages are also capped in size before they are read
at all, by the kernel client's socket: ``MAX_MESSAGE_BYTES``.)
"""

from __future__ import annotations

import json

PER_OUTPUT = 2 * 2**20
PER_NOTEBOOK = 8 * 2**20
MAX_MESSAGE_BYTES = 64 * 2**20
# The output messages of the Jupyter protocol that add content to a cell.
CONTENT_MESSAGES = ("stream", "display_data", "execute_result", "error", "update_display_data")


class OutputBudget:
    """Bytes of output kept so far in one notebook, and the notes on what was cut."""

    def __init__(self, per_output: int = PER_OUTPUT, per_notebook: int = PER_NOTEBOOK):
        self.per_output = per_output
        self.per_notebook = per_notebook
        self.used = 0
        self.notes: list[str] = []
        self._exhausted_noted = False

    def admit(self, msg_type: str, content: dict) -> dict | None:
        """The content to keep for one output message (possibly cut), or None to drop it."""
        if msg_type not in CONTENT_MESSAGES:
            return content
        if self.used >= self.per_notebook:
            if self._exhausted_noted:
                return None
            self._exhausted_noted = True
            self.notes.append(f"outputs past {self.per_notebook // 2**20} MiB in all were dropped")
            return _notice_like(msg_type, content, f"[further output dropped: this notebook's outputs "
                                                   f"reached {self.per_notebook // 2**20} MiB]")
        size = content_bytes(msg_type, content)
        if size > self.per_output:
            self.notes.append(f"an output of {size:,} bytes was cut to {self.per_output // 2**20} MiB")
            content = _cut(msg_type, content, self.per_output, size)
            size = content_bytes(msg_type, content)
        self.used += size
        return content


def content_bytes(msg_type: str, content: dict) -> int:
    if msg_type == "stream":
        return _bytes(content.get("text", ""))
    if msg_type == "error":
        parts = [content.get("ename", ""), content.get("evalue", ""), *content.get("traceback", [])]
        return sum(_bytes(part) for part in parts)
    return sum(_bytes(value) for value in content.get("data", {}).values())


def _bytes(value) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return len(json.dumps(value).encode())


def _cut(msg_type: str, content: dict, limit: int, size: int) -> dict:
    notice = f"\n[output cut: it was {size:,} bytes, over the limit of {limit // 2**20} MiB per output]\n"
    if msg_type == "stream":
        return {**content, "text": _prefix(content.get("text", ""), limit) + notice}
    if msg_type == "error":
        traceback = content.get("traceback", [])
        return {**content, "evalue": _prefix(content.get("evalue", ""), limit // 2) + notice,
                "traceback": [_prefix("\n".join(map(str, traceback)), limit // 2) + notice]}
    return _notice_like(msg_type, content, notice.strip())


def _notice_like(msg_type: str, content: dict, notice: str) -> dict:
    """An output of the same kind whose only content is ``notice``."""
    if msg_type == "stream":
        return {**content, "text": notice + "\n"}
    if msg_type == "error":
        return {**content, "evalue": notice, "traceback": [notice]}
    return {**content, "data": {"text/plain": notice}, "metadata": {}}


def _prefix(text: str, limit: int) -> str:
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")
