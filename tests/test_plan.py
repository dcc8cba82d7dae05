"""Planning, on its own: what a submission's timestamp.txt must be before anything runs."""

from __future__ import annotations

import pytest

from autograder.grading.plan import TIMESTAMP_BYTES, _timestamp_problem


@pytest.mark.parametrize("content", [None, b"", b"  \n", b"2015-02-02 15:58:23.948203 America/Los_Angeles"])
def test_a_time_nbgrader_reads_or_none_at_all_passes(content):
    assert _timestamp_problem(content) is None


@pytest.mark.parametrize(("content", "why"), [
    (b"But I want to be a timestamp string :(", "is not a time nbgrader can read"),
    (b"2015-02-02 \xff", "is not a time nbgrader can read"),
    (b"9" * 400, "is not a time nbgrader can read"),
    (b"2015-02-02 " * TIMESTAMP_BYTES, "more than a time needs"),
])
def test_what_nbgrader_would_fail_on_is_named_before_anything_runs(content, why):
    assert why in _timestamp_problem(content)
