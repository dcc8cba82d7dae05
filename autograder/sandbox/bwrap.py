"""The bubblewrap command line that sandboxes one grading kernel.

Inside, the kernel sees the operating system's ``/usr`` and the Python environment, read
only; a private ``/tmp``; the folder it was started in (the scratch copy of the one
submission being graded) and the folder of its own sockets, writable; and nothing else:
not the course, its gradebook, ``source/`` or ``release/``, other students' folders, or
the TA's home. It has no network (a network namespace of its own, so the grader talks
to it over Unix sockets), no view of other processes, no capabilities, and a clean
environment. Every process in it dies when the kernel does (a PID namespace whose
first process is bubblewrap's, which goes when its parent does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import autograder

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
PACKAGE = Path(autograder.__file__).parent
FIRST_SANDBOX_USER = 200_000
KEPT_UNTIL_STEP_DOWN = ("CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH")
# The package's fixture submissions are other students' work as far as a kernel is concerned.
HIDDEN_IN_PACKAGE = ("demo_class",)


@cache
def unavailable_reason() -> str | None:
    """Why this machine cannot sandbox kernels, or None when it can (checked once)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    probe = subprocess.run(["bwrap", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "true"],
                           capture_output=True, text=True)
    if probe.returncode:
        return f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()}"
    return None


def command(inner: list[str], workdir: Path, writable: list[Path], environment: dict[str, str]) -> list[str]:
    """``bwrap ... -- INNER``: run ``inner`` in ``workdir`` inside the sandbox."""
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--hostname", "grading", "--clearenv"]
    if os.geteuid() == 0:
        # Linux never applies the process cap to root, not even to root mapped into a user
        # namespace. So a root grader sandboxes without one, keeping only the rights to
        # change user and to reach its (student-owned) folder, and the kernel steps down
        # to a user of its own (``step_down``), which ends all of them.
        argv += ["--cap-drop", "ALL"] + [arg for cap in KEPT_UNTIL_STEP_DOWN for arg in ("--cap-add", cap)]
    else:
        argv += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--uid", "65534", "--gid", "65534"]
    for name, value in environment.items():
        argv += ["--setenv", name, value]
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    for file in SYSTEM_FILES:
        if os.path.exists(file):
            argv += ["--ro-bind", file, file]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    made = {"/", "/tmp", *SYSTEM_FOLDERS}
    for folder in _python_folders():
        argv += _parents(folder, made) + ["--ro-bind", str(folder), str(folder)]
    for name in HIDDEN_IN_PACKAGE:
        if (PACKAGE / name).is_dir():
            argv += ["--tmpfs", str(PACKAGE / name)]
    for folder in writable:
        argv += _parents(folder, made) + ["--bind", str(folder), str(folder)]
    return argv + ["--chdir", str(workdir), "--", *inner]


def sandbox_user() -> int:
    """The user a root grader's kernel runs as: one per kernel (the launcher's process id
    is unique among running kernels), so each gets a process count of its own."""
    return FIRST_SANDBOX_USER + os.getpid()


def step_down(user: int) -> None:
    """Inside the sandbox, give up root for ``user`` before any student code runs (no
    capabilities survive it, and bubblewrap's no-new-privileges rules out regaining them)."""
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(user)
        os.setuid(user)


def _parents(folder: Path, made: set[str]) -> list[str]:
    """Create the folders above a mount point, open to every user: bubblewrap would make
    them private to root, and a kernel that steps down could not reach its own Python."""
    argv = []
    for parent in reversed(folder.parents):
        if str(parent) not in made:
            made.add(str(parent))
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def _python_folders() -> list[Path]:
    """The interpreter's installation, the environment's, and this package's folder
    (an editable install keeps it outside the environment)."""
    folders = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE]
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(folder) for folder in folders):
        folders.append(executable.parent)
    return [folder.resolve() for folder in dict.fromkeys(folders)]
