"""The ``dask`` scheduler: grading jobs on a Dask distributed cluster (``tcp://`` or
``tls://`` scheduler address), or on a ``LocalCluster`` of single-threaded worker
processes started here (``dask-local:N``).

Jobs are values (``jobs``): each bundle is a worker plug-in (``BundleOnWorkers``), so it
reaches every worker once, a restarted one too, and each job is a task that calls
``worker.grade`` there. The cluster is held to what the local pool
guarantees:

- **one job per worker process**: a worker with more than one thread is refused (start
  workers with ``--nthreads 1``); each is prepared by ``GradingWorker``, a worker plug-in,
  as a local worker is (its folders, its kernels' zygote);
- **no job graded twice**: tasks never retry, and the scheduler must let a task fail on the
  first worker that dies under it (``distributed.scheduler.allowed-failures: 0``): a
  notebook that takes its worker down is never sent on to take others with it. The jobs a
  lost worker had not finished are grader errors, named, and graded by the next run (the
  instructor's own jobs, the canary and the second witness's references, are sent to
  another worker instead: no student code ran in them);
- **every worker proves its environment** before any job runs: bubblewrap sandboxes
  there, and its Python, torch, nbgrader and grading code are the TA's; a worker that
  cannot says why and the run stops, as a broken kernel stops it locally;
- **the jobs carry hidden tests**: a plain ``tcp://`` address off this machine is refused
  unless ``GradingSettings.insecure`` (``--insecure``) says so; ``tls://`` uses the
  certificate files in ``GradingSettings.tls_*``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import shutil
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import dask
from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker
from distributed.security import Security

import autograder
from autograder.grading import worker as grading_worker
from autograder.grading.dask_scheduler import LOCAL_CLUSTER
from autograder.grading.jobs import GradingJob, JobResult, run_job
from autograder.grading.settings import GradingSettings
from autograder.grading.status import Status
from autograder.grading.report_page import KERNEL_BOUNDS
from autograder.sandbox import bwrap, cgroups, fork_server

OVERRUN_TOPIC = "autograder-overrun"
WORKER_TOPIC = "autograder-worker"  # each worker's own answer to what bounds its kernels
# A job of the instructor's (the canary, a reference) whose worker was lost goes to another
# worker this many times: no student code can have taken the worker down.
TRUSTED_TRIES = 2
EVENT_SECONDS = 3.0  # how long a worker that stops itself waits for its last event to reach the scheduler
PLUGIN_NAME = "autograder-grading-worker"
# The distribution whose pins a worker's environment must share with the TA's.
DISTRIBUTION = "pytorch-inplace-course"


def environment() -> dict[str, str]:
    """What a worker must have as the TA has it: Python's minor version, each package the
    course pins for grading (its own and the cluster's, not the test tools'), and a digest
    of the grading code itself."""
    code = hashlib.sha256()
    package = Path(autograder.__file__).parent
    for path in sorted(package.rglob("*.py")):
        code.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    found = {"python": f"{sys.version_info[0]}.{sys.version_info[1]}", "autograder code": code.hexdigest()[:16]}
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return found | {DISTRIBUTION: "not installed"}
    for requirement in requirements:
        pin, _, marker = requirement.partition(";")
        if "extra" in marker and "cluster" not in marker:
            continue
        name = re.split(r"[\[=<>~! ]", pin.strip(), maxsplit=1)[0]
        found[name] = _version(name)
    return found


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


class GradingWorker(WorkerPlugin):
    """Makes a Dask worker a grading worker (``worker.prepare_worker``), or refuses it, with
    the reason, when it runs more than one task at a time, cannot sandbox, or has another
    environment than ``expected``."""

    name = PLUGIN_NAME

    def __init__(self, expected: dict[str, str], sandbox: bool, log_folder: str | None):
        self.expected, self.sandbox, self.log_folder = expected, sandbox, log_folder
        self.root: Path | None = None

    def setup(self, worker) -> None:
        if worker.state.nthreads != 1:
            raise RuntimeError(f"it runs {worker.state.nthreads} tasks at once; a grading worker runs one job at a "
                               "time (start it with --nthreads 1)")
        differs = [f"{name} {found} (the TA's: {self.expected[name]})"
                   for name, found in environment().items() if found != self.expected.get(name)]
        if differs:
            raise RuntimeError(f"its environment differs: {', '.join(differs)}")
        if self.sandbox and (reason := bwrap.unavailable_reason()):
            raise RuntimeError(f"it cannot sandbox kernels: {reason}")
        self.root = grading_worker.new_root()
        if self.log_folder is not None:  # a worker of this machine's: its output goes where the local pool's goes
            log = os.open(Path(self.log_folder) / f"worker-{os.getpid()}.log",
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
        grading_worker.prepare_worker(self.root, fork_server.server if self.sandbox else None)
        grading_worker.named(worker.address)
        worker.log_event(WORKER_TOPIC, {"address": worker.address, "kernel bounds": cgroups.support().describe()})

    def teardown(self, worker) -> None:
        fork_server.stop()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


class BundleOnWorkers(WorkerPlugin):
    """One bundle, unpacked on every worker as it joins the cluster (a worker that
    restarts too): the scheduler keeps the plug-in, so the bundle reaches each worker
    process once and outlives any of them."""

    def __init__(self, digest: str, content: bytes):
        self.digest, self.content = digest, content
        self.name = f"autograder-bundle-{digest}"

    def setup(self, worker) -> None:
        grading_worker.receive_bundle(self.digest, self.content)


def grade_task(job: GradingJob, grace: float, runner: Callable = run_job) -> JobResult:
    """One job, on a worker (the task Dask runs). A job stopped at its deadline ends the
    worker, and its task with it: the worker logs the stop as an event of the scheduler's
    first (``OVERRUN_TOPIC``), for the client to tell a stopped job from a lost worker."""
    dask_worker = get_worker()
    key = dask_worker.get_current_task()

    def report(result: JobResult) -> None:
        dask_worker.log_event(OVERRUN_TOPIC, {"key": str(key), "detail": result.detail, "seconds": result.seconds})
        time.sleep(EVENT_SECONDS)

    return grading_worker.grade(job, None, runner, grace, on_overrun=report)


class DaskPool:
    """A client of the cluster the settings name (or of a local one it starts), with every
    worker prepared and checked; ``run`` as the local pool's."""

    def __init__(self, settings: GradingSettings, log_folder: Path, sandbox: bool,
                 grace: float = grading_worker.AFTER_KERNEL_SECONDS, runner: Callable = run_job):
        log_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.log_folder, self.grace, self.runner = log_folder, grace, runner
        self.cluster: LocalCluster | None = None
        address = settings.scheduler
        refused = address_problem(address, settings.insecure)
        if refused:
            raise SystemExit(f"cannot grade on {address}: {refused}")
        with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                              "distributed.scheduler.worker-saturation": 1.0}):
            if address.startswith(LOCAL_CLUSTER):
                self.cluster = LocalCluster(n_workers=_count(address), threads_per_worker=1, processes=True,
                                            dashboard_address=None, host="127.0.0.1")
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, security=_security(settings), timeout="30s")
        try:
            self._check_scheduler()
            self._prepare_workers(sandbox)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> DaskPool:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _check_scheduler(self) -> None:
        allowed = self.client.run_on_scheduler(_allowed_failures)
        if allowed != 0:
            raise SystemExit(f"the Dask scheduler lets a task fail {allowed} time(s) before it stops resending it: "
                             "a notebook that kills its worker would be sent on to the next. Start the scheduler "
                             "with DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0")

    def _prepare_workers(self, sandbox: bool) -> None:
        self.client.wait_for_workers(1, timeout=120)
        log_folder = str(self.log_folder) if self.cluster is not None else None
        try:
            self.client.register_plugin(GradingWorker(environment(), sandbox, log_folder), name=PLUGIN_NAME)
        except Exception as refused:  # noqa: BLE001 (a worker's set-up raised: it says why)
            raise SystemExit(f"a grading worker refused work, so nothing was graded: {refused}") from None

    def describe(self) -> dict[str, str]:
        """For the report: the cluster, and what bounds the kernels on its workers (each
        worker's answer; they may differ)."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        answers: dict[str, list[str]] = {}
        for _, event in self.client.get_events(WORKER_TOPIC):
            answers.setdefault(event["kernel bounds"], []).append(event["address"])
        where = "a LocalCluster here" if self.cluster is not None else self.client.scheduler.address
        bounds = "; ".join(f"{answer} (on {len(addresses)} worker(s))" for answer, addresses in answers.items())
        return {"workers": f"Dask, {where}: {len(workers)} workers", KERNEL_BOUNDS: bounds or "not reported"}

    def run(self, jobs: list[GradingJob], bundles: Callable[[str], bytes]) -> Iterator[tuple[GradingJob, JobResult]]:
        """Yield each job with its result as soon as it is done, in completion order."""
        tries: dict[int, int] = {}  # a trusted job's submissions after a lost worker
        for digest in sorted({job.bundle for job in jobs}):
            self.client.register_plugin(BundleOnWorkers(digest, bundles(digest)))
        futures = {self._submit(job): job for job in jobs}
        queue = as_completed(futures)
        for future in queue:
            job = futures.pop(future)
            try:
                result = future.result()
            except Exception as failure:  # noqa: BLE001 (a lost worker or a crash: this job's result says which)
                result = self._stopped(job, future.key) or lost(job, failure)
                if job.trusted and result.status is Status.GRADER_ERROR and tries.get(id(job), 0) < TRUSTED_TRIES:
                    tries[id(job)] = tries.get(id(job), 0) + 1  # the instructor's code: safe on another worker
                    again = self._submit(job)
                    futures[again] = job
                    queue.add(again)
                    continue
            yield job, result

    def _submit(self, job: GradingJob):
        """A task for ``job``, named by its kind (a student's or the instructor's), never retried by Dask."""
        kind = "instructor" if job.trusted else "student"
        return self.client.submit(grade_task, job, self.grace, self.runner, pure=False, retries=0,
                                  key=f"{kind}-{uuid.uuid4().hex}")

    def _stopped(self, job: GradingJob, key: str) -> JobResult | None:
        """The job's result if its worker stopped it at its deadline (and ended), or None."""
        for _, event in self.client.get_events(OVERRUN_TOPIC):
            if event.get("key") == str(key):
                return JobResult(job.student, job.assignment, Status.STOPPED, event["detail"], event["seconds"])
        return None

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def lost(job: GradingJob, failure: BaseException) -> JobResult:
    """A job whose worker was lost under it (or whose task failed outside the grader): a
    grader error, never a score, graded again by the next run."""
    return JobResult(job.student, job.assignment, Status.GRADER_ERROR,
                     f"its Dask worker was lost under it; the next run grades it ({type(failure).__name__}: "
                     f"{failure})"[:300], 0.0)


def address_problem(address: str, insecure: bool) -> str | None:
    """Why the jobs (which carry hidden tests) may not travel to ``address``, or None."""
    if address.startswith(LOCAL_CLUSTER):
        return None if address[len(LOCAL_CLUSTER):].isdigit() and _count(address) > 0 else \
            f"{LOCAL_CLUSTER}N takes a number of workers"
    parts = urlsplit(address)
    if parts.scheme == "tls" or insecure:
        return None
    if not parts.hostname:
        return "no host in the address"
    if not _loopback(parts.hostname):
        return ("plain tcp:// sends the hidden tests unencrypted across the network: use tls:// with "
                "certificates (GradingSettings.tls_ca_file, tls_cert_file, tls_key_file), or --insecure on a "
                "network you trust")
    return None


def _loopback(host: str) -> bool:
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return all(ipaddress.ip_address(found.split("%")[0]).is_loopback for found in addresses)


def _security(settings: GradingSettings) -> Security | None:
    if not settings.scheduler.startswith("tls://"):
        return None
    return Security(tls_ca_file=settings.tls_ca_file or None, tls_client_cert=settings.tls_cert_file or None,
                    tls_client_key=settings.tls_key_file or None, require_encryption=True)


def _count(address: str) -> int:
    return int(address[len(LOCAL_CLUSTER):])


def _allowed_failures(dask_scheduler) -> int:
    return dask_scheduler.allowed_failures
