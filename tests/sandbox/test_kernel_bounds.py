"""A grading kernel is bounded as a whole: what it and everything it starts may take of the
machine (memory through child processes and shared memory, CPU), what it may ask of Linux
(keyrings, namespaces, other memory), and what of the grader it holds (no descriptor of a
grader's file). Each test runs a real sandboxed kernel forked by this process's zygote,
with its control group where the host has one."""

from __future__ import annotations

import os
import re

import nbformat
import pytest
from traitlets.config import Config

from tests.helpers.attacks import AFTER_THE_TESTS
from autograder.preprocessors.guarded_execute import GuardedExecute
from autograder.sandbox import cgroups, fork_server
from autograder.sandbox.limits import GiB, MiB

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_zygote_left")]

needs_cgroups = pytest.mark.skipif(cgroups.support().version is None,
                                   reason=f"no control groups here: {cgroups.support().why}")


def run(code: str, folder, **settings) -> str:
    """The text a one-cell notebook printed in a sandboxed grading kernel with ``settings``."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    config = Config({"GradingSettings": {"sandbox": True, **settings}})
    GuardedExecute(config=config, timeout=120).preprocess(notebook, {"metadata": {"path": str(folder)}})
    return "".join(output.get("text", "") or str(output.get("evalue", "")) for output in notebook.cells[0].outputs)


def held_by_children(folder, children: int, each: int, **settings) -> int:
    """Bytes that ``children`` processes of the kernel, each touching ``each`` bytes, held
    at once (those the kernel's memory limit did not let live are not counted)."""
    code = f"""
import os, time
pipes = []
for _ in range({children}):
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        try:
            hog = bytearray({each})  # written, so really held
            os.write(write, b"1")
            time.sleep(30)
        finally:
            os._exit(0)
    os.close(write)
    pipes.append(read)
time.sleep(3)
alive = 0
for read in pipes:
    alive += os.read(read, 1) == b"1" and os.waitpid(-1, os.WNOHANG) == (0, 0)
print("holding", alive)
"""
    return int(re.search(r"holding (\d+)", run(code, folder, **settings))[1]) * each


@needs_cgroups
def test_child_processes_share_one_memory_limit(tmp_path):
    """Four processes, each under the per-process cap, may not hold more than the kernel's memory between them."""
    limit = 3 * GiB
    held = held_by_children(tmp_path, 4, GiB, memory_limit=limit, disk_limit=64 * MiB)
    assert 0 < held <= limit


def test_system_v_shared_memory_is_capped(tmp_path):
    """A segment belongs to no process: it would outlive the kernel's limits."""
    printed = run("""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("large", libc.shmget(0, 64 * 2**20, 0o1600), ctypes.get_errno())
print("small", libc.shmget(0, 2**19, 0o1600) >= 0)
""", tmp_path)
    assert "large -1 22" in printed and "small True" in printed


@needs_cgroups
def test_the_kernels_processes_share_its_cores(tmp_path):
    """Sixteen spinning processes (the demo class's attack) get one core's time between
    them (``cpu_cores``), not every core."""
    printed = run(AFTER_THE_TESTS["attack-cpu-spin"], tmp_path, cpu_cores=1.0)
    assert float(re.search(r"cpu per wall second: ([\d.]+)", printed)[1]) < 1.3, printed


def test_keyrings_and_new_namespaces_are_refused(tmp_path):
    """Keyrings are in no namespace (a key would reach the next kernel); a user namespace of
    its own would let a kernel mount a tmpfs no limit holds."""
    printed = run("""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(248, b"user", b"left-for-the-next-kernel", b"secret", 6, -3)  # add_key
print("add_key", key, ctypes.get_errno())
print("unshare", libc.unshare(0x10000000 | 0x20000), ctypes.get_errno())  # a user and mount namespace
import subprocess
done = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
print("unshare command", done.returncode)
""", tmp_path)
    assert "add_key -1 1" in printed and "unshare -1 1" in printed
    assert "unshare command 0" not in printed


def test_the_kernel_cannot_write_its_own_memory_through_proc(tmp_path):
    """Writing /proc/self/mem changes what no audit hook sees (an immutable bytes object)."""
    printed = run("""
for mode in ("r+b", "rb"):
    try:
        open("/proc/self/mem", mode).close()
        print(mode, "opened")
    except OSError as error:
        print(mode, type(error).__name__)
""", tmp_path)
    assert "r+b PermissionError" in printed
    if os.geteuid() == 0:  # a root grader's kernel is another user, and not dumpable: not even reading
        assert "rb PermissionError" in printed


def test_the_kernel_holds_no_descriptor_of_a_grader_file(tmp_path, capfd):
    """Its standard error is a pipe the grader reads with a cap, never the worker's log file:
    a kernel cannot fill the log, nor read back what another kernel wrote there."""
    fork_server.stop()  # a zygote started now writes to the error stream this test reads
    printed = run("""
import os
for fd in sorted(int(name) for name in os.listdir("/proc/self/fd")):
    try:
        print(fd, os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
os.write(2, b"\\x1b[2J" + b"x" * (2 * 2**20) + b"\\n")
""", tmp_path)
    targets = re.findall(r"^\d+ (.*)$", printed, re.MULTILINE)
    assert targets and all(target.startswith(("pipe:", "socket:", "anon_inode:", "/dev/null", "/tmp/"))
                           or target == "/proc/self/fd" for target in targets), targets
    logged = capfd.readouterr().err
    assert "\x1b[2J" not in logged and "\\x1b[2J" in logged, logged[:200]
    assert len(logged) <= fork_server.LOG_BYTES + 4096
