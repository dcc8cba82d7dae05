"""A warm parent for a worker's grading kernels: torch imported once, each kernel a fork.

    python -m autograder.sandbox.zygote      (in bubblewrap; ``fork_server.ForkServer`` starts it)

Starting a kernel costs a new Python, ipykernel and ``import torch`` (about two seconds);
a fork of a process that imported them already costs a tenth of that. The zygote runs in
one bubblewrap sandbox per grading process, built as a kernel's was (``bwrap.zygote_command``),
with that process's kernels' folders under ``bwrap.KERNELS``. It never runs student code:
it imports, and forks when asked. Each fork becomes a kernel in namespaces of its own
(mounts, PIDs, IPC, network), so that nothing one student's kernel did reaches the next
one or the zygote:

- its own ``/tmp`` and ``/proc``; its folder ``KERNELS/<kernel>/`` as its sockets' folder,
  that folder's ``assignment/`` (read only) as its assignment, every kernel's folder hidden;
- every process it starts dies with it (it is the first process of its PID namespace, and
  dies with its keeper, the fork that waits for it);
- then the set-up every kernel has (``kernel.set_up``: limits, ``lock_down``: no
  privileges, a user of its own, the guard).

A fork starts from the zygote's memory, which no student touched: modules and torch as a
fresh process has them, its random generators seeded anew.

The grading process talks to the zygote over its standard input and output, one JSON
object a line; a kernel holds neither (they become ``/dev/null``, and every other file
the zygote had open is closed before the kernel runs anything).

- ``{"spawn": KERNEL, "argv": [...], "env": {...}, "step_down": UID or null, "hold": BOOL}``:
  fork a kernel whose files are in ``KERNELS/KERNEL/`` (its connection file,
  ``assignment/``); answered ``{"spawned": KERNEL, "pid": PID}`` (its keeper's process id
  in the zygote's namespace) or ``{"refused": KERNEL, "why": ...}``. With ``hold``, the
  keeper waits for ``{"start": KERNEL}`` before it makes the kernel: the grader moves it
  into the kernel's control group first (``cgroups``), so that nothing of the kernel
  ever runs outside it.
- ``{"kill": KERNEL}``: end it, and every process it started.
- ``{"exited": KERNEL, "status": N}`` is sent when a kernel ended, however it ended.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import random
import selectors
import signal
import sys
import traceback
from pathlib import Path

from autograder.sandbox import bwrap, privileges

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWNET = 0x00020000, 0x20000000, 0x08000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 32, 4096, 8192, 16384, 262144
_libc = ctypes.CDLL(None, use_errno=True)

# What every kernel imports, once. Measured per kernel: ipykernel's start took 0.13 s, of
# which 0.08 s imported its shell, its debugger and what they use.
KERNEL_MODULES = (
    "IPython", "IPython.core.completerlib", "IPython.core.debugger", "IPython.core.oinspect",
    "IPython.extensions.storemagic", "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.debugger",
    "faulthandler", "sqlite3", "tornado.platform.asyncio",
    "stack_data",  # IPython's tracebacks, on a kernel's first error
    "torch",
    "torch._dynamo",  # every optimizer and profiler imports it: a second and a half
    "autograder.cases", "autograder.checks", "autograder.sandbox.kernel",
)


def main() -> None:
    # What every kernel imports, once: each fork starts with them in memory. Nothing here
    # runs a torch operation (a fork must not inherit a started thread pool). What these
    # imports set in the environment, a fresh kernel would have too (``_kernel``).
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # the debugger's warning, once per zygote: not wanted
    before = dict(os.environ)
    for module in KERNEL_MODULES:
        importlib.import_module(module)
    set_by_imports = {name: value for name, value in os.environ.items() if before.get(name) != value}
    requests, replies = sys.stdin.buffer, sys.stdout
    kernels: dict[int, str] = {}  # pid of each kernel's keeper -> kernel
    held: dict[str, int] = {}  # kernel -> the pipe its waiting keeper starts on
    # Woken by a request, or by a keeper's end (a pidfd each): a kernel's end is told at once.
    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ)
    reply(replies, ready=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is requests:
                line = requests.readline()
                if not line:
                    return  # the worker is gone (bubblewrap's --die-with-parent ends the rest)
                _handle(json.loads(line), kernels, held, replies, set_by_imports, selector)
            else:
                selector.unregister(key.fileobj)
                os.close(key.fileobj)
        _reap(kernels, replies)


def reply(replies, **message) -> None:
    replies.write(json.dumps(message) + "\n")
    replies.flush()


def _handle(request: dict, kernels: dict[int, str], held: dict[str, int], replies, set_by_imports: dict[str, str],
            selector: selectors.BaseSelector) -> None:
    if "spawn" in request:
        name = request["spawn"]
        folder = Path(bwrap.KERNELS, name) if isinstance(name, str) else None
        if folder is None or "/" in name or name.startswith(".") or not folder.is_dir() or folder.is_symlink():
            reply(replies, refused=name, why="no such kernel folder")
            return
        start, go = os.pipe() if request.get("hold") else (None, None)
        pid = os.fork()
        if pid == 0:
            for fd in [*held.values(), *([go] if go is not None else [])]:
                os.close(fd)
            _keeper(name, request["argv"], {**set_by_imports, **request["env"]}, request.get("step_down"), start)
        if start is not None:
            os.close(start)
            held[name] = go
        kernels[pid] = name
        selector.register(os.pidfd_open(pid), selectors.EVENT_READ)
        reply(replies, spawned=name, pid=pid)
    elif "start" in request:
        go = held.pop(request["start"], None)
        if go is not None:
            os.write(go, b"1")
            os.close(go)
    elif "kill" in request:
        go = held.pop(request["kill"], None)
        if go is not None:
            os.close(go)  # a keeper still waiting reads the end of the pipe, and exits
        for pid, name in kernels.items():
            if name == request["kill"]:
                os.kill(pid, signal.SIGKILL)  # its kernel dies with it (PR_SET_PDEATHSIG), then its namespace


def _reap(kernels: dict[int, str], replies) -> None:
    while kernels:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        name = kernels.pop(pid, None)
        if name is not None:
            reply(replies, exited=name, status=os.waitstatus_to_exitcode(status))


def _keeper(name: str, argv: list[str], env: dict[str, str], step_down: int | None, start: int | None) -> None:
    """In the fork: (once the grader says ``start``, when it holds it) new namespaces; the
    kernel is this process's child, the first process of its PID namespace, so that every
    process it starts ends with it. This process waits for it and exits with its status."""
    try:
        if start is not None:
            if os.read(start, 1) != b"1":
                os._exit(72)  # never started: the grader gave up on it
            os.close(start)
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET), "unshare")
        child = os.fork()
        if child == 0:
            _kernel(name, argv, env, step_down)
        _, status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)  # killed by signal N: 128 + N, as a shell says
    except BaseException:  # noqa: BLE001 (a fork must never return into the zygote's loop)
        traceback.print_exc()  # to the worker's log
        os._exit(70)


def _kernel(name: str, argv: list[str], env: dict[str, str], step_down: int | None) -> None:
    import torch  # imported already, by ``main``

    from autograder.sandbox import kernel

    try:
        privileges.die_with_parent()
        _private_view(Path(bwrap.KERNELS, name))
        _quiet_and_closed()
        os.environ.clear()
        os.environ.update(env)
        # The zygote's random states are every fork's: seeded anew, as a fresh process's are.
        random.seed()
        torch.seed()
        kernel.main(["--sandboxed", "--forked", *([f"--step-down={step_down}"] if step_down is not None else []),
                     *argv])
    except BaseException:  # noqa: BLE001 (never back into the zygote's code)
        traceback.print_exc()
        os._exit(71)
    os._exit(0)


def _private_view(folder: Path) -> None:
    """This kernel's mounts: a ``/tmp`` of its own (the zygote's is one tmpfs for every
    fork), its own folder's assignment and sockets at the places a kernel expects them,
    every kernel's folder hidden, a ``/proc`` of its PID namespace."""
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make its mounts private")
    # A Python environment under /tmp is a mount inside the zygote's /tmp: moved aside,
    # then back onto the new /tmp, at the same path (with the mounts inside it, such as
    # the package's folder of an environment that holds it).
    folders = bwrap.python_folders()
    under_tmp = [path for path in folders if path.is_relative_to("/tmp")
                 and not any(path != outer and path.is_relative_to(outer) for outer in folders)]
    aside = [folder / f"python-{index}" for index in range(len(under_tmp))]
    for path, place in zip(under_tmp, aside, strict=True):
        place.mkdir()
        _move(path, place)
    _check(_libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"mode=1777"), "mount its /tmp")  # capped by kernel.set_up
    for path, place in zip(under_tmp, aside, strict=True):
        path.mkdir(parents=True)
        _move(place, path)
    _bind(folder / "assignment", bwrap.ASSIGNMENT)
    _check(_libc.mount(None, bwrap.ASSIGNMENT.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                       None), "make its assignment read only")
    _bind(folder, bwrap.SOCKETS)
    _check(_libc.mount(b"tmpfs", bwrap.KERNELS.encode(), b"tmpfs", MS_RDONLY, b"size=4096,nr_inodes=4,mode=0555"),
           "hide every kernel's folder")
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount its /proc")


def _bind(source: Path, target: str) -> None:
    _check(_libc.mount(str(source).encode(), target.encode(), None, MS_BIND, None), f"bind {target}")


def _move(source: Path, target: Path) -> None:
    _check(_libc.mount(str(source).encode(), str(target).encode(), None, MS_MOVE, None), f"move {source}")


def _quiet_and_closed() -> None:
    """No file of the zygote's left open: its requests and replies become ``/dev/null``;
    errors still go where a kernel's always went, the worker's log."""
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1):
        os.dup2(null, stream)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"a forked kernel could not {what}: {os.strerror(error)}")


if __name__ == "__main__":
    main()
