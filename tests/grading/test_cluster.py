"""Grading on a Dask cluster that shares no disk with the TA (``cluster.Cluster``: a
scheduler and two single-threaded workers, each a process of its own, as another user who
cannot read the course folder), and over TLS: the same records and scores as the local
pool, and a worker killed in the middle of a run loses nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.cli import demo_course
from autograder.grading.pipeline import Options, grade_course
from autograder.grading.schedulers import open_scheduler
from autograder.settings import GradingSettings
from tests.helpers.cluster import Cluster
from tests.conftest import fast
from tests.helpers.assignments import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                 reason="starting workers as another user takes root and setpriv")]

# Graded, a notebook failed by the second witness (scored again from the bundle on the
# TA's side), a kernel that dies.
STUDENTS = ("all-right", "partial", "forgery-singledispatch", "kernel-dies")


def course_of(root: Path) -> Path:
    course = demo_course(REPO, root / "course")
    for folder in (course / "submitted").iterdir():
        if folder.name not in STUDENTS:
            shutil.rmtree(folder)
    course.chmod(0o700)  # the TA's alone
    return course


def outcome(run) -> dict[str, tuple]:
    return {record.key: (record.status.value, record.score, record.max_score, record.detail, len(record.flags))
            for record in run.records.all()}


@pytest.fixture(scope="module")
def local_outcome(tmp_path_factory) -> dict[str, tuple]:
    return outcome(grade_course(course_of(tmp_path_factory.mktemp("local")), Options(**fast())))


@pytest.fixture(scope="module")
def cluster():
    started = Cluster(workers=2)
    yield started
    started.close()


def test_a_cluster_without_the_course_grades_as_the_local_pool_and_a_killed_worker_loses_nothing(
        tmp_path, local_outcome, cluster):
    course = course_of(tmp_path)
    killed = threading.Thread(target=_kill_while_it_grades, args=(cluster, 1), daemon=True)
    killed.start()
    first = outcome(grade_course(course, Options(**fast(scheduler=cluster.address))))
    killed.join()
    lost = {key: found for key, found in first.items() if found != local_outcome[key]}
    assert lost, "the killed worker was grading nothing"
    for key, (status, _, _, detail, _) in lost.items():
        assert status == "grader error" and "its Dask worker was lost under it; the next run grades it" in detail, key
    again = grade_course(course, Options(**fast(scheduler=cluster.address)))
    assert sorted(again.graded_now) == sorted(lost)
    assert outcome(again) == local_outcome
    workers = {record.worker for record in again.records.all() if record.seconds}
    assert workers and all(worker.startswith("tcp://127.0.0.1:") for worker in workers)


def _kill_while_it_grades(cluster: Cluster, index: int) -> None:
    """Kill worker ``index`` while it runs a student's job, once a few have started."""
    from distributed import Client  # not at the top: 3 s of imports in every collection, make test-fast's too

    with Client(cluster.address, timeout="30s") as client:
        client.wait_for_workers(len(cluster.workers), timeout=120)
        pids = client.run(os.getpid)
        address = next(found for found, pid in pids.items() if os.getpgid(pid) == cluster.workers[index].pid)
        seen: set[str] = set()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            processing = client.processing()
            seen.update(key for keys in processing.values() for key in keys if key.startswith("student-"))
            if len(seen) >= 4 and any(key.startswith("student-") for key in processing.get(address, ())):
                cluster.kill(index)
                return
            time.sleep(0.05)


def test_jobs_travel_over_tls_with_the_tas_certificates(tmp_path):
    from distributed import Client  # not at the top: 3 s of imports in every collection, make test-fast's too

    certificates = _certificates(tmp_path)
    files = ["--tls-ca-file", str(certificates / "ca.pem"), "--tls-cert", str(certificates / "node.pem"),
             "--tls-key", str(certificates / "node.key")]
    dask = str(Path(sys.executable).with_name("dask"))
    environment = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    scheduler_file = tmp_path / "scheduler.json"
    processes = [subprocess.Popen([dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(scheduler_file), *files],
                                  env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        while not scheduler_file.is_file():
            time.sleep(0.2)
        time.sleep(0.5)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tls://")
        processes.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard", *files],
                                          env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        course = demo_course(REPO, tmp_path / "course")
        for folder in (course / "submitted").iterdir():
            if folder.name != "all-right":
                shutil.rmtree(folder)
        settings = {"tls_ca_file": str(certificates / "ca.pem"), "tls_cert_file": str(certificates / "node.pem"),
                    "tls_key_file": str(certificates / "node.key")}
        run = grade_course(course, Options(assignments=("01-inplace-basics",), **fast(scheduler=address,
                                                                                     **settings)))
        (record,) = run.records.all()
        assert (record.status.value, record.score) == ("graded", 10.0)
        assert record.worker.startswith("tls://127.0.0.1:")
        with pytest.raises(OSError):  # the scheduler speaks TLS only: a client without certificates is turned away
            Client(address.replace("tls://", "tcp://"), timeout="5s")
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def _certificates(folder: Path) -> Path:
    """A certificate authority of the test's own, and one certificate for 127.0.0.1 it signed."""
    folder = folder / "certificates"
    folder.mkdir()

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=course test CA",
            "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "node.key",
            "-out", "node.csr")
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "san.cnf", "-out", "node.pem")
    return folder


def _scheduler(tmp_path: Path, host: str, allowed_failures: str) -> tuple[subprocess.Popen, str]:
    dask = str(Path(sys.executable).with_name("dask"))
    scheduler_file = tmp_path / "scheduler.json"
    process = subprocess.Popen([dask, "scheduler", "--host", host, "--port", "0", "--no-dashboard",
                                "--scheduler-file", str(scheduler_file)],
                               env={**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": allowed_failures},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not scheduler_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    return process, json.loads(scheduler_file.read_text())["address"]


@pytest.mark.parametrize(("host", "allowed_failures", "threads", "refusal"), [
    ("127.0.0.1", "3", 1, "the Dask scheduler lets a task fail 3 time"),
    ("0.0.0.0", "0", 1, "the Dask scheduler listens on tcp://0.0.0.0:"),
    ("127.0.0.1", "0", 2, "a grading worker refused work, so nothing was graded: it runs 2 tasks at once"),
], ids=["resends-failed-tasks", "listens-everywhere", "two-threads"])
def test_a_cluster_that_breaks_a_rule_is_refused_before_any_job(tmp_path, host, allowed_failures, threads, refusal):
    scheduler, advertised = _scheduler(tmp_path, host, allowed_failures)
    address = f"tcp://127.0.0.1:{advertised.rsplit(':', 1)[1]}"  # how the TA reaches it: through loopback
    dask = str(Path(sys.executable).with_name("dask"))
    worker = subprocess.Popen([dask, "worker", address, "--nthreads", str(threads), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        settings = GradingSettings(scheduler=address)
        with pytest.raises(SystemExit, match=refusal):
            open_scheduler(settings, 1, tmp_path / "logs", sandbox=False)
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(timeout=30)
