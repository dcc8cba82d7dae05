"""Shared fixtures, and the answer-suite table printed at the end of a test run."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers import leftovers

# What the fixtures below use (torch, nbgrader, the grader) is imported where they run: a
# conftest that imported it would cost `make test-fast`'s xdist controller, which runs no
# test, 8 s of imports before its workers start.
if TYPE_CHECKING:
    from autograder.grading.pipeline import Run
    from autograder.reports.write import ReportFiles

A01 = "01-inplace-basics"
NOTEBOOK_TIMEOUT = 90
CELL_TIMEOUT = 15


def pytest_configure(config):
    """Each test process sees only what it started (``tests.helpers.leftovers``), and pytest's
    own temporary folders stay in the system's temporary directory, where they were. (The
    parallel run's controller runs no test: it keeps the machine's.)"""
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        return
    root = os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    leftovers.isolate(Path(root))


def pytest_collection_finish(session):
    """Tests run torch on tiny tensors, several processes at a time: one thread each in
    this process (two OpenMP threads per process on a loaded two-core machine made the
    answer suite 2x slower). The test modules imported torch, if they need it."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


# Session fixtures too costly to make once per test process: their tests share one.
SHARED_BY_ONE_PROCESS = ("graded",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """For the parallel runs (``--dist loadgroup``): tests that share a costly session
    fixture, or a module's tests that share a module-scoped one, go to one test process,
    so that it is made once; a lecture's cells (nbval) go to one process, in order, since
    they run in one kernel."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        shared = [name for name in SHARED_BY_ONE_PROCESS if name in definitions]
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared[0]))
        elif item.path.suffix == ".ipynb" or any(found[-1].scope == "module" for found in definitions.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def fast(workers: int = 2, **more) -> dict:
    """Options for a quick run: short time limits (long enough for a loaded machine), no
    progress bar; ``more`` settings on top."""
    return {"quiet": True, "overrides": {"Execute": {"timeout": CELL_TIMEOUT},
                                         "GradingSettings": {"workers": workers, "notebook_timeout": NOTEBOOK_TIMEOUT,
                                                             **more}}}
# What no submission may change: the course's own files, other students' folders, this
# repository's sources. (The gradebook is checked through the scores it holds.)
PROTECTED = ("nbgrader_config.py", "source", "submitted")
PROTECTED_IN_REPO = ("source", "release", "autograder", "nbgrader_config.py", "pyproject.toml")


# Folders git cannot hold, made in the demo class at run time: names a TA's course may
# have (graded like any other) or that cannot be used (refused), each with the all-right 01.
ODD_NAMES = {"what?": "graded", "star*%20#": "graded", "name with spaces": "graded", "a[1]": "submission refused",
             "new\nline": "submission refused", "\u202eevil": "submission refused", ".hidden": "submission refused"}

# Students of the editions in other languages, made at run time from the demo class's
# English students with the catalogues as they are: their notebooks differ only in Markdown.
TRANSLATED_STUDENTS = {"korean-partial": ("ko", "partial"), "japanese-all-right": ("ja", "all-right")}


@dataclass(frozen=True)
class GradedDemo:
    """The demo class graded once, sandboxed, with what the harm attacks could reach watched."""

    course: Path
    run: Run
    outputs: ReportFiles
    seconds: float
    connections: list[str]
    changed_files: list[str]
    surviving_processes: list[str]
    leftover_folders: list[str]  # temporary folders the grading made and did not remove
    victim: tuple[str, int]  # the private file's content and mode after grading


@pytest.fixture(scope="session")
def graded(tmp_path_factory) -> GradedDemo:
    from autograder.cli import demo_course
    from autograder.grading.pipeline import Options, grade_course
    from autograder.reports.write import write_reports
    from tests.helpers.assignments import REPO
    from tests.helpers.attacks import PORT_FILE, VICTIM

    course = demo_course(REPO, tmp_path_factory.mktemp("demo") / "course")
    _add_links_and_odd_folders(course / "submitted")
    _add_translated_students(course / "submitted")
    victim = Path(VICTIM)
    victim.write_text("private")
    victim.chmod(0o600)
    with _LoopbackListener() as listener:
        (course / "submitted" / "attack-network" / A01 / PORT_FILE).write_text(str(listener.port))
        before = _digests(course, PROTECTED) | _digests(REPO, PROTECTED_IN_REPO)
        temporary_before = leftovers.grading_folders()
        started = time.monotonic()
        run = grade_course(course, Options(**fast()))
        seconds = time.monotonic() - started
        after = _digests(course, PROTECTED) | _digests(REPO, PROTECTED_IN_REPO)
    outputs = write_reports(course, run.records, run.settings, run.graded_now)
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    victim_after = (victim.read_text(), stat.S_IMODE(victim.stat().st_mode))
    victim.unlink()
    leftover = sorted(map(str, leftovers.grading_folders() - temporary_before))
    return GradedDemo(course, run, outputs, seconds, listener.connections, changed, leftovers.grading_processes(),
                      leftover, victim_after)


def _add_links_and_odd_folders(submitted: Path) -> None:
    right = submitted / "all-right" / A01 / f"{A01}.ipynb"
    link = submitted / "attack-symlinked-notebook" / A01
    link.mkdir(parents=True)
    (link / f"{A01}.ipynb").symlink_to(Path("..", "..", "..", "source", A01, f"{A01}.ipynb"))
    (submitted / "attack-symlinked-folder").mkdir()
    (submitted / "attack-symlinked-folder" / A01).symlink_to(Path("..", "..", "source", A01))
    special = submitted / "attack-special-files" / A01
    shutil.copytree(submitted / "partial" / A01, special)
    (special / "mem").symlink_to("/proc/self/mem")
    (special / "grades.db").symlink_to(Path("..", "..", "..", "gradebook.db"))
    os.mkfifo(special / "blocks.ipynb")
    for name in ODD_NAMES:
        (submitted / name / A01).mkdir(parents=True)
        shutil.copy(right, submitted / name / A01)


def _add_translated_students(submitted: Path) -> None:
    import nbformat

    from autograder.translation import build
    from tests.helpers.assignments import REPO

    document = Path("source", A01, f"{A01}.ipynb")
    for student, (language, english) in TRANSLATED_STUDENTS.items():
        notebook = build.translate_file(submitted / english / A01 / f"{A01}.ipynb", language, REPO, document)
        (submitted / student / A01).mkdir(parents=True)
        nbformat.write(notebook, submitted / student / A01 / f"{A01}.ipynb")


def _digests(root: Path, names: tuple[str, ...]) -> dict[str, str]:
    paths = [p for name in names for p in ([root / name] if (root / name).is_file() else (root / name).rglob("*"))]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths
            if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts}


class _LoopbackListener:
    """A TCP server on 127.0.0.1 that records every connection made to it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.server.close()

    def _accept(self):
        while not self._stop.is_set():
            try:
                connection, address = self.server.accept()
            except TimeoutError:
                continue
            self.connections.append(f"{address[0]}:{address[1]}")
            connection.close()

_VERDICTS: list[tuple[str, str, str | None, str | None]] = []
VERDICT = "answer verdict"  # the name test_answers' verdicts travel under, from any test worker
SCREENSHOTS = Path(__file__).resolve().parent.parent / "browser-screenshots"  # test_browser's, a folder per run
_STARTED = time.time()


@pytest.fixture
def answer_verdicts(request):
    """How test_answers records (function, answer, visible failure, hidden failure): on the
    test's report, which reaches the process that prints the table at the end."""
    return lambda *verdict: request.node.user_properties.append((VERDICT, verdict))


def pytest_runtest_logreport(report):
    if report.when == "call":
        _VERDICTS.extend(tuple(value) for name, value in report.user_properties if name == VERDICT)


def pytest_terminal_summary(terminalreporter):
    shots = sorted(folder for folder in SCREENSHOTS.glob("*") if folder.stat().st_mtime >= _STARTED)
    for folder in shots:
        terminalreporter.section("browser screenshots")
        terminalreporter.write_line(f"what the student and the TA saw: {folder}")
    if not _VERDICTS:
        return
    write = terminalreporter.write_line
    terminalreporter.section("answer suite: every answer against visible and hidden tests")
    write(f"{'function':<16} {'answer':<28} {'visible':<8} {'hidden':<8} first failing check")
    for function, answer, visible, hidden in sorted(_VERDICTS):
        reason = (hidden or visible or "").splitlines()[0][:90] if (hidden or visible) else ""
        write(
            f"{function:<16} {answer:<28} {'pass' if visible is None else 'FAIL':<8} "
            f"{'pass' if hidden is None else 'FAIL':<8} {reason}"
        )


@pytest.fixture(scope="module")
def no_zygote_left():
    """The zygote this process started for a module's kernels ends with the module (its
    tests ask for it with ``pytest.mark.usefixtures``)."""
    from autograder.sandbox import fork_server

    yield
    fork_server.stop()


@pytest.fixture(scope="session")
def empty_gradebook(tmp_path_factory) -> Path:
    """An empty nbgrader gradebook, made once per session; tests copy it."""
    import autograder.nbgrader_api  # noqa: F401 (whose import stamps new gradebooks as the grader does)
    from nbgrader.api import Gradebook

    path = tmp_path_factory.mktemp("template") / "gradebook.db"
    Gradebook(f"sqlite:///{path}").close()
    return path
