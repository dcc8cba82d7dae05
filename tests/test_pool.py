"""The worker pool on its own: each way a job can end gives one result, a broken worker is
replaced, and nothing a job left in its temporary folder outlives it."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from autograder.grading.jobs import GradingJob, JobResult, JobSettings
from autograder.grading.pool import Pool
from autograder.grading.status import Status

NOTEBOOK_SECONDS = 1.0
GRACE_SECONDS = 9.0  # the deadline counts a fresh worker's imports too: seconds on a busy machine

pytestmark = pytest.mark.slow


def leave_a_folder_then(job: GradingJob) -> JobResult:
    """A job that makes a private folder as a kernel does, then ends the way its name says."""
    Path(tempfile.mkdtemp(prefix="grading-kernel-"), "kernel.json").write_text("{}")
    if job.student == "hangs":
        time.sleep(3600)
    if job.student == "dies":
        os._exit(1)
    if job.student == "crashes":
        raise ValueError("a bug in the grader")
    return JobResult(job.student, job.assignment, Status.GRADED, "", 0.0)


def _job(student: str, scratch: Path) -> GradingJob:
    return GradingJob(student, "a01", scratch / student, JobSettings(notebook_timeout=NOTEBOOK_SECONDS), ("a01.ipynb",))


def _grading_folders() -> set[Path]:
    return {path for prefix in ("grading-kernel-", "grading-worker-")
            for path in Path(tempfile.gettempdir()).glob(f"{prefix}*")}


def test_every_job_ends_once_and_leaves_nothing_behind(tmp_path):
    before = _grading_folders()
    students = ["fine", "hangs", "dies", "crashes", "fine after"]
    started = time.monotonic()
    with Pool(2, tmp_path / "logs", runner=leave_a_folder_then, grace=GRACE_SECONDS) as pool:
        results = {result.student: result for _, result in pool.run([_job(student, tmp_path) for student in students])}
    assert set(results) == set(students)
    assert results["fine"].status is results["fine after"].status is Status.GRADED
    assert results["hangs"].status is Status.STOPPED
    assert "longer than 10 s" in results["hangs"].detail
    assert results["dies"].status is Status.FAILED and "worker died" in results["dies"].detail
    assert results["crashes"].status is Status.FAILED and "ValueError: a bug" in results["crashes"].detail
    assert time.monotonic() - started < 60
    assert _grading_folders() - before == set()
