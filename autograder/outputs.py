"""Caps on what a graded notebook's outputs may add up to, on both sides of the wire.

A notebook can print 300 MB on one line or a million short lines, and every byte of it
would be held by the grader, written into the graded notebook and rendered into the
feedback page. So:

- in the kernel, before any student code, every message its session sends is cut to
  ``PER_OUTPUT`` bytes of content (``cap_session``);
- in the grader, every output message passes through an ``OutputBudget`` before it is
  kept: an output over ``per_output`` bytes is cut (text) or replaced by a notice
  (images, HTML), and once the notebook's outputs reach ``per_notebook`` bytes the rest
  are dropped, with one notice saying so;
- a message over ``MAX_MESSAGE_BYTES`` (one that got past the kernel's cap by going
  around it) is refused by the grader's socket before it is read. ZeroMQ then drops the
  connection for good, so the notebook's later output, the guard's canary among it, no
  longer arrives: such a notebook ends as tampered with.

The defaults are far above what an honest notebook prints: the largest output of the
course's lectures is 170 kB, the largest lecture 380 kB in all.
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


def cap_session(session, limit: int = PER_OUTPUT) -> None:
    """Make ``session`` (the kernel's jupyter_client Session) cut the content of every
    output message it sends to ``limit`` bytes, and drop binary buffers past it."""
    send = session.send

    def capped_send(stream, msg_or_type, content=None, parent=None, ident=None, buffers=None, track=False,
                    header=None, metadata=None):
        if isinstance(msg_or_type, dict):
            msg_or_type["content"] = _capped(msg_or_type["msg_type"], msg_or_type.get("content", {}), limit)
            buffers = buffers or msg_or_type.pop("buffers", None)
        elif content is not None:
            content = _capped(msg_or_type, content, limit)
        if sum(memoryview(buffer).nbytes for buffer in buffers or ()) > limit:
            buffers = []
        return send(stream, msg_or_type, content, parent, ident, buffers, track, header, metadata)

    session.send = capped_send


def _capped(msg_type: str, content: dict, limit: int) -> dict:
    size = content_bytes(msg_type, content) if msg_type in CONTENT_MESSAGES else 0
    return _cut(msg_type, content, limit, size) if size > limit else content


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
    """The content cut to at most ``limit`` bytes, notice included."""
    notice = f"\n[output cut: it was {size:,} bytes, over the limit of {limit // 2**20} MiB per output]\n"
    room = max(0, limit - 2 * len(notice))
    if msg_type == "stream":
        return {**content, "text": _prefix(content.get("text", ""), room) + notice}
    if msg_type == "error":
        traceback = content.get("traceback", [])
        return {**content, "evalue": _prefix(content.get("evalue", ""), room // 2) + notice,
                "traceback": [_prefix("\n".join(map(str, traceback)), room // 2) + notice]}
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
