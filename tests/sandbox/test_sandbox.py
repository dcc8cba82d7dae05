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

import pytest

from tests.helpers.attacks import HARM_ATTACKS
from autograder.settings import GradingSettings
from autograder.sandbox import bwrap, fork_server, provisioner
from autograder.sandbox.limits import GiB, Limits
from tests.helpers.leftovers import grading_processes
from tests.helpers.assignments import REPO

pytestmark = pytest.mark.slow  # each test starts a sandbox, and needs bubblewrap

USER_NAMESPACE = pytest.param(True, id="as-a-grader-who-is-not-root")
AS_THIS_USER = pytest.param(None, id="as-this-user")


def sandboxed(tmp_path: Path, code: str, limits: Limits = Limits(),
              user_namespace: bool | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` as a grading kernel runs student code: in the sandbox, set up and
    locked down as ``autograder.sandbox.kernel`` does, in a copy of the assignment folder
    (``tmp_path / "assignment"``), with ``tmp_path / "sockets"`` as the sockets' folder.
    ``user_namespace`` sets it up as it is for a grader who is not root, even for root."""
    assignment, sockets = tmp_path / "assignment", tmp_path / "sockets"
    assignment.mkdir(exist_ok=True)
    sockets.mkdir(mode=0o700, exist_ok=True)
    in_namespace = user_namespace if user_namespace is not None else os.geteuid() != 0
    step_down = None if in_namespace else bwrap.sandbox_user()
    inner = [sys.executable, "-c", "import os, shutil\n"
             "from pathlib import Path\n"
             "from autograder.sandbox import bwrap, kernel\n"
             "from autograder.sandbox.limits import Limits\n"
             f"kernel.set_up(Limits.from_environment(), {step_down})\n"
             f"kernel.lock_down(Path(bwrap.SOCKETS), {step_down})\n"
             "shutil.copytree(bwrap.ASSIGNMENT, bwrap.WORKDIR)\n"
             "os.chdir(bwrap.WORKDIR)\n" + textwrap.dedent(code)]
    command = bwrap.command(inner, assignment, sockets, {"PATH": "/usr/bin", "HOME": "/tmp", **limits.to_environment()},
                            user_namespace=in_namespace)
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_bubblewrap_works_here():
    assert bwrap.unavailable_reason() is None, "install bubblewrap: the grading tests run sandboxed"


@pytest.mark.parametrize("user_namespace", [AS_THIS_USER, USER_NAMESPACE])
def test_nothing_of_the_course_is_visible_and_nothing_written_reaches_the_disk(tmp_path, user_namespace):
    (tmp_path / "assignment").mkdir()
    (tmp_path / "assignment" / "data.csv").write_text("1,2")
    done = sandboxed(tmp_path, f"""
        import os, pathlib
        try:
            print(sorted(os.listdir("{REPO}")))
        except PermissionError:  # Landlock: only the folders the sandbox binds may be read
            print([])
        for hidden in ("{REPO}/source", "{REPO}/release", "{REPO}/nbgrader_config.py", "{Path.home()}/.bashrc"):
            print(hidden, os.path.exists(hidden))
        print("working folder", os.getcwd(), sorted(os.listdir()))
        pathlib.Path("mine.txt").write_text("ok")
        for elsewhere in ("{sys.prefix}/evil.txt", "/assignment/evil.txt", "/sockets/evil.txt", "/sockets/link",
                          "/evil.txt", "/dev/evil.txt", "/usr/evil.txt"):
            try:
                if elsewhere.endswith("link"):
                    os.symlink("{REPO}/source", elsewhere)
                else:
                    pathlib.Path(elsewhere).write_text("x")
                print(elsewhere, "written")
            except OSError as error:
                print(elsewhere, type(error).__name__)
    """, user_namespace=user_namespace)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert set(eval(lines[0])) <= {".venv", "autograder"}
    assert all(line.endswith(" False") for line in lines[1:5])
    assert lines[5] == f"working folder {bwrap.WORKDIR} ['data.csv']"
    assert all(line.endswith(" OSError") or line.endswith("PermissionError") for line in lines[6:]), lines[6:]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["assignment", "data.csv", "sockets"]


def test_tmp_is_capped_in_bytes_and_in_files(tmp_path):
    done = sandboxed(tmp_path, """
        import os
        try:
            with open("/tmp/big", "wb") as big:
                for _ in range(64):
                    big.write(bytes(2**20))
        except OSError as error:
            print("bytes refused at", os.path.getsize("/tmp/big") // 2**20, "MiB:", error.strerror)
        os.remove("/tmp/big")
        made = 0
        try:
            for index in range(10_000):
                open(f"/tmp/empty-{index}", "w").close()
                made += 1
        except OSError as error:
            print("files refused after", made, ":", error.strerror)
    """, Limits(disk_bytes=16 * 2**20, files=200))
    lines = done.stdout.splitlines()
    assert lines[0].startswith("bytes refused at 1") and "No space left" in lines[0], done
    made = int(lines[1].split("after ")[1].split()[0])
    assert 150 < made < 200, lines[1]


@pytest.mark.parametrize("user_namespace", [AS_THIS_USER, USER_NAMESPACE])
def test_no_other_memory_backed_folder_takes_files(tmp_path, user_namespace):
    done = sandboxed(tmp_path, """
        try:
            open("/dev/shm/big", "wb").write(bytes(4 * 2**20))
            print("written")
        except OSError as error:
            print("refused", error.strerror)
        open("/dev/null", "w").write("devices still work")
    """, user_namespace=user_namespace)
    assert done.stdout.strip() == "refused No space left on device", done


def test_the_tmpfs_counts_against_the_memory_cap(tmp_path):
    """Files in /tmp live in memory: what the kernel may allocate is what they leave over."""
    done = sandboxed(tmp_path, """
        with open("/tmp/held", "wb") as held:
            held.write(bytes(200 * 2**20))
        try:
            hog = bytearray(900 * 2**20)
            print("allocated")
        except MemoryError:
            print("refused")
    """, Limits(memory_bytes=GiB, disk_bytes=256 * 2**20))
    assert done.stdout.strip() == "refused", done


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
    fork_server.stop()  # an earlier test's zygote, which may still serve this process
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


def test_grading_refuses_to_run_unsandboxed_unless_asked(monkeypatch, tmp_path):
    from autograder.grading import pipeline

    monkeypatch.setattr(bwrap, "unavailable_reason", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(SystemExit, match="cannot grade in a sandbox here: bubblewrap .* --no-sandbox"):
        pipeline.grade_course(tmp_path, pipeline.Options())
    assert pipeline.sandbox_problem(GradingSettings(sandbox=False)) == (
        "the sandbox was switched off (GradingSettings.sandbox, --no-sandbox)")


def test_what_is_mounted_under_tmp_survives_its_cap(tmp_path, monkeypatch):
    """A course (its Python environment) may live under /tmp: capping the kernel's own /tmp
    must not hide it."""
    environment = tmp_path / "venv"
    environment.mkdir()
    (environment / "marker").write_text("here")
    folders = bwrap.python_folders()
    monkeypatch.setattr(bwrap, "python_folders", lambda: [*folders, environment])
    done = sandboxed(tmp_path, f"""
        print(open("{environment}/marker").read())
    """)
    assert done.stdout.strip() == "here", done


def test_the_kernel_sees_the_assignment_without_its_notebooks(tmp_path):
    """nbgrader puts the hidden tests back in the notebooks of the folder it runs the kernel
    in (and a submission's other notebooks lie there graded): the kernel gets the rest."""
    folder = tmp_path / "autograded" / "foo" / "ps1"
    (folder / "data").mkdir(parents=True)
    for name in ("p1.ipynb", "p2.ipynb", "data/old.ipynb", "data.csv", "data/x.txt", "timestamp.txt"):
        (folder / name).write_text(name)
    seen = provisioner.kernel_view(folder, tmp_path / "kernel" / "assignment")
    assert sorted(str(path.relative_to(seen)) for path in seen.rglob("*")) == [
        "data", "data.csv", "data/x.txt", "timestamp.txt"]


def test_a_guard_without_torch_imports_no_torch_and_still_restores_the_rest():
    """An assignment that never names torch (nbgrader's own scenarios): the kernel starts
    without importing it (most of a kernel's start), and the guard keeps the rest."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import builtins, json, sys
        from IPython.core.interactiveshell import InteractiveShell
        from autograder.sandbox import guard
        guard.install(InteractiveShell.instance(), torch=False)
        original = builtins.sorted
        builtins.sorted = lambda *args: []
        report = json.loads(guard.restore())
        print("torch" in sys.modules, builtins.sorted is original, report["tampered"])
    """)], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "[]"], done.stderr
