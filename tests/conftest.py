"""Shared fixtures, and the answer-suite table printed at the end of a test run."""

from __future__ import annotations

import pytest

_VERDICTS: list[tuple[str, str, str | None, str | None]] = []


@pytest.fixture
def answer_verdicts():
    """Where test_answers records (function, answer, visible failure, hidden failure)."""
    return _VERDICTS


def pytest_terminal_summary(terminalreporter):
    if not _VERDICTS:
        return
    write = terminalreporter.write_line
    terminalreporter.section("answer suite: every answer against visible and hidden tests")
    write(f"{'function':<16} {'answer':<28} {'visible':<8} {'hidden':<8} first failing check")
    for function, answer, visible, hidden in sorted(_VERDICTS):
        reason = (hidden or visible or "").splitlines()[0][:90] if (hidden or visible) else ""
        write(
            f"{function:<16} {answer:<28} {'pass' if visible is None else 'FAIL':<8} "
            f"{'pass' if hidden is None else 'FAIL':<8} {reason}"
        )
