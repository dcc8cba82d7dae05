"""Output caps: an output over its limit is cut, a notebook over its limit loses the rest
with one notice, and the kernel's own session never sends more than one output's worth."""

from __future__ import annotations

from autograder.outputs import OutputBudget, cap_session, content_bytes


def stream(text: str) -> dict:
    return {"name": "stdout", "text": text}


def test_an_honest_output_is_kept_whole():
    budget = OutputBudget(per_output=1000, per_notebook=5000)
    assert budget.admit("stream", stream("hello\n")) == stream("hello\n")
    assert budget.admit("status", {"execution_state": "idle"}) == {"execution_state": "idle"}
    assert budget.notes == []


def test_a_long_output_is_cut_to_its_limit_with_a_notice():
    budget = OutputBudget(per_output=1000, per_notebook=50_000)
    kept = budget.admit("stream", stream("x" * 300_000))
    assert content_bytes("stream", kept) <= 1000 and "output cut: it was 300,000 bytes" in kept["text"]
    image = budget.admit("display_data", {"data": {"image/png": "A" * 5000, "text/plain": "<Figure>"}})
    assert list(image["data"]) == ["text/plain"] and "output cut" in image["data"]["text/plain"]
    error = budget.admit("error", {"ename": "E", "evalue": "v" * 5000, "traceback": ["t" * 5000]})
    assert content_bytes("error", error) <= 1000 + 1
    assert len(budget.notes) == 3


def test_past_the_notebook_limit_the_rest_is_dropped_with_one_notice():
    budget = OutputBudget(per_output=1000, per_notebook=3000)
    kept = [budget.admit("stream", stream("y" * 900)) for _ in range(10)]
    assert [k is not None for k in kept] == [True] * 5 + [False] * 5
    assert "further output dropped" in kept[4]["text"]
    assert budget.notes == ["outputs past 0 MiB in all were dropped"]


class _Session:
    def __init__(self):
        self.sent = []

    def send(self, stream, msg_or_type, content=None, parent=None, ident=None, buffers=None, track=False,
             header=None, metadata=None):
        self.sent.append((msg_or_type, content, buffers))


def test_the_kernel_session_cuts_what_it_sends():
    session = _Session()
    cap_session(session, limit=1000)
    session.send(None, "stream", stream("z" * 10**6), parent={})
    session.send(None, "comm_msg", {"data": {}}, buffers=[b"b" * 5000])
    session.send(None, {"msg_type": "display_data", "content": {"data": {"text/html": "h" * 10**5}}})
    (_, first, _), (_, second, buffers), (message, _, _) = session.sent
    assert content_bytes("stream", first) <= 1000 and buffers == []
    assert content_bytes("display_data", message["content"]) <= 1000
