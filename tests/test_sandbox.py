"""The bubblewrap sandbox and the kernel's resource limits, each against the fault it is
for, with a few lines of Python in place of a kernel (fast, and no grading involved)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from attacks import HARM_ATTACKS
from autograder.sandbox import bwrap
from autograder.sandbox.limits import GiB, Limits
from conftest import grading_processes
from course import REPO


def sandboxed(tmp_path: Path, code: str, limits: Limits = Limits()) -> subprocess.CompletedProcess:
    """Run ``code`` as a grading kernel would be run: in the sandbox, limits applied."""
    user = bwrap.sandbox_user()
    if os.geteuid() == 0:
        os.chown(tmp_path, user, user)
    inner = [sys.executable, "-c", "from autograder.sandbox import bwrap\n"
             "from autograder.sandbox.limits import Limits\n"
             "Limits.from_environment().apply(sandboxed=True)\n"
             f"bwrap.step_down({user})\n" + textwrap.dedent(code)]
    command = bwrap.command(inner, tmp_path, [tmp_path], {"PATH": "/usr/bin", "HOME": "/tmp",
                                                          **limits.to_environment()})
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_bubblewrap_works_here():
    assert bwrap.unavailable_reason() is None, "install bubblewrap: the grading tests run sandboxed"


def test_only_the_scratch_folder_is_visible_and_writable(tmp_path):
    done = sandboxed(tmp_path, f"""
        import os, pathlib
        print(sorted(os.listdir("{REPO}")))
        for hidden in ("{REPO}/source", "{REPO}/release", "{REPO}/nbgrader_config.py", "{Path.home()}/.bashrc"):
            print(hidden, os.path.exists(hidden))
        print("demo class", os.listdir("{REPO}/autograder/demo_class"))
        pathlib.Path("mine.txt").write_text("ok")
        try:
            pathlib.Path("{sys.prefix}/evil.txt").write_text("x")
        except OSError as error:
            print("environment", type(error).__name__)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert set(eval(lines[0])) <= {".venv", "autograder"}
    assert all(line.endswith(" False") for line in lines[1:5])
    assert lines[5] == "demo class []" and lines[6] == "environment OSError"
    assert (tmp_path / "mine.txt").read_text() == "ok"


def test_no_network(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        done = sandboxed(tmp_path, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=2)
                print("connected")
            except OSError as error:
                print("refused", type(error).__name__)
        """)
        try:
            server.accept()
            reached = True
        except TimeoutError:
            reached = False
    assert done.stdout.startswith("refused") and not reached


def test_processes_die_with_the_sandbox(tmp_path):
    done = sandboxed(tmp_path, """
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(4242)"])
            os._exit(0)
        time.sleep(0.5)
        print("daemon started")
    """)
    assert done.stdout.strip() == "daemon started"
    assert grading_processes() == []


def test_memory_cap(tmp_path):
    done = sandboxed(tmp_path, """
        try:
            hog = bytearray(2 * 2**30)
            print("allocated")
        except MemoryError:
            print("refused")
    """, Limits(memory_bytes=GiB))
    assert done.stdout.strip() == "refused"


def test_cpu_time_cap(tmp_path):
    done = sandboxed(tmp_path, "while True: pass", Limits(cpu_seconds=1))
    # bubblewrap exits with 128 + the signal that ended what it ran
    assert done.returncode in (128 + signal.SIGXCPU, 128 + signal.SIGKILL)


def test_process_cap(tmp_path):
    done = sandboxed(tmp_path, HARM_ATTACKS["attack-fork-bomb"], Limits(processes=20))
    assert "fork refused" in done.stdout
    assert 0 < int(done.stdout.split("children:")[1]) < 20


def test_file_size_cap(tmp_path):
    done = sandboxed(tmp_path, """
        try:
            open("big", "wb").write(bytes(2 * 2**20))
            print("written")
        except OSError as error:
            print("refused", error.errno)
    """, Limits(file_bytes=2**20))
    assert done.stdout.startswith("refused")
