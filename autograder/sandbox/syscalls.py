"""The system calls a grading kernel may not make: a seccomp filter, in every thread, for
the kernel and everything it starts.

Namespaces bound what a kernel sees; some of Linux's interfaces are in no namespace, or
make new ones. Modelled on the default profile container runtimes apply (Docker's, Podman's),
``install`` denies, with ``EPERM``:

- keyrings (``keyctl``, ``add_key``, ``request_key``): they are in no namespace, so a key
  one kernel adds is readable by the next;
- reaching another process's memory or tracing it (``ptrace``, ``process_vm_*``,
  ``pidfd_getfd``, ``kcmp``, ``process_madvise``);
- new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3``
  answers ``ENOSYS``, as under those runtimes, so that the C library falls back to
  ``clone``, whose flags a filter can read): a user namespace of its own would let a
  kernel mount an uncapped tmpfs;
- mounts of every kind, ``chroot`` and ``pivot_root``;
- what no notebook needs and the kernel's attack surface grows with: ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``io_uring``, modules, ``kexec``, swap, clocks,
  ``reboot``, quotas, the kernel log, file handles, ``personality``.

Python has no binding for seccomp: ``pyseccomp`` drives the system's libseccomp, which
knows each architecture's call numbers. The filter also sets ``no_new_privs``.
"""

from __future__ import annotations

import errno

# Loaded with this module: the kernel imports it before it gives up its rights (libseccomp
# is found by asking ldconfig), and a forked kernel finds it loaded by its zygote.
import pyseccomp as seccomp

CLONE_NAMESPACES = {"CLONE_NEWTIME": 0x80, "CLONE_NEWNS": 0x20000, "CLONE_NEWCGROUP": 0x02000000,
                    "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000,
                    "CLONE_NEWPID": 0x20000000, "CLONE_NEWNET": 0x40000000}
DENIED = (
    "keyctl", "add_key", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
    "unshare", "setns",
    "mount", "umount", "umount2", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "pivot_root", "chroot",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "iopl", "ioperm",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at",
    "personality", "uselib", "nfsservctl", "fanotify_init",
)
# Answered "not implemented": the C library then uses an older call the filter can read.
NOT_IMPLEMENTED = ("clone3",)


def install() -> None:
    """Deny ``DENIED`` to this process, every thread it has and everything it starts."""
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.CTL_TSYNC, 1)  # ipykernel's threads exist already
    for name in DENIED:
        _deny(rules, seccomp.ERRNO(errno.EPERM), name)
    for name in NOT_IMPLEMENTED:
        _deny(rules, seccomp.ERRNO(errno.ENOSYS), name)
    for flag in CLONE_NAMESPACES.values():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.load()


def _deny(rules, action: int, name: str) -> None:
    try:
        rules.add_rule(action, name)
    except (ValueError, OSError):
        pass  # a call this architecture does not have
