"""Inside the sandbox, before any student code: the kernel's own filesystem, then no rights.

bubblewrap starts the kernel with the few capabilities it needs to finish setting up
(``bwrap.SETUP_CAPABILITIES``): none of them survives ``give_up``. In between, the kernel

- caps its ``/tmp`` tmpfs in bytes *and* in files (bubblewrap's own ``--size`` has no
  file cap, and a flood of empty files costs the host memory), gives
  ``/dev/shm`` a tiny one, and makes the sandbox's root and ``/dev`` read only: those
  are tmpfs too, uncapped, and a kernel in a user namespace owns them;
- after ipykernel has made its sockets, makes their folder read only, so that nothing
  in the kernel can plant a file or a link where the grader connects;
- in a user namespace (a TA who is not root), forbids nested user namespaces, as
  bubblewrap's ``--disable-userns`` would (that option nests the kernel one namespace
  deeper, where it could not mount its ``/tmp``).

Python has no call for mount or capabilities, so these go to the C library directly.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
from pathlib import Path

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 1, 2, 4, 32, 4096
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 1, 4, 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)


class _CapabilityHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapabilitySets(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def mount_tmpfs(path: str, size_bytes: int, files: int, fresh: bool = True) -> None:
    """A tmpfs on ``path``, open to every user, of at most ``size_bytes`` and ``files``:
    a fresh one, or (``fresh=False``) the one bubblewrap put there, capped in place, so
    that what bubblewrap mounted inside it (the Python environment of a course that
    lives under /tmp) stays."""
    options = f"size={size_bytes},nr_inodes={files},mode=1777".encode()
    flags = MS_NOSUID | MS_NODEV | (0 if fresh else MS_REMOUNT)
    source, kind = (b"tmpfs", b"tmpfs") if fresh else (None, None)
    _check(_libc.mount(source, path.encode(), kind, flags, options), f"cap the tmpfs on {path}")


def make_read_only(folder: Path, devices: bool = False) -> None:
    """Remount the mount at ``folder`` read only, in this sandbox's view only (``devices``
    keeps device files usable: ``/dev/null`` still takes writes)."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | (0 if devices else MS_NODEV)
    _check(_libc.mount(None, str(folder).encode(), None, flags, None), f"make {folder} read only")


def cap_ipc(shared_bytes: int) -> None:
    """System V shared memory and message queues of this IPC namespace (the kernel's own),
    capped: a segment outlives every process that attached it, until the namespace ends."""
    page = os.sysconf("SC_PAGE_SIZE")
    for name, value in (("shmmax", shared_bytes), ("shmall", max(1, shared_bytes // page)), ("shmmni", 16),
                        ("msgmnb", 16384), ("msgmni", 16)):
        Path(f"/proc/sys/kernel/{name}").write_text(str(value))


def not_dumpable() -> None:
    """No process of the same user may read or write this one's memory through /proc or
    ptrace (its children included), and its /proc files become root's."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "stop being dumpable")


def forbid_user_namespaces() -> None:
    Path("/proc/sys/user/max_user_namespaces").write_text("0")


def give_up(step_down_to: int | None) -> None:
    """Drop every capability for good; a root grader's kernel also becomes ``step_down_to``.

    Linux never applies the process cap to root, so a root grader's kernel must stop
    being root; in a user namespace, the kernel is already the TA's own user outside it.
    """
    for capability in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this Linux knows
            _check(-1, f"drop capability {capability} from the bounding set")
    if step_down_to is not None:
        os.setgroups([])
        os.setgid(step_down_to)
        os.setuid(step_down_to)
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear the ambient capabilities")
    header, empty = _CapabilityHeader(CAPABILITY_VERSION_3, 0), (_CapabilitySets * 2)()
    _check(_libc.capset(ctypes.byref(header), empty), "drop every capability")


def die_with_parent() -> None:
    """Be killed when the process that started this one ends (a forked kernel's keeper,
    ``autograder.sandbox.zygote``). Linux forgets this whenever the user changes: a kernel
    that stepped down asks again."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "die with its parent")


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"the sandbox could not {what}: {os.strerror(error)}")
