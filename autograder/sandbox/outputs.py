"""Caps on what a graded notebook's outputs may add up to, on both sides of the wire.

A notebook can print 300 MB on one line or a million short lines, or hang 48 MiB of
metadata on every figure it shows, and every byte of it would be held by the grader,
written into the graded notebook and rendered into the feedback page. So:

- an output's size is every byte of its message's content (``content_bytes``): its data
  or text, and its ``metadata``, ``transient`` and any other key, however deep;
- every message that can reach a cell's outputs counts (``is_output``): ``stream``,
  ``display_data``, ``execute_result``, ``error``, ``update_display_data`` (each update
  counts again), ``clear_output``, the widgets' ``comm_*`` messages and any type a kernel
  may invent. Only ``status`` and ``execute_input`` (the kernel's state, the cell's own
  source echoed) and the replies and requests of the other channels never do;
- in the kernel, before any student code, every output message its session sends is cut
  to ``PER_OUTPUT`` bytes of content, a message's own metadata over it is dropped, and so
  are its binary buffers past it (``cap_session``);
- in the grader, every output message passes through an ``OutputBudget`` before it is
  kept: an output over ``per_output`` bytes is cut (text, with a notice) or replaced by a
  notice (images, HTML), its metadata dropped either way. The first output that would take
  the notebook past ``per_notebook`` bytes is not kept: the budget notes it and raises
  ``OutputBudgetSpent``, and the grader stops the notebook (a notebook that spends its
  budget is stopped, not left to run on printing nothing). Output that still arrives is
  dropped;
- a message over ``MAX_MESSAGE_BYTES`` (one that got past the kernel's cap by going
  around it) is refused by the grader's socket before it is read. ZeroMQ then drops the
  connection for good, so the notebook's later output, the guard's error probe among it, no
  longer arrives: such a notebook ends as tampered with.

The defaults are far above what an honest notebook prints: the largest output of the
course's lectures is 170 kB, the largest lecture 380 kB in all.
"""

from __future__ import annotations

PER_OUTPUT = 2 * 2**20
PER_NOTEBOOK = 8 * 2**20
MAX_MESSAGE_BYTES = 64 * 2**20
# IOPub messages that never reach a cell's outputs: the kernel's state, the cell's source.
NOT_OUTPUT_MESSAGES = ("status", "execute_input")
# The output messages whose content is a mime bundle with its metadata.
DISPLAY_MESSAGES = ("display_data", "execute_result", "update_display_data")
# What of an output's content survives its cut besides the notice: short names and ids.
_SHORT = 256


def is_output(msg_type: str) -> bool:
    """Whether a message of this type counts against the output caps: every one that
    may reach a cell's outputs, whatever its type (replies go on other channels)."""
    return msg_type not in NOT_OUTPUT_MESSAGES and not msg_type.endswith(("_reply", "_request"))


class OutputBudgetSpent(Exception):
    """A notebook's outputs reached its budget: the grader stops the notebook."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"this notebook's outputs reached {_mib(limit)} in all, its limit: "
                         f"it was stopped and its further output dropped")


class OutputBudget:
    """Bytes of output kept so far in one notebook, and the notes on what was cut."""

    def __init__(self, per_output: int = PER_OUTPUT, per_notebook: int = PER_NOTEBOOK):
        self.per_output = per_output
        self.per_notebook = per_notebook
        self.used = 0
        self.notes: list[str] = []
        # Set once an output would have gone past ``per_notebook``: nothing more is kept.
        self.spent = False

    def admit(self, msg_type: str, content: dict) -> dict | None:
        """The content to keep for one message (possibly cut), or None to drop it.

        Raises ``OutputBudgetSpent`` once, for the first output that would take the
        notebook past ``per_notebook`` (that output is not kept); after it every output
        is dropped. Messages that are not outputs (``is_output``) pass untouched."""
        if not is_output(msg_type):
            return content
        if self.spent:
            return None
        size = content_bytes(content)
        if size > self.per_output:
            self.notes.append(f"an output of {size:,} bytes was cut to {_mib(self.per_output)}")
            content = _cut(msg_type, content, self.per_output, size)
            size = content_bytes(content)
        if self.used + size > self.per_notebook:
            self.spent = True
            spent = OutputBudgetSpent(self.per_notebook)
            self.notes.append(str(spent))
            raise spent
        self.used += size
        return content


def cap_session(session, limit: int = PER_OUTPUT) -> None:
    """Make ``session`` (the kernel's jupyter_client Session) cut the content of every
    output message it sends to ``limit`` bytes, counted as the grader counts it, drop the
    message's own metadata when it is over ``limit``, and drop binary buffers past it."""
    send = session.send

    def capped_send(stream, msg_or_type, content=None, parent=None, ident=None, buffers=None, track=False,
                    header=None, metadata=None):
        if isinstance(msg_or_type, dict):
            msg_type = msg_or_type["msg_type"]
            msg_or_type["content"] = _capped(msg_type, msg_or_type.get("content", {}), limit)
            if is_output(msg_type) and content_bytes(msg_or_type.get("metadata", {})) > limit:
                msg_or_type["metadata"] = {}
            buffers = buffers or msg_or_type.pop("buffers", None)
        else:
            msg_type = msg_or_type
            if content is not None:
                content = _capped(msg_type, content, limit)
        if metadata is not None and is_output(msg_type) and content_bytes(metadata) > limit:
            metadata = {}
        if sum(memoryview(buffer).nbytes for buffer in buffers or ()) > limit:
            buffers = []
        return send(stream, msg_or_type, content, parent, ident, buffers, track, header, metadata)

    session.send = capped_send


def _capped(msg_type: str, content: dict, limit: int) -> dict:
    size = content_bytes(content) if is_output(msg_type) else 0
    return _cut(msg_type, content, limit, size) if size > limit else content


def content_bytes(content) -> int:
    """Bytes of a message's content as the grader holds it, near enough its JSON: every key
    and every value at any depth, strings as UTF-8 with their quotes, one byte for each
    separator. Walked without recursion, so no nesting can make it fail."""
    total, pending = 0, [content]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            total += 2 + (len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass")))
        elif isinstance(value, dict):
            total += 2 + 2 * len(value)
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, (list, tuple)):
            total += 2 + len(value)
            pending.extend(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            total += 2 + 4 * -(-memoryview(value).nbytes // 3)  # base64, as jupyter_client sends them
        else:
            total += len(str(value))
    return total


def _cut(msg_type: str, content: dict, limit: int, size: int) -> dict:
    """The content cut to at most ``limit`` bytes, notice included, its metadata and
    anything else that is not the output itself dropped."""
    notice = f"\n[output cut: it was {size:,} bytes, over the limit of {_mib(limit)} per output]\n"
    room = max(0, limit - 3 * len(notice) - 2 * _SHORT)
    if not isinstance(content, dict):
        return {}
    if msg_type == "stream":
        name = content.get("name")
        return {"name": name if name in ("stdout", "stderr") else "stdout",
                "text": _prefix(_text(content.get("text")), room) + notice}
    if msg_type == "error":
        traceback = content.get("traceback")
        lines = [line for line in traceback if isinstance(line, str)] if isinstance(traceback, list) else []
        return {"ename": _prefix(_text(content.get("ename")), min(_SHORT, room // 4)),
                "evalue": _prefix(_text(content.get("evalue")), room // 4) + notice,
                "traceback": [_joined_prefix(lines, room // 2) + notice]}
    if msg_type in DISPLAY_MESSAGES:
        cut = {"data": {"text/plain": notice.strip()}, "metadata": {}}
        if msg_type == "execute_result":
            count = content.get("execution_count")
            cut["execution_count"] = count if isinstance(count, int) else None
        transient = content.get("transient")
        display_id = transient.get("display_id") if isinstance(transient, dict) else None
        if isinstance(display_id, str) and len(display_id) <= _SHORT:  # updates still find it
            cut["transient"] = {"display_id": display_id}
        return cut
    # clear_output, a widget's message, a type of the future: its short fields, within room.
    kept, used = {}, 2
    for key, value in content.items():
        if isinstance(key, str) and len(key) <= _SHORT and _is_short(value):
            used += content_bytes(key) + content_bytes(value) + 2
            if used > room:
                break
            kept[key] = value
    return kept


def _is_short(value) -> bool:
    return value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= _SHORT)


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _joined_prefix(lines: list[str], limit: int) -> str:
    """The first ``limit`` bytes of the lines joined, without joining what lies past them."""
    taken, length = [], 0
    for line in lines:
        if length > limit:
            break
        taken.append(line[: limit + 1])
        length += len(taken[-1]) + 1
    return _prefix("\n".join(taken), limit)


def _prefix(text: str, limit: int) -> str:
    # A character is at least one byte: the first ``limit`` characters hold the prefix.
    return text[:limit].encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def _mib(size: int) -> str:
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size:,} bytes"
