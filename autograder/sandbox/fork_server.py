"""The grading process's end of its zygote: start it sandboxed, ask it for kernels, hear
when they end.

Each process that grades (a pool worker, or the TA's own process when it grades serially)
has one zygote (``autograder.sandbox.zygote``), started the first time it needs a sandboxed
kernel and started again whenever the last one is gone: killed with a kernel that ran past
its limit (the watchdog kills every child of the worker), or dead for any other reason. A
zygote never runs student code, and no kernel can reach it (other namespaces, another
user), so there is never a reason to distrust one that still runs.

The kernels' folders (connection file, sockets, the assignment the kernel sees) are made
in ``kernels_folder()``, which the zygote's sandbox binds: a pool worker puts it inside
its temporary folder (``use_kernels_folder``), so that a killed worker leaves none behind.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.sandbox import bwrap, cgroups

# How long a zygote may take to import what kernels need, and to answer a request.
START_SECONDS = 120.0
ANSWER_SECONDS = 30.0
# The exit status of a kernel whose zygote is gone (it went with it).
GONE = -9
# What a zygote and its kernels may write to the worker's log, in all: their standard
# error is a pipe this process reads (a kernel holds no descriptor of the log itself).
LOG_BYTES = 256 * 2**10

# The one thread that starts zygotes: it lasts as long as this process.
_STARTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zygote-starter")
_kernels_folder: Path | None = None
_server: ForkServer | None = None
_lock = threading.Lock()


def use_kernels_folder(folder: Path) -> None:
    """Make the kernels' folders in ``folder`` (which must exist) from now on."""
    global _kernels_folder
    stop()
    _kernels_folder = folder


def kernels_folder() -> Path:
    """Where each kernel's folder is made: set by ``use_kernels_folder``, or else a temporary
    folder of this process, removed when it exits."""
    global _kernels_folder
    if _kernels_folder is None:
        _kernels_folder = Path(tempfile.mkdtemp(prefix="grading-kernels-"))
        atexit.register(shutil.rmtree, _kernels_folder, ignore_errors=True)
    return _kernels_folder


def server() -> ForkServer:
    """This process's zygote, started now if there is none or the last one is gone."""
    global _server
    with _lock:
        if _server is None or not _server.alive():
            _server = ForkServer(kernels_folder())
        return _server


def stop() -> None:
    """End this process's zygote, if it has one, and every kernel it forked."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None


class ForkServer:
    """One zygote in its sandbox, and what it said about each kernel."""

    def __init__(self, kernels: Path):
        self.kernels = kernels
        inner = [sys.executable, "-m", "autograder.sandbox.zygote"]
        # The environment a kernel has: torch reads its thread count as the zygote imports it.
        command = bwrap.zygote_command(inner, kernels, kernel_environment(dict(os.environ)))
        # Its standard error (and its kernels') is a pipe whose text, capped and with control
        # characters shown, goes to this process's: a pool worker's log. bubblewrap ends it
        # when the thread that started it ends (--die-with-parent): ``_STARTER``'s lasts.
        self._process = _STARTER.submit(subprocess.Popen, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE).result()
        threading.Thread(target=_pass_on_capped, args=(self._process.stderr, sys.stderr), daemon=True).start()
        self._answers: dict[str, queue.Queue] = {}
        self._exits: dict[str, int] = {}
        self._ready: queue.Queue = queue.Queue()
        threading.Thread(target=self._listen, daemon=True).start()
        try:
            self._ready.get(timeout=START_SECONDS)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"the grading kernels' zygote did not start within {START_SECONDS:g} s") from None
        if not self.alive():
            raise RuntimeError("the grading kernels' zygote could not start (see the worker's log)")

    def alive(self) -> bool:
        return self._process.poll() is None

    def spawn(self, name: str, argv: list[str], environment: dict[str, str], step_down: int | None,
              group: cgroups.KernelGroup | None = None) -> ForkedKernel:
        """Fork the kernel whose folder is ``kernels / name``, in ``group`` from its start."""
        answers = self._answers.setdefault(name, queue.Queue())
        self._send(spawn=name, argv=argv, env=environment, step_down=step_down, hold=group is not None)
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            try:
                answer = answers.get(timeout=0.1)
                break
            except queue.Empty:
                if not self.alive():
                    raise RuntimeError("the grading kernels' zygote ended (see the worker's log)") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the grading kernels' zygote did not answer in {ANSWER_SECONDS:g} s") from None
        if "refused" in answer:
            raise RuntimeError(f"the grading kernels' zygote refused kernel {name}: {answer.get('why')}")
        if group is not None:
            try:
                group.add(self._host_pid(answer["pid"]))
            except (OSError, LookupError) as error:
                self.kill(name)
                raise RuntimeError(f"kernel {name} could not be put in its control group: {error}") from None
            self._send(start=name)
        return ForkedKernel(self, name)

    def _host_pid(self, pid: int) -> int:
        """The process id, as this process sees it, of the zygote's child ``pid`` (as the
        zygote sees it): the descendant of its sandbox whose ids end with it, one namespace down."""
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                ids = next(line.split()[1:] for line in status.read_text().splitlines() if line.startswith("NSpid:"))
            except (OSError, StopIteration):
                continue
            if len(ids) == 2 and int(ids[1]) == pid and self._descends(int(ids[0])):
                return int(ids[0])
        raise LookupError(f"no process {pid} in the zygote's sandbox")

    def _descends(self, pid: int) -> bool:
        while pid > 1:
            if pid == self._process.pid:
                return True
            pid = cgroups.parent_pid(pid)
        return False

    def exit_status(self, name: str) -> int | None:
        """The kernel's exit status once it ended, else None."""
        if name in self._exits:
            return self._exits[name]
        return None if self.alive() else GONE

    def kill(self, name: str) -> None:
        self._send(kill=name)

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()

    def _send(self, **request) -> None:
        try:
            self._process.stdin.write((json.dumps(request) + "\n").encode())
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the zygote is gone: every kernel's status says so

    def _listen(self) -> None:
        for line in self._process.stdout:
            message = json.loads(line)
            if "ready" in message:
                self._ready.put(True)
            elif "exited" in message:
                self._exits[message["exited"]] = message["status"]
            else:
                self._answers.setdefault(message.get("spawned", message.get("refused")), queue.Queue()).put(message)
        self._ready.put(False)  # gone before it was ready, or after: ``alive`` says which


def _pass_on_capped(source, log) -> None:
    """Copy what a zygote and its kernels write to standard error into ``log``: at most
    ``LOG_BYTES``, control characters but newlines shown as escapes (a kernel's escape
    codes do not reach a TA's terminal), the rest read in pieces and dropped."""
    left = LOG_BYTES
    while chunk := os.read(source.fileno(), 2**16):
        if left <= 0:
            continue
        text = chunk[:left].decode("utf-8", "replace")
        left -= len(chunk)
        shown = "".join(char if char.isprintable() or char in "\n\t" else repr(char)[1:-1] for char in text)
        try:
            log.write(shown + ("" if left > 0 else "\n[what the zygote and its kernels wrote next is not kept]\n"))
            log.flush()
        except (OSError, ValueError):
            return


class ForkedKernel:
    """A forked kernel as jupyter_client's provisioner handles a process: poll, signal, kill
    (``provisioner.SandboxedProvisioner`` waits for it by polling)."""

    # No pipes: the kernel's standard streams are not the grader's.
    stdin = stdout = stderr = None

    def __init__(self, server: ForkServer, name: str):
        self._server, self.name = server, name
        self.pid = None  # it has one only inside its own namespace

    def poll(self) -> int | None:
        return self._server.exit_status(self.name)

    def send_signal(self, signum: int) -> None:
        """Every signal ends the kernel: it is interrupted by message (its kernel spec's
        ``interrupt_mode``), so a signal only ever comes to stop it."""
        self._server.kill(self.name)

    def kill(self) -> None:
        self._server.kill(self.name)

    terminate = kill


_step_downs = itertools.count()


def step_down_user() -> int | None:
    """The user a root grader's kernel becomes: a new one for every kernel (unique among
    running kernels, not reused soon), so that no kernel can signal another's processes
    and each has a process count of its own. None for a grader who is not root, whose
    kernels sandbox in a user namespace."""
    return bwrap.sandbox_user(next(_step_downs)) if os.geteuid() == 0 else None


def kernel_environment(given: dict[str, str]) -> dict[str, str]:
    """A kernel's whole environment: a fixed one, and of ``given`` (what the grader set for
    the kernel) only the limits, nbgrader's word to the notebook, the guard's switch, the
    language of the checks' messages and the thread and hash settings. None of the TA's
    own variables reaches a kernel."""
    from autograder.message_language import LANGUAGE_VARIABLE
    from autograder.sandbox import guard
    from autograder.sandbox.limits import ENVIRONMENT_VARIABLE

    environment = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for name in (ENVIRONMENT_VARIABLE, "OMP_NUM_THREADS", "PYTHONHASHSEED", "NBGRADER_EXECUTION",
                 "NBGRADER_VALIDATING", guard.GUARD_TORCH_VARIABLE, LANGUAGE_VARIABLE):
        if name in given:
            environment[name] = given[name]
    return environment
