"""A control group per grading kernel: its memory, processes and CPU bounded as a whole.

A per-process limit (``limits.Limits.apply``) bounds each process on its own: four
DataLoader workers under a 4 GiB address-space cap held 6 GiB between them, System V
shared memory belongs to no process at all, and sixteen spinning processes took every
core. A control group charges every page any process of the kernel touches (anonymous
memory, its tmpfs files, shared memory) to one budget, counts its processes and threads
together, and gives it a share of the CPU: the kernel and everything it starts.

Each kernel's group is made under the grader's own (``/proc/self/cgroup``), in the
version the host offers for each controller:

- **cgroup v2** (one unified hierarchy), when it offers ``memory``, ``pids`` and ``cpu``.
  Linux lets a group hand controllers to its children only while it holds no process
  itself, so the grader's group must be *delegated* to it: the run's own processes move
  into a leaf beside the kernels' groups, which is allowed only when every process in
  the grader's group belongs to this run (a TA starts it with ``systemd-run --user
  --scope -p Delegate=yes make grade``, or as a service with ``Delegate=yes``);
- **cgroup v1** (a hierarchy per controller), where v2 does not offer them (this is what
  many older hosts and some containers have): a group under the grader's own in each.

Where neither can be written (a TA who is not root, without delegation), ``support()``
says why, the run says so at its start and in the report, and the per-process limits
stay the only ones. The groups' parent is made once per run (``prepare``) and named to
the run's other processes in ``ENVIRONMENT_VARIABLE``.
"""

from __future__ import annotations

import atexit
import errno
import itertools
import json
import os
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from autograder.sandbox.limits import Limits

CONTROLLERS = ("memory", "pids", "cpu")
ENVIRONMENT_VARIABLE = "AUTOGRADER_KERNEL_CGROUPS"
CPU_PERIOD_US = 100_000
# Limits on swap, which exist only where the host accounts for it.
WHERE_SWAP_IS_ACCOUNTED = ("memory.memsw.limit_in_bytes", "memory.swap.max")
_names = itertools.count()


@dataclass(frozen=True)
class Support:
    """What bounds kernels as a whole here: ``version`` ("v1", "v2") and the folders under
    which each kernel gets its group (one per controller for v1, one for v2); or
    ``version`` None and ``why`` there is none."""

    version: str | None
    parents: dict[str, str]  # controller (or "unified") -> folder
    why: str | None = None

    def describe(self) -> str:
        if self.version is None:
            return f"no control group, per-process limits only: {self.why}"
        return f"a control group per kernel (cgroup {self.version}: {', '.join(CONTROLLERS)})"


@cache
def support() -> Support:
    """This process's answer: the run's (inherited through ``ENVIRONMENT_VARIABLE``), or
    one prepared now."""
    inherited = os.environ.get(ENVIRONMENT_VARIABLE)
    if inherited:
        said = json.loads(inherited)
        return Support(said["version"], said["parents"], said.get("why"))
    return prepare()


def prepare() -> Support:
    """Make the parent of this run's kernels' groups, and name it (or why there is none)
    to every process this one starts from now on."""
    try:
        found = _prepare(read_mounts(Path("/proc/self/mountinfo").read_text()),
                         own_groups(Path("/proc/self/cgroup").read_text()))
    except OSError as error:
        found = Support(None, {}, f"the control groups cannot be read ({error.strerror})")
    os.environ[ENVIRONMENT_VARIABLE] = json.dumps({"version": found.version, "parents": found.parents,
                                                   "why": found.why})
    support.cache_clear()
    return found


def own_groups(proc_self_cgroup: str) -> dict[str, str]:
    """controller -> this process's group in its hierarchy; "unified" for cgroup v2."""
    groups = {}
    for line in proc_self_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else ["unified"]:
            groups[controller] = path
    return groups


def read_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """controller (or "unified") -> (where its hierarchy is mounted, which group is the
    mount's root), from ``/proc/self/mountinfo``."""
    mounts = {}
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, (kind, _, options) = before.split(), after.split(" ", 2)
        root, mount_point = fields[3], fields[4]
        if kind == "cgroup2":
            mounts.setdefault("unified", (mount_point, root))
        elif kind == "cgroup":
            for option in options.split(","):
                if option in CONTROLLERS:
                    mounts.setdefault(option, (mount_point, root))
    return mounts


def folder_of(mounts: dict[str, tuple[str, str]], groups: dict[str, str], controller: str) -> Path | None:
    """This process's group of ``controller`` as a folder, or None when it is not mounted here."""
    if controller not in mounts or controller not in groups:
        return None
    mount_point, root = mounts[controller]
    group = groups[controller]
    if not (group + "/").startswith(root.rstrip("/") + "/"):
        return None  # the group lies outside what this mount shows
    return Path(mount_point, group[len(root.rstrip("/")):].lstrip("/"))


def _prepare(mounts: dict[str, tuple[str, str]], groups: dict[str, str]) -> Support:
    unified = folder_of(mounts, groups, "unified")
    offered = set(_read(unified / "cgroup.controllers").split()) if unified else set()
    if unified and offered >= set(CONTROLLERS):
        return _prepare_v2(unified)
    folders = {controller: folder_of(mounts, groups, controller) for controller in CONTROLLERS}
    missing = [controller for controller, folder in folders.items() if folder is None]
    if missing:
        return Support(None, {}, f"this host offers no {', '.join(missing)} controller in cgroup v2 or v1")
    parents = {}
    for controller, folder in folders.items():
        parent = folder / f"autograder-{os.getpid()}"
        try:
            parent.mkdir(exist_ok=True)
        except OSError as error:
            _remove(parents.values())
            return Support(None, {}, f"cannot make a control group in {folder} ({error.strerror}): grade as root, "
                                     "or in a group delegated to you")
        parents[controller] = str(parent)
    atexit.register(_remove, parents.values())
    return Support("v1", parents)


def _prepare_v2(own: Path) -> Support:
    """The kernels' parent beside a leaf holding this run's processes (Linux's rule: a
    group that hands out controllers holds no process)."""
    parent = own / f"autograder-{os.getpid()}"
    wanted = " ".join(f"+{controller}" for controller in CONTROLLERS)
    try:
        parent.mkdir(exist_ok=True)
        try:
            _write(own / "cgroup.subtree_control", wanted)
        except OSError as error:
            if error.errno != errno.EBUSY:
                raise
            strangers = [pid for pid in _read(own / "cgroup.procs").split() if not _ours(int(pid))]
            if strangers:
                _remove([parent])
                return Support(None, {}, f"the grader's control group {own} holds other processes too (not "
                                         "delegated): start the run with systemd-run --user --scope -p "
                                         "Delegate=yes")
            leaf = own / f"autograder-{os.getpid()}-grader"
            leaf.mkdir(exist_ok=True)
            for pid in _read(own / "cgroup.procs").split():
                _write(leaf / "cgroup.procs", pid)
            _write(own / "cgroup.subtree_control", wanted)
        _write(parent / "cgroup.subtree_control", wanted)
    except OSError as error:
        _remove([parent])
        return Support(None, {}, f"cannot make a control group in {own} ({error.strerror}): grade as root, or in "
                                 "a group delegated to you")
    atexit.register(_remove, [parent])
    return Support("v2", {"unified": str(parent)})


def limit_files(version: str, limits: Limits) -> dict[str, dict[str, str]]:
    """What to write in a kernel's group, by controller ("unified" for v2): file -> value,
    in order."""
    memory, processes = str(limits.memory_bytes), str(limits.processes)
    quota = str(max(1000, round(limits.cpu_cores * CPU_PERIOD_US)))
    if version == "v2":
        return {"unified": {"memory.max": memory, "memory.swap.max": "0", "pids.max": processes,
                            "cpu.max": f"{quota} {CPU_PERIOD_US}"}}
    return {"memory": {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory},
            "pids": {"pids.max": processes},
            "cpu": {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": quota}}


class KernelGroup:
    """One kernel's group (a folder per hierarchy), its limits written."""

    def __init__(self, found: Support, limits: Limits):
        # Named by process too: every worker of a run makes its kernels' groups in one parent.
        name = f"kernel-{os.getpid()}-{next(_names)}"
        self.folders = [Path(parent, name) for parent in found.parents.values()]
        try:
            for folder, (_, files) in zip(self.folders, limit_files(found.version, limits).items(), strict=True):
                folder.mkdir()
                for name, value in files.items():
                    if name not in WHERE_SWAP_IS_ACCOUNTED or (folder / name).exists():
                        _write(folder / name, value)
        except OSError:
            self.remove()
            raise

    def add(self, pid: int) -> None:
        """Move ``pid`` (as this process sees it) into the group: whatever it starts from
        now on is born there."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def remove(self) -> None:
        """End what is left in the group (a kernel's processes die with it, a moment after
        its keeper), then remove it."""
        for _ in range(200):
            pids = {pid for folder in self.folders for pid in _read(folder / "cgroup.procs").split()}
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)
        _remove(reversed(self.folders))


def create(limits: Limits) -> KernelGroup | None:
    """A new kernel's group, or None where there are none (``support().why``)."""
    found = support()
    return KernelGroup(found, limits) if found.version else None


def _ours(pid: int) -> bool:
    """Whether ``pid`` is this process, one that started it (``make``), or one it started."""
    mine = os.getpid()
    current = mine
    while current > 1:
        if current == pid:
            return True
        current = parent_pid(current)
    current = pid
    while current > 1:
        if current == mine:
            return True
        current = parent_pid(current)
    return False


def parent_pid(pid: int) -> int:
    """``pid``'s parent as /proc says it, 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), 0)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as file:
        file.write(value)


def _remove(folders) -> None:
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            pass
