"""Output caps: an output over its limit is cut (its metadata, and every other key of its
content, counted and dropped), a notebook that reaches its limit raises once to be stopped,
and the kernel's own session never sends more than one output's worth."""

from __future__ import annotations

import json

import pytest

from autograder.sandbox.outputs import (
    PER_NOTEBOOK,
    PER_OUTPUT,
    OutputBudget,
    OutputBudgetSpent,
    cap_session,
    content_bytes,
)

MiB = 2**20


def stream(text: str) -> dict:
    return {"name": "stdout", "text": text}


def figure(metadata: dict, transient: dict | None = None) -> dict:
    content = {"data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}, "metadata": metadata}
    return content if transient is None else {**content, "transient": transient}


def json_bytes(content) -> int:
    """The content's size as the wire carries it, measured apart from the code under test."""
    return len(json.dumps(content, ensure_ascii=False).encode())


def test_an_honest_output_is_kept_whole():
    budget = OutputBudget(per_output=1000, per_notebook=5000)
    assert budget.admit("stream", stream("hello\n")) == stream("hello\n")
    assert budget.admit("status", {"execution_state": "idle"}) == {"execution_state": "idle"}
    assert budget.notes == []


def test_honest_outputs_of_every_kind_pass_untouched_and_are_counted_whole():
    honest = [("stream", stream("loss 0.25\n")),
              ("display_data", figure({"image/png": {"width": 640, "height": 480}}, {"display_id": "plot"})),
              ("update_display_data", figure({"image/png": {"width": 640}}, {"display_id": "plot"})),
              ("execute_result", {**figure({}), "execution_count": 3}),
              ("error", {"ename": "ValueError", "evalue": "bad", "traceback": ["Traceback", "ValueError: bad"]}),
              ("clear_output", {"wait": True})]
    budget = OutputBudget(per_output=10_000, per_notebook=50_000)
    for msg_type, content in honest:
        assert budget.admit(msg_type, json.loads(json.dumps(content))) == content
    assert budget.admit("execute_input", {"code": "x" * 100_000, "execution_count": 1})["code"] == "x" * 100_000
    assert budget.notes == [] and not budget.spent
    assert budget.used == sum(content_bytes(content) for _, content in honest)
    session = _Session()
    cap_session(session, limit=10_000)
    for msg_type, content in honest:
        session.send(None, msg_type, json.loads(json.dumps(content)), metadata={"started": "now"})
    assert [(sent, metadata) for sent, _, metadata in session.contents()] == [(c, {"started": "now"})
                                                                              for _, c in honest]


def test_a_long_output_is_cut_to_its_limit_with_a_notice():
    budget = OutputBudget(per_output=1000, per_notebook=50_000)
    kept = budget.admit("stream", stream("x" * 300_000))
    assert json_bytes(kept) <= 1000 and "output cut: it was 300,0" in kept["text"]
    image = budget.admit("display_data", {"data": {"image/png": "A" * 5000, "text/plain": "<Figure>"}})
    assert list(image["data"]) == ["text/plain"] and "output cut" in image["data"]["text/plain"]
    error = budget.admit("error", {"ename": "E", "evalue": "v" * 5000, "traceback": ["t" * 5000]})
    assert json_bytes(error) <= 1000 and error["ename"] == "E"
    assert len(budget.notes) == 3


def test_a_display_with_48_MiB_of_metadata_is_counted_and_cut_with_its_metadata_dropped():
    """The issue's figure: 60 displays with 48 MiB of metadata each. Each one is counted
    whole and cut to a notice, metadata gone, its display id kept for later updates."""
    heavy = figure({"image/png": {"note": "m" * (48 * MiB)}}, {"display_id": "plot"})
    budget = OutputBudget()
    kept = [budget.admit("display_data", heavy) for _ in range(60)]
    assert all(k["metadata"] == {} and k["transient"] == {"display_id": "plot"} for k in kept)
    assert all("output cut: it was 50,3" in k["data"]["text/plain"] for k in kept)
    assert sum(json_bytes(k) for k in kept) <= 60 * 1000 and budget.used <= 60 * 1000
    assert len(budget.notes) == 60 and not budget.spent


def test_every_key_of_an_output_counts_transient_and_unknown_ones_too():
    budget = OutputBudget(per_output=1000, per_notebook=10**6)
    update = budget.admit("update_display_data", figure({}, {"display_id": "plot", "junk": "j" * 5000}))
    assert update["transient"] == {"display_id": "plot"} and json_bytes(update) <= 1000
    result = budget.admit("execute_result", {**figure({}), "execution_count": 7, "extra": ["e" * 5000]})
    assert set(result) == {"data", "metadata", "execution_count"} and result["execution_count"] == 7
    cleared = budget.admit("clear_output", {"wait": True, "junk": "c" * 5000})
    assert cleared == {"wait": True}
    error = budget.admit("error", {"ename": "E" * 5000, "evalue": "v", "traceback": []})
    assert json_bytes(error) <= 1000
    nested: list = []
    for _ in range(100_000):  # deeper than any recursion would go
        nested = [nested]
    assert budget.admit("display_data", figure({"deep": nested}))["metadata"] == {}
    assert len(budget.notes) == 5


def test_a_notebook_that_reaches_its_budget_raises_once_then_loses_its_output():
    budget = OutputBudget(per_output=2**17, per_notebook=MiB)
    kept = []
    with pytest.raises(OutputBudgetSpent, match="reached 1 MiB") as spent:
        for _ in range(100):
            kept.append(budget.admit("stream", stream("y" * 100_000)))
    assert len(kept) == 10 and budget.spent and budget.used <= MiB
    assert [budget.admit("stream", stream("late\n")) for _ in range(5)] == [None] * 5  # no second raise
    assert budget.admit("status", {"execution_state": "idle"}) == {"execution_state": "idle"}
    assert budget.notes == [str(spent.value)]


def test_displays_each_under_the_output_cap_but_heavy_in_metadata_spend_the_budget():
    budget = OutputBudget()
    kept = []
    with pytest.raises(OutputBudgetSpent, match=f"reached {PER_NOTEBOOK // MiB} MiB"):
        for _ in range(60):
            kept.append(budget.admit("display_data", figure({"note": "m" * (PER_OUTPUT // 2)})))
    assert len(kept) == 7 and sum(json_bytes(k) for k in kept) <= PER_NOTEBOOK  # 1 MiB and a few bytes each
    assert budget.admit("display_data", figure({})) is None


class _Session:
    def __init__(self):
        self.sent = []

    def send(self, stream, msg_or_type, content=None, parent=None, ident=None, buffers=None, track=False,
             header=None, metadata=None):
        self.sent.append((msg_or_type, content, buffers, metadata))

    def contents(self):
        """(content, buffers, message metadata) of each message sent, whichever way it was sent."""
        for msg_or_type, content, buffers, metadata in self.sent:
            if isinstance(msg_or_type, dict):
                yield msg_or_type["content"], buffers, msg_or_type.get("metadata", metadata)
            else:
                yield content, buffers, metadata


def test_the_kernel_session_cuts_what_it_sends():
    session = _Session()
    cap_session(session, limit=1000)
    session.send(None, "stream", stream("z" * 10**6), parent={})
    session.send(None, "comm_msg", {"data": {}}, buffers=[b"b" * 5000])
    session.send(None, {"msg_type": "display_data", "content": {"data": {"text/html": "h" * 10**5}}})
    (first, _, _), (_, buffers, _), (third, _, _) = session.contents()
    assert json_bytes(first) <= 1000 and buffers == []
    assert json_bytes(third) <= 1000


def test_the_kernel_session_counts_and_drops_48_MiB_of_metadata():
    session = _Session()
    cap_session(session)
    heavy = "m" * (48 * MiB)
    session.send(None, "display_data", figure({"image/png": {"note": heavy}}, {"display_id": "plot"}))
    session.send(None, "update_display_data", figure({}, {"display_id": "plot", "junk": heavy}))
    session.send(None, {"msg_type": "display_data", "content": figure({"note": heavy}), "metadata": {}})
    session.send(None, "display_data", figure({}), metadata={"note": heavy})
    session.send(None, "execute_reply", {"status": "ok", "user_expressions": {}}, metadata={"started": "now"})
    sent = list(session.contents())
    assert all(json_bytes(content) <= 1000 and content["metadata"] == {} for content, _, _ in sent[:3])
    assert [content.get("transient") for content, _, _ in sent[:2]] == [{"display_id": "plot"}] * 2
    assert sent[3] == (figure({}), None, {})
    assert sent[4][2] == {"started": "now"}
