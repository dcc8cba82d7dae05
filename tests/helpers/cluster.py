"""A Dask cluster on this machine that shares no disk with the TA: a scheduler and
single-threaded workers, each its own process, run as another user (``nobody``), who
cannot read the TA's course folder (0700) nor anything under a folder only the TA can
enter. The one exception is made in a mount namespace of the cluster's own: the Python
installation the course's environment is built on, when it lives under such a folder
(``/root/.pyenv``), is bound read-only at its own path, as a cluster node has its own copy
of the same environment."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OTHER_USER = 65534  # nobody


def _private_ancestor(path: Path) -> Path | None:
    """The topmost folder above ``path`` that other users cannot enter, or None."""
    for parent in reversed(path.parents):
        if not parent.stat().st_mode & 0o001:
            return parent
    return None


def as_other_user(argv: list[str]) -> list[str]:
    """``argv`` as ``OTHER_USER``, with the Python installation in reach (see the module)."""
    wrap = ["bwrap", "--dev-bind", "/", "/", "--die-with-parent"]
    base = Path(sys.base_prefix).resolve()
    private = _private_ancestor(base)
    if private is not None:
        wrap += ["--perms", "0755", "--tmpfs", str(private)]
        for folder in reversed(base.parents):  # made as other users can enter them (bwrap's own are 0700)
            if folder.is_relative_to(private) and folder != private:
                wrap += ["--perms", "0755", "--dir", str(folder)]
        wrap += ["--ro-bind", str(base), str(base)]
    return [*wrap, "--", "setpriv", f"--reuid={OTHER_USER}", f"--regid={OTHER_USER}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", *argv]


class Cluster:
    """A scheduler and ``workers`` workers (``--nthreads 1``, no nanny: a killed worker stays
    dead), started as another user; ``kill(index)`` takes one down."""

    def __init__(self, workers: int, scheduler_environment: dict[str, str] | None = None):
        self.home = Path(tempfile.mkdtemp(prefix="cluster-home-"))
        os.chown(self.home, OTHER_USER, OTHER_USER)
        os.chmod(self.home, 0o700)
        dask = str(Path(sys.executable).with_name("dask"))
        environment = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8",
                       "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
                       **(scheduler_environment or {})}
        self.scheduler_file = self.home / "scheduler.json"
        self.processes = [self._start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                       "--scheduler-file", str(self.scheduler_file)], environment, "scheduler")]
        self.address = self._address()
        self.workers = [self._start([dask, "worker", self.address, "--nthreads", "1", "--no-nanny",
                                     "--no-dashboard", "--local-directory", str(self.home / f"worker-{index}")],
                                    environment, f"worker-{index}") for index in range(workers)]
        self.processes += self.workers

    def _start(self, argv: list[str], environment: dict[str, str], name: str) -> subprocess.Popen:
        with open(self.home / f"{name}.log", "wb") as log:  # the process keeps its own copy
            return subprocess.Popen(as_other_user(argv), env=environment, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def _address(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.scheduler_file.is_file():
                try:
                    return json.loads(self.scheduler_file.read_text())["address"]
                except (ValueError, KeyError):
                    pass
            time.sleep(0.2)
        raise RuntimeError(f"the scheduler did not start: {self.log('scheduler')}")

    def log(self, name: str) -> str:
        path = self.home / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.is_file() else ""

    def kill(self, index: int) -> None:
        os.killpg(self.workers[index].pid, signal.SIGKILL)
        self.workers[index].wait()

    def close(self) -> None:
        """Every process of the cluster ends. Each group is killed whether or not its bwrap
        is still there: bwrap dies at once on SIGTERM, and its --die-with-parent does not
        reach the dask process, whose parent-death signal the kernel cleared when setpriv
        changed its user; a worker shutting down gracefully towards a scheduler already gone
        was found alive after a run."""
        for process in reversed(self.processes):
            _signal_group(process, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process, signal.SIGKILL)
            process.wait()
        shutil.rmtree(self.home, ignore_errors=True)


def _signal_group(process: subprocess.Popen, number: int) -> None:
    """Signal the process group a cluster process leads (its session: start_new_session),
    whatever of it is left."""
    try:
        os.killpg(process.pid, number)
    except ProcessLookupError:
        pass
