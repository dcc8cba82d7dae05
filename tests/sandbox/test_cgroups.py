"""Where a kernel's control group goes, read from what Linux says of this process: cgroup
v2 (one hierarchy) or v1 (one per controller), and the limits written for each. These
are the pure parts, against the files of a host of each kind; a kernel really bounded by
its group is in ``test_kernel_bounds.py``."""

from __future__ import annotations

import json
import os

import pytest

from autograder.sandbox import cgroups
from autograder.sandbox.limits import GiB, Limits

# This machine's kind: the v1 controllers beside a v2 mount that offers none of them.
HYBRID_MOUNTS = """\
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_GROUPS = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n"
# Most laptops and servers now: v2 only, the grader in a systemd scope.
V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
V2_GROUPS = "0::/user.slice/user-1000.slice/run-r1.scope\n"
# A container with a cgroup namespace: the mount's root is the container's own group.
NAMESPACED_MOUNTS = "40 31 0:33 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"


def test_each_hierarchy_and_this_processes_group_in_it_are_read():
    mounts, groups = cgroups.read_mounts(HYBRID_MOUNTS), cgroups.own_groups(HYBRID_GROUPS)
    assert mounts["memory"] == ("/sys/fs/cgroup/memory", "/") and mounts["unified"][0] == "/sys/fs/cgroup/unified"
    assert str(cgroups.folder_of(mounts, groups, "memory")) == "/sys/fs/cgroup/memory/process_api/abc"
    assert str(cgroups.folder_of(mounts, groups, "pids")) == "/sys/fs/cgroup/pids"
    v2 = cgroups.folder_of(cgroups.read_mounts(V2_MOUNTS), cgroups.own_groups(V2_GROUPS), "unified")
    assert str(v2) == "/sys/fs/cgroup/user.slice/user-1000.slice/run-r1.scope"


def test_a_group_under_a_namespaced_mount_is_found_below_its_root_and_none_outside_it():
    mounts = cgroups.read_mounts(NAMESPACED_MOUNTS)
    inside = cgroups.folder_of(mounts, {"memory": "/docker/c1/grader"}, "memory")
    assert str(inside) == "/sys/fs/cgroup/memory/grader"
    assert cgroups.folder_of(mounts, {"memory": "/elsewhere"}, "memory") is None


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_limits_of_each_version_bound_memory_swap_processes_and_cores(version):
    files = cgroups.limit_files(version, Limits(memory_bytes=2 * GiB, processes=32, cpu_cores=1.5))
    merged = {name: value for controller in files.values() for name, value in controller.items()}
    if version == "v2":
        assert merged == {"memory.max": str(2 * GiB), "memory.swap.max": "0", "pids.max": "32",
                          "cpu.max": "150000 100000"}
    else:
        assert set(files) == {"memory", "pids", "cpu"}
        assert merged["memory.limit_in_bytes"] == merged["memory.memsw.limit_in_bytes"] == str(2 * GiB)
        assert (merged["pids.max"], merged["cpu.cfs_quota_us"], merged["cpu.cfs_period_us"]) == ("32", "150000",
                                                                                                 "100000")


def fake_v2(tmp_path, controllers="cpuset cpu io memory hugetlb pids", processes=()):
    """A v2 group as Linux shows it (its files regular files here)."""
    group = tmp_path / "scope"
    group.mkdir()
    (group / "cgroup.controllers").write_text(controllers + "\n")
    (group / "cgroup.subtree_control").write_text("")
    (group / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in processes))
    return group


def test_v2_makes_the_kernels_parent_and_hands_it_the_controllers(tmp_path, monkeypatch):
    group = fake_v2(tmp_path)
    found = cgroups._prepare_v2(group)
    parent = group / f"autograder-{os.getpid()}"
    assert (found.version, found.parents) == ("v2", {"unified": str(parent)})
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    kernel = cgroups.KernelGroup(found, Limits(memory_bytes=GiB, processes=16))
    (folder,) = kernel.folders
    assert (folder / "memory.max").read_text() == str(GiB) and (folder / "pids.max").read_text() == "16"
    assert not (folder / "memory.swap.max").exists(), "swap is limited only where the host accounts for it"
    kernel.add(4242)
    assert (folder / "cgroup.procs").read_text() == "4242"


def test_v2_without_the_controllers_or_a_delegated_group_says_why(tmp_path, monkeypatch):
    mounts = "29 23 0:26 / " + str(tmp_path) + " rw - cgroup2 cgroup2 rw\n"
    fake_v2(tmp_path, controllers="cpu io")
    found = cgroups._prepare(cgroups.read_mounts(mounts), {"unified": "/scope"})
    assert found.version is None and "offers no memory, pids, cpu controller in cgroup v2 or v1" in found.why
    assert found.describe().startswith("no control group, per-process limits only")


def test_a_group_holding_other_processes_is_not_taken_over(tmp_path, monkeypatch):
    """Linux refuses controllers to a group with processes; moving a stranger's (the TA's
    editor beside the run) into a leaf is not the grader's to do."""
    group = fake_v2(tmp_path, processes=[1])

    def busy(path, value):
        if path.name == "cgroup.subtree_control" and path.parent == group:
            raise OSError(16, "Device or resource busy")
        path.write_text(value)

    monkeypatch.setattr(cgroups, "_write", busy)
    found = cgroups._prepare_v2(group)
    assert found.version is None and "holds other processes too" in found.why
    assert not (group / f"autograder-{os.getpid()}").exists()


def test_the_runs_answer_reaches_its_workers_through_the_environment(monkeypatch):
    said = {"version": None, "parents": {}, "why": "switched off"}
    monkeypatch.setenv(cgroups.ENVIRONMENT_VARIABLE, json.dumps(said))
    cgroups.support.cache_clear()
    try:
        assert cgroups.support() == cgroups.Support(None, {}, "switched off") and cgroups.create(Limits()) is None
    finally:
        cgroups.support.cache_clear()
