"""Where a grading kernel may read and write, whatever it owns: a Landlock ruleset.

Inside its sandbox a kernel owns what it made and, for a grader who is not root, is root
of its user namespace: file modes do not stop it from writing its own ``/proc/self/mem``
(which changes memory no audit hook sees, an immutable ``bytes`` included) or anything
else of ``/proc``. Landlock (Linux 5.13 and later) restricts a process and everything it
starts by path, independently of owners and capabilities. ``restrict`` allows:

- reading and running the system's and the Python environment's folders, and reading
  the assignment's files and the two files of ``/etc`` the sandbox shows;
- reading ``/proc`` (Python and torch look at their own status there), and writing
  nothing in it;
- everything in the kernel's own ``/tmp`` and ``/dev/shm`` (both capped tmpfs);
- reading and writing the harmless devices (``/dev/null``, ``/dev/zero``, the random ones).

Every other access, and any mount, is refused (``EACCES``). Landlock applies to the
thread that asks and every thread and process it starts from then on: ipykernel's own
threads, started before student code, keep their access (the seccomp filter covers them;
reaching them means patching ipykernel, which the policy scan holds for review). On a
Linux without Landlock, ``restrict`` returns False and the kernel's file modes and
``dumpable`` flag are what is left (see docs/threat-model.md).
"""

from __future__ import annotations

import ctypes
import os

from autograder.sandbox import bwrap

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE = 1 << 13, 1 << 14
# Every right on files and folders Landlock's first version knows (making, removing, ...).
ABI_1_RIGHTS = (1 << 13) - 1
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
READ = EXECUTE | READ_FILE | READ_DIR
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_libc = ctypes.CDLL(None, use_errno=True)


class _RulesetAttributes(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> int:
    """Landlock's version in this Linux, 0 where it has none (or it is switched off)."""
    version = _libc.syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    return max(version, 0)


def restrict() -> bool:
    """Apply the rules to this thread and all it starts; False where Linux has no Landlock."""
    version = abi_version()
    if version < 1:
        return False
    handled = ABI_1_RIGHTS | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)
    attributes = _RulesetAttributes(handled)
    ruleset = _libc.syscall(CREATE_RULESET, ctypes.byref(attributes), ctypes.sizeof(attributes), 0)
    _check(ruleset, "create a Landlock ruleset")
    try:
        readable = [*bwrap.SYSTEM_FOLDERS, *map(str, bwrap.python_folders()), bwrap.ASSIGNMENT, *bwrap.SYSTEM_FILES]
        for path in readable:
            _allow(ruleset, path, READ, handled)
        _allow(ruleset, "/proc", READ_FILE | READ_DIR, handled)
        for path in ("/tmp", "/dev/shm"):
            _allow(ruleset, path, handled, handled)
        for path in DEVICES:
            _allow(ruleset, path, READ_FILE | WRITE_FILE, handled)
        _check(_libc.syscall(RESTRICT_SELF, ruleset, 0), "restrict itself with Landlock")
    finally:
        os.close(ruleset)
    return True


def _allow(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not in this sandbox
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights & handled, fd)
        _check(_libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0), f"allow {path}")
    finally:
        os.close(fd)


def _check(result: int, what: str) -> None:
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"the sandbox could not {what}: {os.strerror(error)}")
