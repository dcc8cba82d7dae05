"""A job's verdict comes from what the grader observed: a kernel that never became ready
is the grading environment's failure (a grader error), never the notebook's."""

from __future__ import annotations

import pytest

from autograder.grading.jobs import GradingJob, JobSettings, _verdict
from autograder.status import Status

NEVER_READY = RuntimeError("Kernel died before replying to kernel_info\nPlease see the log for more")


@pytest.fixture
def job() -> GradingJob:
    return GradingJob("eve", "ps1", "digest", JobSettings(60.0), {"p1.ipynb": b"{}", "p2.ipynb": b"{}"})


@pytest.mark.parametrize(("events", "failure", "status"), [
    ([{"kernel_starting": True}], NEVER_READY, Status.GRADER_ERROR),
    # the second notebook's kernel never became ready
    ([{"kernel_starting": True}, {"kernel_ready": True}, {"kernel_starting": True}], NEVER_READY,
     Status.GRADER_ERROR),
    ([{"kernel_starting": True}, {"kernel_ready": True}, {"kernel_died": True}], NEVER_READY, Status.KERNEL_DIED),
    ([{"kernel_starting": True}, {"kernel_ready": True}], RuntimeError("a notebook's own failure"), Status.FAILED),
    # nbgrader failed before any kernel was asked for: the submission, not the grader
    ([], RuntimeError("invalid notebook"), Status.FAILED),
    ([{"kernel_starting": True}, {"tampered": "the guard was replaced"}], NEVER_READY, Status.TAMPERED),
])
def test_only_a_kernel_that_never_became_ready_is_a_grader_error(job, events, failure, status):
    verdict, detail = _verdict(job, events, failure, stopped=False, graded=False)
    assert verdict is status
    if status is Status.GRADER_ERROR:
        assert detail == "a grading kernel never became ready (Kernel died before replying to kernel_info)"
