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
  instructor's own jobs, the trial and the second witness's references, are sent to
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
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import dask
from distributed import Client, LocalCluster, WorkerPlugin, get_worker, wait
from distributed.security import Security

import autograder
from autograder.grading import worker as grading_worker
from autograder.grading.jobs import GradingJob, JobResult, run_job
from autograder.settings import KERNEL_BOUNDS, LOCAL_CLUSTER, GradingSettings
from autograder.status import Status
from autograder.sandbox import bwrap, cgroups, fork_server

OVERRUN_TOPIC = "autograder-overrun"
WORKER_TOPIC = "autograder-worker"  # each worker's own answer to what bounds its kernels
# A job of the instructor's (the trial, a reference) whose worker was lost goes to another
# worker this many times: no student code can have taken the worker down.
TRUSTED_TRIES = 2
EVENT_SECONDS = 3.0  # how long a worker that stops itself waits for its last event to reach the scheduler
PLUGIN_NAME = "autograder-grading-worker"
BUNDLE_PLUGIN = "autograder-bundle"
# How long after a job's deadline the client gives up on a worker that neither answered nor stopped it.
SECOND_LINE = 10.0 + 3.0
# The distribution whose pins a worker's environment must share with the TA's.
DISTRIBUTION = "pytorch-inplace-course"
# Dask's own upkeep, made rare: its statistical profiler walks the stack of the thread that
# grades 100 times a second, and its event-loop, system and memory checks wake every 20 to
# 500 ms, on cores the kernels need (a fifth of a core per idle worker and its scheduler,
# measured; the grading runs 15% slower beside them). A LocalCluster gets these; a cluster
# started elsewhere gets them from its environment (docs/cluster.md, cluster/worker.Dockerfile),
# and each worker's profiler is paused by the run's plug-in in any case.
QUIET_UPKEEP = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s",
                "distributed.worker.memory.monitor-interval": "1s"}
PROFILER = ("profile", "profile-cycle")  # the worker's periodic callbacks that drive its profiler


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


class NotAGradingWorker(RuntimeError):
    """A task reached a worker this run did not prepare (it joined late and its set-up
    refused it, or it runs more than one task at a time)."""


class GradingWorker(WorkerPlugin):
    """Makes a Dask worker a grading worker for one run (``worker.prepare_worker``), or
    refuses it, with the reason, when it runs more than one task at a time, cannot
    sandbox, or has another environment than ``expected``. A worker that joins later is
    set up (or refused) as it joins; only a worker set up for this run takes its jobs
    (``grade_task``)."""

    def __init__(self, run: str, expected: dict[str, str], sandbox: bool, log_folder: str | None):
        self.name = f"{PLUGIN_NAME}-{run}"
        self.run, self.expected, self.sandbox, self.log_folder = run, expected, sandbox, log_folder
        self.root: Path | None = None
        self.paused: list = []  # the worker's profiler's callbacks this plug-in stopped

    def setup(self, worker) -> None:
        if worker.state.nthreads != 1:
            raise NotAGradingWorker(f"it runs {worker.state.nthreads} tasks at once; a grading worker runs one job "
                                    "at a time (start it with --nthreads 1)")
        differs = [f"{name} {found} (the TA's: {self.expected.get(name, 'none')})"
                   for name, found in environment().items() if found != self.expected.get(name)]
        if differs:
            raise NotAGradingWorker(f"its environment differs: {', '.join(differs)}")
        if self.sandbox and (reason := bwrap.unavailable_reason()):
            raise NotAGradingWorker(f"it cannot sandbox kernels: {reason}")
        self.root = grading_worker.new_root()
        if self.log_folder is not None:  # a worker of this machine's: its output goes where the local pool's goes
            log = os.open(Path(self.log_folder) / f"worker-{os.getpid()}.log",
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
        grading_worker.prepare_worker(self.root)
        self.paused = [callback for name in PROFILER
                       if (callback := worker.periodic_callbacks.get(name)) and callback.is_running()]
        for callback in self.paused:
            callback.stop()
        if self.sandbox:  # the zygote warms up while the run plans (its own thread starts it: fork_server)
            threading.Thread(target=grading_worker.warm_up, args=(fork_server.server,), daemon=True).start()
        grading_worker.named(worker.address)
        grading_worker.serving(self.run)
        worker.log_event(WORKER_TOPIC, {"address": worker.address, "kernel bounds": cgroups.support().describe()})

    def teardown(self, worker) -> None:
        for callback in self.paused:
            callback.start()
        grading_worker.serving(None)
        fork_server.stop()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


class BundleOnWorkers(WorkerPlugin):
    """One bundle of one run, unpacked on every worker as it joins the cluster (a worker
    that restarts too): the scheduler keeps the plug-in, so the bundle reaches each worker
    process once and outlives any of them; the run unregisters it as it ends."""

    def __init__(self, run: str, digest: str, content: bytes):
        self.run, self.digest, self.content = run, digest, content
        self.name = f"{BUNDLE_PLUGIN}-{run}-{digest[:16]}"

    def setup(self, worker) -> None:
        if grading_worker.serves() == self.run:  # a refused worker gets no hidden tests
            grading_worker.receive_bundle(self.digest, self.content)


def grade_task(run: str, job: GradingJob, grace: float, runner: Callable = run_job) -> JobResult:
    """One job, on a worker (the task Dask runs), if this run set the worker up. A job
    stopped at its deadline ends the worker, and its task with it: the worker logs the
    stop as an event of the scheduler's first (``OVERRUN_TOPIC``), for the client to tell a
    stopped job from a lost worker."""
    dask_worker = get_worker()
    if grading_worker.serves() != run or dask_worker.state.nthreads != 1:
        raise NotAGradingWorker(f"{dask_worker.address} was not set up as a grading worker for this run (its "
                                "set-up refused it: see the scheduler's log)")
    key = dask_worker.get_current_task()

    def report(result: JobResult) -> None:
        dask_worker.log_event(OVERRUN_TOPIC, {"key": str(key), "detail": result.detail, "seconds": result.seconds})
        time.sleep(EVENT_SECONDS)

    return grading_worker.grade(job, None, runner, grace, on_overrun=report)


class DaskPool:
    """A client of the cluster the settings name (or of a local one it starts, over TLS
    with credentials made for it), with every worker prepared and checked; ``run`` as the
    local pool's, a job at a time per worker."""

    def __init__(self, settings: GradingSettings, log_folder: Path, sandbox: bool,
                 grace: float = grading_worker.AFTER_KERNEL_SECONDS, runner: Callable = run_job):
        log_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.log_folder, self.grace, self.runner = log_folder, grace, runner
        self.run_id = uuid.uuid4().hex[:12]
        self.cluster: LocalCluster | None = None
        self.plugins: list[str] = []
        address, self.insecure = settings.scheduler, settings.insecure
        refused = address_problem(address, settings.insecure)
        if refused:
            raise SystemExit(f"cannot grade on {address}: {refused}")
        with dask.config.set({"distributed.scheduler.allowed-failures": 0, **QUIET_UPKEEP,
                              # A LocalCluster's workers are forks of the local pool's fork server, which
                              # imported the grading code once (the run starts it: pool.start_fork_server).
                              "distributed.worker.multiprocessing-method": "forkserver"}):
            if address.startswith(LOCAL_CLUSTER):
                # TLS with credentials made now: no other user of this machine can reach its scheduler.
                self.cluster = LocalCluster(n_workers=_count(address), threads_per_worker=1, processes=True,
                                            dashboard_address=None, host="127.0.0.1", protocol="tls",
                                            security=Security.temporary())
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
        allowed, plugins, listening = self.client.run_on_scheduler(_scheduler_facts)
        if allowed != 0:
            raise SystemExit(f"the Dask scheduler lets a task fail {allowed} time(s) before it stops resending it: "
                             "a notebook that kills its worker would be sent on to the next. Start the scheduler "
                             "with DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0")
        if any(name.startswith(PLUGIN_NAME) for name in plugins):
            raise SystemExit("another grading run is using this Dask cluster: wait for it to end (its workers are "
                             "set up for it)")
        exposed = [found for found in listening if not self._may_receive_jobs(found)]
        if exposed:
            raise SystemExit(f"the Dask scheduler listens on {', '.join(exposed)}: plain tcp:// off this machine "
                             "would carry the hidden tests unencrypted (start it with --host 127.0.0.1, use tls://, "
                             "or pass --insecure)")

    def _may_receive_jobs(self, address: str) -> bool:
        """Whether jobs may travel to (or through) ``address`` unencrypted or not."""
        parts = urlsplit(address)
        return parts.scheme in ("tls", "inproc") or self.insecure or bool(parts.hostname and _loopback(parts.hostname))

    def _prepare_workers(self, sandbox: bool) -> None:
        self.client.wait_for_workers(1, timeout=120)
        log_folder = str(self.log_folder) if self.cluster is not None else None
        exposed = [address for address in self.client.scheduler_info(n_workers=-1)["workers"]
                   if not self._may_receive_jobs(address)]
        if exposed:
            raise SystemExit(f"Dask workers reachable only over plain tcp:// off this machine: {', '.join(exposed)} "
                             "(use tls://, or pass --insecure)")
        plugin = GradingWorker(self.run_id, environment(), sandbox, log_folder)
        try:
            self.client.register_plugin(plugin)
        except Exception as refused:  # noqa: BLE001 (a worker's set-up raised: it says why)
            raise SystemExit(f"a grading worker refused work, so nothing was graded: {refused}") from None
        finally:
            self.plugins.append(plugin.name)

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
        """Yield each job with its result as soon as it is done, in completion order. No
        more jobs are in the cluster than it has workers (one each: a worker that dies
        takes only its own job with it), and each has a deadline here too, behind its
        worker's own (a worker that never answers, a cluster left without workers)."""
        for digest in sorted({job.bundle for job in jobs}):
            plugin = BundleOnWorkers(self.run_id, digest, bundles(digest))
            self.plugins.append(plugin.name)
            self.client.register_plugin(plugin)
        waiting, running, tries = list(reversed(jobs)), {}, {}
        while waiting or running:
            room = max(1, len(self.client.scheduler_info(n_workers=-1)["workers"])) - len(running)
            for _ in range(min(room, len(waiting))):
                job = waiting.pop()
                running[self._submit(job)] = (job, time.monotonic() + job.time_limit + self.grace + SECOND_LINE)
            soonest = min(deadline for _, deadline in running.values())
            done, _ = wait(list(running), timeout=max(0.1, soonest - time.monotonic()), return_when="FIRST_COMPLETED")
            for future in [*done, *(f for f, (_, deadline) in running.items() if deadline < time.monotonic())]:
                if future not in running:
                    continue
                job, _ = running.pop(future)
                result = self._result(job, future)
                if job.trusted and result.status is Status.GRADER_ERROR and tries.get(id(job), 0) < TRUSTED_TRIES:
                    tries[id(job)] = tries.get(id(job), 0) + 1  # the instructor's code: safe on another worker
                    waiting.append(job)
                    continue
                yield job, result

    def _submit(self, job: GradingJob):
        """A task for ``job``, named by its kind (a student's or the instructor's), never retried by Dask."""
        kind = "instructor" if job.trusted else "student"
        return self.client.submit(grade_task, self.run_id, job, self.grace, self.runner, pure=False, retries=0,
                                  key=f"{kind}-{uuid.uuid4().hex}")

    def _result(self, job: GradingJob, future) -> JobResult:
        if future.status == "finished":
            return future.result()
        if future.status == "pending":  # past its deadline here: the worker neither answered nor stopped it
            future.cancel()
            return JobResult(job.student, job.assignment, Status.GRADER_ERROR,
                             f"no answer from its Dask worker within {job.time_limit + self.grace + SECOND_LINE:g} s; "
                             "the next run grades it", 0.0)
        try:
            return future.result()
        except Exception as failure:  # noqa: BLE001 (a lost worker or a crash: this job's result says which)
            return self._stopped(job, future.key) or lost(job, failure)

    def _stopped(self, job: GradingJob, key: str) -> JobResult | None:
        """The job's result if its worker stopped it at its deadline (and ended), or None."""
        for _, event in self.client.get_events(OVERRUN_TOPIC):
            if event.get("key") == str(key):
                return JobResult(job.student, job.assignment, Status.STOPPED, event["detail"], event["seconds"])
        return None

    def close(self) -> None:
        """Take this run's plug-ins off the cluster (its workers' folders and bundles go
        with them), then disconnect."""
        for name in reversed(self.plugins):
            try:
                self.client.unregister_worker_plugin(name)
            except Exception:  # noqa: BLE001 (a cluster already gone has nothing left to take off)
                pass
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
            grading_worker.purge_dead_roots()  # of its workers that died (they were this machine's)


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


def _scheduler_facts(dask_scheduler) -> tuple[int, list[str], list[str]]:
    """What the client checks of the scheduler: how often a task may fail, the worker
    plug-ins it holds, the addresses it listens on."""
    return (dask_scheduler.allowed_failures, list(dask_scheduler.worker_plugins),
            [listener.listen_address for listener in dask_scheduler.listeners])
