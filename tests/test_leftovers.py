"""The test run's own leftover checks (``tests/helpers/leftovers.py``): they see what this
test process started, however it escaped, and nothing another test process started."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers.assignments import REPO
from tests.helpers.leftovers import LOCK, commands, grading_folders, grading_processes, isolate

# A child that double-forks a sleeper and exits at once: the sleeper's parent is gone.
ORPHAN = """
import os, sys
if os.fork() == 0:
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(4247)"])
"""
# Another test process's view, as a sibling of the one that started the sleeper.
SIBLING = "from tests.helpers.leftovers import grading_processes; print(grading_processes())"


def _wait_for(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_an_orphan_is_seen_by_the_process_that_started_it_and_by_no_other():
    subprocess.run([sys.executable, "-c", ORPHAN], check=True)
    try:
        assert _wait_for(lambda: [c for c in grading_processes() if "sleep(4247)" in c])
        sibling = subprocess.run([sys.executable, "-c", SIBLING], cwd=REPO, capture_output=True, text=True,
                                 check=True)
        assert sibling.stdout.strip() == "[]"
    finally:
        for pid in _sleepers():
            os.kill(pid, 9)
            os.waitpid(pid, 0)  # this process's child now: the subreaper reaps it
    assert not [c for c in grading_processes() if "sleep(4247)" in c]


def test_each_test_process_has_a_temporary_directory_of_its_own_that_its_children_use(tmp_path):
    own = Path(tempfile.gettempdir())
    assert own.name.startswith("tests-") and own.parent == Path(os.environ["PYTEST_DEBUG_TEMPROOT"])
    made = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.mkdtemp(prefix='grading-worker-'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    try:
        assert Path(made) in grading_folders() and Path(made).parent == own
    finally:
        os.rmdir(made)
    assert not tmp_path.is_relative_to(own)  # pytest's own folders stay where they were


def test_the_folders_of_test_processes_that_ended_are_removed_and_no_other(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", tempfile.gettempdir())  # put back after the test
    monkeypatch.setenv("TMPDIR", os.environ["TMPDIR"])
    for name in ("tests-ended", "tests-alive", "tests-not-ours"):
        (tmp_path / name).mkdir()
    (tmp_path / "tests-ended" / LOCK).touch()
    alive = os.open(tmp_path / "tests-alive" / LOCK, os.O_CREAT | os.O_RDWR)
    holder = subprocess.Popen([sys.executable, "-c", f"import fcntl, time; fcntl.flock({alive}, fcntl.LOCK_EX); "
                               "print(flush=True); time.sleep(60)"], pass_fds=(alive,), stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()  # it holds the lock
        made = isolate(tmp_path)
    finally:
        holder.kill()
        holder.wait()
        os.close(alive)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["tests-alive", "tests-not-ours", made.name])
    assert os.environ["TMPDIR"] == str(made) and made.stat().st_mode & 0o7777 == 0o1777


@pytest.fixture(scope="module")
def made_once_per_module() -> int:
    return os.getpid()


def test_the_tests_sharing_a_costly_fixture_run_in_one_process(request, made_once_per_module):
    """``--dist loadgroup`` sends a group's tests to one process, by the group written after
    the node id (conftest's ``pytest_collection_modifyitems`` names the groups): a pytest
    whose node ids cannot take it would make ``graded`` in both processes at once."""
    if not request.config.getoption("loadgroup", default=False):
        pytest.skip("not a parallel run by groups")
    assert request.node.nodeid.endswith("@tests/test_leftovers.py")


def _sleepers() -> list[int]:
    return [pid for pid, command in commands().items() if "sleep(4247)" in command]
