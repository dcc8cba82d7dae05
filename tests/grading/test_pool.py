"""The worker pool on its own: each way a job can end gives one result, a broken worker is
replaced, and nothing a job left in its temporary folder outlives it."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

import cloudpickle
import pytest

from autograder.grading.bundle import pack
from autograder.grading.jobs import GradingJob, JobResult, JobSettings
from autograder.grading.pool import Pool
from autograder.settings import GradingSettings
from autograder.status import Status
from tests.helpers.leftovers import grading_folders

BUNDLE = pack({"nbgrader_config.json": (b"{}", 0o644)})
DIGEST = hashlib.sha256(BUNDLE).hexdigest()

NOTEBOOK_SECONDS = 1.0
GRACE_SECONDS = 9.0  # the deadline counts a fresh worker's imports too: seconds on a busy machine

pytestmark = pytest.mark.slow


def leave_a_folder_then(job: GradingJob, template: Path) -> JobResult:
    """A job that makes a private folder as a kernel does, then ends the way its name says."""
    assert (template / "nbgrader_config.json").read_bytes() == b"{}"  # its bundle, unpacked
    Path(tempfile.mkdtemp(prefix="grading-kernel-"), "kernel.json").write_text("{}")
    if job.student == "hangs":
        time.sleep(3600)
    if job.student == "dies":
        os._exit(1)
    if job.student == "crashes":
        raise ValueError("a bug in the grader")
    return JobResult(job.student, job.assignment, Status.GRADED, "", 0.0)


def _job(student: str) -> GradingJob:
    return GradingJob(student, "a01", DIGEST, JobSettings(notebook_timeout=NOTEBOOK_SECONDS), {"a01.ipynb": b"{}"})


def local_pool(logs: Path) -> Pool:
    return Pool(2, logs, runner=leave_a_folder_then, grace=GRACE_SECONDS)


def dask_local_pool(logs: Path):
    """Two single-threaded Dask workers; they import this module by value (it is not on
    their path)."""
    from autograder.grading.dask_pool import DaskPool

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    settings = GradingSettings(scheduler="dask-local:2")
    return DaskPool(settings, logs, sandbox=False, grace=GRACE_SECONDS, runner=leave_a_folder_then)


@pytest.mark.parametrize("make_pool", [local_pool, dask_local_pool], ids=["local", "dask-local"])
def test_every_job_ends_once_and_leaves_nothing_behind(tmp_path, make_pool):
    """Fine, hung, dead and crashing jobs: each ends once, with its own verdict; a worker
    lost under a job is a grader error (the next run grades it), never a score."""
    before = grading_folders()
    students = ["fine", "hangs", "dies", "crashes", "fine after"]
    started = time.monotonic()
    with make_pool(tmp_path / "logs") as pool:
        results = {result.student: result
                   for _, result in pool.run([_job(student) for student in students], {DIGEST: BUNDLE}.get)}
    assert set(results) == set(students)
    assert results["fine"].status is results["fine after"].status is Status.GRADED
    assert results["hangs"].status is Status.STOPPED
    assert "longer than 10 s" in results["hangs"].detail
    assert results["dies"].status is Status.GRADER_ERROR and "the next run grades it" in results["dies"].detail
    assert results["crashes"].status is Status.FAILED and "ValueError: a bug" in results["crashes"].detail
    assert time.monotonic() - started < 60
    assert grading_folders() - before == set()


def _upkeep(dask_worker) -> tuple[list[str], dict]:
    """What of Dask's upkeep runs on a worker: its profiler's callbacks, and the settings."""
    import dask.config

    from autograder.grading.dask_pool import PROFILER, QUIET_UPKEEP

    running = [name for name in PROFILER if name in dask_worker.periodic_callbacks
               and dask_worker.periodic_callbacks[name].is_running()]
    return running, {key: dask.config.get(key) for key in QUIET_UPKEEP}


def test_a_local_clusters_workers_keep_dasks_upkeep_quiet(tmp_path):
    from autograder.grading.dask_pool import QUIET_UPKEEP

    with dask_local_pool(tmp_path / "logs") as pool:
        answers = pool.client.run(_upkeep)
    assert len(answers) == 2 and all(answer == ([], QUIET_UPKEEP) for answer in answers.values())


def test_a_run_pauses_the_profiler_of_a_cluster_started_elsewhere_and_gives_it_back(tmp_path):
    """Its workers keep Dask's defaults, profiler on: paused while the run holds them."""
    import dask
    from distributed import Client, LocalCluster

    from autograder.grading.dask_pool import PROFILER, DaskPool

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", protocol="tcp",
                         dashboard_address=None) as cluster, Client(cluster) as elsewhere:
        assert [running for running, _ in elsewhere.run(_upkeep).values()] == [list(PROFILER)]
        with DaskPool(GradingSettings(scheduler=cluster.scheduler_address), tmp_path / "logs", sandbox=False):
            assert [running for running, _ in elsewhere.run(_upkeep).values()] == [[]]
        assert [running for running, _ in elsewhere.run(_upkeep).values()] == [list(PROFILER)]
