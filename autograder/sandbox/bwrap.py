"""The bubblewrap command line that sandboxes one grading kernel.

What the kernel can and cannot reach is the threat model (docs/threat-model.md), the
one description of it; this module builds it: read-only binds of the system and Python
folders, the assignment at ``ASSIGNMENT`` (copied by the kernel into ``WORKDIR`` in its own
``/tmp``), its sockets' folder at ``SOCKETS``, and namespaces of its own for users, PIDs,
network, IPC and hostname, every process dying with the kernel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import autograder

# /etc/fonts: fontconfig's configuration, without which drawing text writes an error to
# standard error, and nbgrader scores a test cell with any standard error as failed.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/fonts")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
PACKAGE = Path(autograder.__file__).parent
ASSIGNMENT = "/assignment"
WORKDIR = "/tmp/assignment"
# Files of the assignment folder a kernel never sees: the notebooks, which carry the hidden tests.
HIDDEN_FROM_THE_KERNEL = ("*.ipynb",)
SOCKETS = "/sockets"
# Where a zygote sees its kernels' folders (``zygote_command``).
KERNELS = "/kernels"
FIRST_SANDBOX_USER = 200_000
# What the kernel needs until ``privileges.give_up``: mounting its /tmp and making its
# sockets read only, emptying its bounding set, and (root graders) changing user or (in a
# user namespace) forbidding nested ones.
SETUP_CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SETPCAP")
ROOT_SETUP_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID")
USER_NAMESPACE_SETUP_CAPABILITIES = ("CAP_SYS_RESOURCE",)
# And what a zygote needs beside: its keepers end kernels that stepped down to another user
# (a kernel asks to die with its keeper, and Linux checks the dying keeper's right to
# signal it). Every kernel drops it with the rest.
ZYGOTE_CAPABILITIES = ("CAP_KILL",)


@cache
def unavailable_reason() -> str | None:
    """Why this machine cannot sandbox kernels, or None when it can (checked once, by
    setting up a sandbox as a kernel's is, down to capping its /tmp, after which the
    Python environment must still be there)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    probe = ("import os, sys, autograder\nfrom autograder.sandbox import privileges\n"
             "privileges.mount_tmpfs('/tmp', 2**20, 16, fresh=False)\n"
             "os.listdir(sys.prefix), os.listdir(os.path.dirname(autograder.__file__))")
    with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as scratch:
        assignment, sockets = Path(scratch, "assignment"), Path(scratch, "sockets")
        assignment.mkdir()
        sockets.mkdir()
        done = subprocess.run(command([sys.executable, "-c", probe], assignment, sockets, {}),
                              capture_output=True, text=True, timeout=60)
    if done.returncode:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return f"bubblewrap cannot create a kernel's sandbox here: {lines[-1]}"
    return None


def _sandbox(environment: dict[str, str], user_namespace: bool | None, extra: tuple[str, ...] = ()) -> list[str]:
    """Every sandbox's options: namespaces, capabilities, environment, system and Python
    folders, its own ``/tmp``, ``/proc`` and ``/dev``."""
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--hostname", "grading", "--clearenv", "--cap-drop", "ALL"]
    if user_namespace if user_namespace is not None else os.geteuid() != 0:
        # Root of its own user namespace (the TA's user outside it), so that it can mount.
        argv += ["--unshare-user", "--uid", "0", "--gid", "0"]
        capabilities = SETUP_CAPABILITIES + USER_NAMESPACE_SETUP_CAPABILITIES
    else:
        # Linux never applies the process cap to root, not even to root mapped into a user
        # namespace. So a root grader sandboxes without one, and the kernel steps down to
        # a user of its own (``privileges.give_up``).
        capabilities = SETUP_CAPABILITIES + ROOT_SETUP_CAPABILITIES
    argv += [arg for capability in capabilities + extra for arg in ("--cap-add", capability)]
    for name, value in environment.items():
        argv += ["--setenv", name, value]
    made = {"/"}
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += _parents(Path(folder), made) + ["--ro-bind", folder, folder]
    for file in SYSTEM_FILES:
        if os.path.exists(file):
            argv += _parents(Path(file), made) + ["--ro-bind", file, file]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    made |= {"/tmp", *SYSTEM_FOLDERS}
    for folder in python_folders():
        argv += _parents(folder, made) + ["--ro-bind", str(folder), str(folder)]
    return argv


def command(inner: list[str], assignment: Path, sockets: Path, environment: dict[str, str],
            user_namespace: bool | None = None) -> list[str]:
    """``bwrap ... -- INNER``: run ``inner`` sandboxed, with ``assignment`` readable at
    ``ASSIGNMENT`` and ``sockets`` (a folder the grader made) at ``SOCKETS``. A grader
    that is not root sandboxes in a user namespace (``user_namespace`` asks for one anyway)."""
    argv = _sandbox(environment, user_namespace)
    argv += ["--ro-bind", str(assignment), ASSIGNMENT, "--bind", str(sockets), SOCKETS]
    return argv + ["--chdir", "/", "--", *inner]


def zygote_command(inner: list[str], kernels: Path, environment: dict[str, str],
                   user_namespace: bool | None = None) -> list[str]:
    """``bwrap ... -- INNER`` for a worker's zygote (``autograder.sandbox.zygote``): the
    sandbox a kernel has, with ``kernels`` (a folder per kernel, which the grader made) at
    ``KERNELS`` instead of one assignment and one sockets' folder, and the places where
    each forked kernel puts its own."""
    argv = _sandbox(environment, user_namespace, ZYGOTE_CAPABILITIES)
    argv += ["--bind", str(kernels), KERNELS, "--dir", ASSIGNMENT, "--dir", SOCKETS]
    return argv + ["--chdir", "/", "--", *inner]


def sandbox_user(kernel: int = 0) -> int:
    """The user a root grader's ``kernel``-th kernel runs as: unique among running kernels
    (this process grades one notebook at a time, and no process id is shared), and not
    the same for 64 kernels in a row, so each gets a process count of its own."""
    return FIRST_SANDBOX_USER + os.getpid() * 64 + kernel % 64


def _parents(folder: Path, made: set[str]) -> list[str]:
    """Create the folders above a mount point, open to every user: bubblewrap would make
    them private to root, and a kernel that steps down could not reach its own Python."""
    argv = []
    for parent in reversed(folder.parents):
        if str(parent) not in made:
            made.add(str(parent))
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def visible_to_kernels(path: Path) -> bool:
    """Whether a sandboxed kernel can read ``path`` (it lies in a folder the sandbox binds)."""
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(Path(folder).resolve())
               for folder in [*SYSTEM_FOLDERS, *python_folders()] if os.path.isdir(folder))


def python_folders() -> list[Path]:
    """The interpreter's installation, the environment's, and this package's folder
    (an editable install keeps it outside the environment)."""
    folders = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE]
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(folder) for folder in folders):
        folders.append(executable.parent)
    return [folder.resolve() for folder in dict.fromkeys(folders)]
