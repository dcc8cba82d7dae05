"""What grading left behind (processes, temporary folders), seen by one test process only.

``make test`` runs two test processes at once (pytest-xdist). A check that looked at the
whole machine would see the other process's grading, still running, as a leftover. So each
test process, once ``isolate`` ran:

- is the *subreaper* of everything it starts: a process whose parent ends (a kernel's child
  that double-forked, a worker's orphan) becomes its child instead of init's, so that
  "what this process started and is still alive" is its tree of descendants, whatever
  escaped from where;
- has a temporary directory of its own (``TMPDIR``, which the grading workers it starts
  inherit), so that the grading folders made there are its own.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
# A grading kernel's command line, and what the attacks start from one (time.sleep(4242), ...).
GRADING_COMMANDS = ("autograder.sandbox", "time.sleep(424")
# A worker's folder, a process's kernels' folder (grading-kernels-), a test's kernel (grading-kernel-).
GRADING_FOLDER_PREFIXES = ("grading-kernel", "grading-worker-")
# Held (flock) by the test process whose temporary directory holds it, and by what it forked, while they live.
LOCK = ".held-by-a-test-process"
_held: list[int] = []


def isolate(under: Path) -> Path:
    """Make this process the subreaper of what it starts and give it a temporary directory
    of its own, made in ``under`` (returned; keep its path short: the kernels' socket paths
    are made in it). It outlives the process (multiprocessing empties its own folders in
    it at exit, after pytest is done): the next test process removes those whose lock no
    live process holds."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not become the subreaper of the processes tests start")
    for folder in under.glob("tests-*"):
        if _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix="tests-", dir=under))
    lock = os.open(folder / f"{LOCK}.partial", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.rename(folder / f"{LOCK}.partial", folder / LOCK)  # seen by others only once held
    _held.append(lock)  # open until this process ends
    folder.chmod(0o1777)  # as /tmp is: the tests run some things as other users (test_cluster)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again
    return folder


def _abandoned(folder: Path) -> bool:
    """A test process's temporary directory, this user's, whose lock nobody holds."""
    if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
        return False
    try:
        lock = os.open(folder / LOCK, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:  # none: not one of ours
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(lock)
    return True


def descendants(root: int | None = None) -> set[int]:
    """Process ids below ``root`` (this process by default), from two reads of /proc: a
    process that ended during one read can hide its child there (which it then left to
    this process, the subreaper, where the other read finds it)."""
    children: dict[int, set[int]] = {}
    for parents in (_parents(), _parents()):
        for pid, parent in parents.items():
            children.setdefault(parent, set()).add(pid)
    found: set[int] = set()
    waiting = [os.getpid() if root is None else root]
    while waiting:
        for child in children.get(waiting.pop(), ()):
            if child not in found:
                found.add(child)
                waiting.append(child)
    return found


def _parents() -> dict[int, int]:
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
        except OSError:  # ended meanwhile
            continue
    return parents


def commands() -> dict[int, str]:
    """This process's descendants' command lines, by process id (a zombie has none, and is
    not listed)."""
    found = {}
    for pid in descendants():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        if command:
            found[pid] = command
    return found


def grading_processes() -> list[str]:
    """Command lines of this process's descendants that are grading kernels or what one
    started: none may outlive grading."""
    return [command for command in commands().values() if any(marker in command for marker in GRADING_COMMANDS)]


def grading_folders() -> set[Path]:
    """The grading workers' and kernels' temporary folders now in this process's temporary
    directory."""
    return {path for prefix in GRADING_FOLDER_PREFIXES for path in Path(tempfile.gettempdir()).glob(f"{prefix}*")}
