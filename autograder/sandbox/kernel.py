"""The grading kernel: ipykernel with resource limits set and the tamper guard installed.

    python -m autograder.sandbox.kernel [--sandboxed [--step-down=USER]] -f CONNECTION_FILE [IPKernelApp options]

A sandboxed kernel is a fork of its worker's zygote (``autograder.sandbox.zygote``), which
calls ``main`` with ``--forked``; the unsandboxed kernel is a process of its own.

Before any student code runs, in this order: the kernel's own ``/tmp`` (sandboxed),
the limits (``limits.Limits``, from the environment), ipykernel and its sockets, giving
up every privilege (sandboxed, ``privileges.give_up``), a private working folder holding
a copy of the assignment's files, imports from that folder served from a snapshot of it
(``folder_imports``), IPython's automagic off, a cap on every message's size
(``outputs``), and the guard's snapshot of every hook the tests rely on. Whatever the notebook writes stays in
that working folder, which the grader never reads: sandboxed, it is in the kernel's tmpfs;
unsandboxed, in the private folder of the kernel's sockets, which the grader removes with
the kernel.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from autograder.sandbox.outputs import cap_session
from autograder.sandbox import bwrap, folder_imports, guard, landlock, privileges, syscalls
from autograder.sandbox.limits import Limits

OWN_OPTIONS = ("--sandboxed", "--forked", "--step-down=")
# A kernel's shared memory, POSIX (/dev/shm) and System V alike.
SHARED_MEMORY_BYTES = 2**20


def main(argv: list[str]) -> None:
    sandboxed = "--sandboxed" in argv
    step_down = next((int(arg.split("=", 1)[1]) for arg in argv if arg.startswith("--step-down=")), None)
    sockets = Path(argv[argv.index("-f") + 1]).parent
    limits = Limits.from_environment()
    if sandboxed:
        set_up(limits, step_down)
    else:
        limits.apply(sandboxed=False)
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize([arg for arg in argv if not arg.startswith(OWN_OPTIONS)])
    if sandboxed:  # the sockets are bound: nothing more to set up
        lock_down(sockets, step_down)
        if "--forked" in argv:
            privileges.die_with_parent()  # forgotten when it stepped down; it ends with its keeper
        assignment, workdir = Path(bwrap.ASSIGNMENT), Path(bwrap.WORKDIR)
    else:
        assignment, workdir = Path.cwd(), sockets / "work"
    shutil.copytree(assignment, workdir, ignore=shutil.ignore_patterns(*bwrap.HIDDEN_FROM_THE_KERNEL))
    os.chdir(workdir)
    folder_imports.install(workdir, also=assignment)  # what it holds now is importable; what it writes never is
    app.shell.automagic = False  # `run x.py` on its own line is Python, not %run: what the scan read is what runs
    cap_session(app.session, limits.output_bytes)
    guard.install(app.shell, torch=os.environ.get(guard.GUARD_TORCH_VARIABLE) != "0")
    app.start()
    # The grader has every output by now. Tearing down torch's interpreter state would
    # cost half a second per notebook, and nothing in a grading kernel needs it.
    os._exit(0)


def set_up(limits: Limits, step_down: int | None) -> None:
    """In the sandbox, before the sockets: the kernel's own /tmp, nothing else writable
    but its sockets' folder (until ``lock_down``), System V shared memory capped in its
    IPC namespace, then the limits."""
    privileges.mount_tmpfs("/tmp", limits.disk_bytes, limits.files, fresh=False)
    privileges.mount_tmpfs("/dev/shm", SHARED_MEMORY_BYTES, 64)
    privileges.cap_ipc(SHARED_MEMORY_BYTES)
    privileges.make_read_only(Path("/dev"), devices=True)
    privileges.make_read_only(Path("/"))
    if step_down is None:
        privileges.forbid_user_namespaces()
    limits.apply(sandboxed=True)


def lock_down(sockets: Path, step_down: int | None) -> None:
    """In the sandbox, once the sockets are bound: they stay as they are, no privilege is
    left, no other process of its user may look into its memory (nor, for a root grader,
    the kernel itself through /proc), some system calls are gone (``syscalls``) and the
    files it may write are its own /tmp's (``landlock``)."""
    privileges.make_read_only(sockets)
    privileges.give_up(step_down)
    privileges.not_dumpable()
    syscalls.install()
    landlock.restrict()


if __name__ == "__main__":
    main(sys.argv[1:])
