"""The student's progress board: how far the visible tests say they are, kept over time.

``board()`` (in ``notebooks/00-start-here.ipynb``) is a widget with a *Check my progress*
button. Pressed, it finds the assignment notebooks in the student's course folder, runs
each as saved in a fresh kernel, and shows the points of every graded test cell that passed,
per function, with a level and badges. Only the student's own notebooks run, and they hold
the visible tests alone (a notebook that holds hidden tests is an instructor's version, and
is never run): passing here is not a grade, the hidden tests decide it.

Where assignments are, seen from the course folder (the edition's folder, which ``make lab``
serves): the student versions in ``release/<assignment>/``, and what nbgrader's exchange
fetched, in ``<assignment>/`` or, when the student's nbgrader includes the course in the
path, in ``<course id>/<assignment>/``. An assignment found in two places counts once: the
copy saved last is the one the student is working on.

Each check is kept in a JSON file in the student's data folder
(``$XDG_DATA_HOME/pytorch-inplace/progress.json``, by default
``~/.local/share/pytorch-inplace/progress.json``), outside the course folder, so it is
never handed in, committed or merged over by an update; the board shows the last checks of
the folder it looks at.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import ipywidgets as widgets
import nbformat

# nbgrader and nbclient are imported where a check needs them, not here: they take a second
# or two to import, and showing the board (00-start-here's cell) must not.

COURSE_ID = "pytorch-inplace"  # the course's nbgrader course id (the course's nbgrader_config.py)
# Where assignment folders are, relative to the course folder (see the module's docstring).
ASSIGNMENT_HOMES = ("release", ".", COURSE_ID)
# Folders of a course that never hold a student's assignment: the lectures, and nbgrader's
# instructor folders (source/ holds the hidden tests: never even listed).
NOT_ASSIGNMENTS = frozenset({"notebooks", "source", "submitted", "autograded", "feedback"})
STORE_NAME = Path("pytorch-inplace", "progress.json")
RUNS_KEPT = 200  # checks kept in the store, across every course folder
RUNS_SHOWN = 5  # earlier checks the board lists
WORKERS = max(1, min(4, os.cpu_count() or 1))  # notebooks run at once (a kernel each, torch imported)

POINTS_PER_LEVEL = 10
LEVELS = ("Out-of-place", "Trailing underscore", "View keeper", "Version counter", "Storage sleuth",
          "In-place master")

NOT_A_GRADE = ("Only the visible tests run here: passing them is not a grade. Hidden tests, with other "
               "shapes, dtypes and memory layouts, run when your notebook is graded.")


@dataclass(frozen=True)
class CellResult:
    """One graded test cell of a student's notebook, after a run: ``error`` is None when it
    passed (ran to its end, no error, nothing on stderr, as nbgrader scores it)."""

    assignment: str
    notebook: str  # its path, relative to the course folder
    function: str
    points: float
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FunctionScore:
    """A graded function's points from its visible tests. ``status`` is ``passes``,
    ``fails`` or ``not started`` (its test stops at the stub's ``NotImplementedError``)."""

    assignment: str
    function: str
    notebook: str
    earned: float
    possible: float
    status: str
    message: str = ""


@dataclass(frozen=True)
class Level:
    number: int
    name: str
    points_in: float  # points earned since this level began
    points_to_next: float | None  # to the next level; None at the top

    @property
    def bar(self) -> tuple[int, int]:
        """(value, max) of the level bar: the points into this level, of ``POINTS_PER_LEVEL``."""
        return (POINTS_PER_LEVEL if self.points_to_next is None else int(self.points_in)), POINTS_PER_LEVEL


@dataclass(frozen=True)
class Badge:
    name: str
    how: str  # how it is earned, as the board shows it
    earned: Callable[[Sequence[FunctionScore]], bool]


def _passes(scores: Iterable[FunctionScore]) -> bool:
    scores = list(scores)
    return bool(scores) and all(score.status == "passes" for score in scores)


def _in_place(score: FunctionScore) -> bool:
    return score.function.endswith("_")  # PyTorch's convention, which the course's names follow


def _total(scores: Sequence[FunctionScore]) -> tuple[float, float]:
    return sum(score.earned for score in scores), sum(score.possible for score in scores)


BADGES = (
    Badge("First steps", "one function passes its visible tests",
          lambda scores: any(score.status == "passes" for score in scores)),
    Badge("No allocation", "every in-place function (name ending in _) passes its visible tests",
          lambda scores: _passes(score for score in scores if _in_place(score))),
    Badge("Gradient-safe", "every function of 02-autograd-safety passes its visible tests",
          lambda scores: _passes(score for score in scores if score.assignment == "02-autograd-safety")),
    Badge("Skip connection", "every function of 05-residuals passes its visible tests",
          lambda scores: _passes(score for score in scores if score.assignment == "05-residuals")),
    Badge("Halfway", "half of all the visible points",
          lambda scores: _total(scores)[1] > 0 and 2 * _total(scores)[0] >= _total(scores)[1]),
    Badge("All visible tests", "every function of every assignment passes its visible tests", _passes),
)


@dataclass
class Check:
    """One press of the button: when, which folder, every function's score, and what could not be run."""

    time: str
    folder: str
    functions: list[FunctionScore]
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return _total(self.functions)[0]

    @property
    def possible(self) -> float:
        return _total(self.functions)[1]

    def to_json(self) -> dict:
        level = level_for(self.total)
        return {"time": self.time, "folder": self.folder, "total": self.total, "possible": self.possible,
                "level": level.number, "badges": [badge.name for badge in earned_badges(self.functions)],
                "functions": [asdict(score) for score in self.functions], "problems": self.problems}

    @classmethod
    def from_json(cls, data: dict) -> Check:
        return cls(data["time"], data["folder"], [FunctionScore(**score) for score in data["functions"]],
                   list(data.get("problems", [])))


# ---- scores, levels, badges: pure functions of the recorded results ----


def scores(results: Iterable[CellResult]) -> list[FunctionScore]:
    """Points per function, in the order the results come (a function's test cells summed)."""
    grouped: dict[tuple[str, str], list[CellResult]] = {}
    for result in results:
        grouped.setdefault((result.assignment, result.function), []).append(result)
    found = []
    for (assignment, function), cells in grouped.items():
        earned = sum((cell.points for cell in cells if cell.passed), 0.0)
        errors = [cell.error for cell in cells if not cell.passed]
        if not errors:
            status = "passes"
        elif all(error.startswith("NotImplementedError") for error in errors):
            status = "not started"
        else:
            status = "fails"
        found.append(FunctionScore(assignment, function, cells[0].notebook, earned,
                                   sum((cell.points for cell in cells), 0.0), status, errors[0] if errors else ""))
    return found


def level_for(points: float) -> Level:
    """Every ``POINTS_PER_LEVEL`` points a level, named in ``LEVELS``; the last has no end."""
    number = min(int(points // POINTS_PER_LEVEL), len(LEVELS) - 1)
    points_in = points - number * POINTS_PER_LEVEL
    top = number == len(LEVELS) - 1
    return Level(number, LEVELS[number], points_in, None if top else POINTS_PER_LEVEL - points_in)


def earned_badges(functions: Sequence[FunctionScore]) -> list[Badge]:
    return [badge for badge in BADGES if badge.earned(functions)]


# ---- finding and running the student's notebooks ----


@dataclass(frozen=True)
class AssignmentNotebook:
    assignment: str
    path: Path


def find_notebooks(course_folder: Path | str = "..",
                   homes: Sequence[str] = ASSIGNMENT_HOMES) -> list[AssignmentNotebook]:
    """The notebooks of ``<home>/<assignment>/`` under ``course_folder`` that hold graded test
    cells, newest first; of two with the same assignment and name, the one saved last."""
    root = Path(course_folder).expanduser()
    newest: dict[tuple[str, str], Path] = {}
    for home in homes:
        for folder in sorted(path for path in (root / home).glob("*/") if _may_hold_assignment(path)):
            for path in sorted(folder.glob("*.ipynb")):
                key = (folder.name, path.name)
                if key in newest and newest[key].stat().st_mtime >= path.stat().st_mtime:
                    continue
                try:
                    notebook = nbformat.read(path, as_version=4)
                except (OSError, ValueError):
                    notebook = None  # named by check() when it runs it
                if notebook is None or any(_is_test(cell) for cell in notebook.cells):
                    newest[key] = path
    found = [AssignmentNotebook(assignment, path) for (assignment, _), path in newest.items()]
    return sorted(found, key=lambda item: (-item.path.stat().st_mtime, item.assignment, item.path.name))


def _may_hold_assignment(folder: Path) -> bool:
    return folder.is_dir() and folder.name not in NOT_ASSIGNMENTS and not folder.name.startswith(".")


def _is_test(cell) -> bool:
    """An autograded test cell: graded, code, not an answer (nbgrader's own tests)."""
    from nbgrader import utils

    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def course_settings(course_folder: Path | str = ".."):
    """nbgrader's configuration from the course folder's ``nbgrader_config.py`` (empty
    without one): the per-cell timeout, the kernel's arguments and the hidden-test markers
    are the course's, as the Validate button uses them."""
    from traitlets.config import Config, PyFileConfigLoader

    path = Path(course_folder) / "nbgrader_config.py"
    if not path.is_file():
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def cell_results(notebook: nbformat.NotebookNode, assignment: str, name: str) -> list[CellResult]:
    """The graded test cells of a notebook that has run, each with its first error, if any."""
    results = []
    for cell in notebook.cells:
        if _is_test(cell):
            grade_id = cell.metadata.nbgrader["grade_id"]
            function = grade_id.removeprefix("test_")
            results.append(CellResult(assignment, name, function, float(cell.metadata.nbgrader.get("points", 0)),
                                      _failure(cell)))
    return results


def _failure(cell) -> str | None:
    """Why a test cell failed, in a line, or None when it passed: it must have run, and
    written no error and nothing to stderr (nbgrader scores stderr as a failure)."""
    if cell.get("execution_count") is None:
        return "did not run (the kernel stopped before this cell)"
    for output in cell.outputs:
        if output.output_type == "error":
            return _line(f"{output.ename}: {output.evalue}" if output.evalue else output.ename)
        if output.output_type == "stream" and output.name == "stderr":
            return _line(f"wrote to stderr: {output.text}")
    return None


def _line(text: str, limit: int = 200) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


async def _run_one(path: Path, settings) -> nbformat.NotebookNode:
    """The notebook as saved, run top to bottom in a fresh kernel in its own folder,
    continuing after errors; outputs it was saved with are cleared first."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    from nbgrader.preprocessors import Execute

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None  # a saved pass must not count
    execute = Execute(config=settings)  # the course's timeout and kernel arguments, as Validate runs
    kernel = notebook.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(notebook, timeout=execute.timeout, kernel_name=kernel, allow_errors=True,
                            interrupt_on_timeout=True, extra_arguments=list(execute.extra_arguments),
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        # The kernel's own log lines would land under the board's cell: students need none of them.
        await client.async_execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except DeadKernelError:
        pass  # the cells it did not reach have no execution count: they fail
    return notebook


def _hidden_tests_in(notebook: nbformat.NotebookNode, settings) -> bool:
    from nbgrader.preprocessors import ClearHiddenTests

    marker = ClearHiddenTests(config=settings).begin_test_delimeter
    return any(marker in cell.source for cell in notebook.cells)


def check(course_folder: Path | str = "..", store: Path | str | None = None, homes: Sequence[str] = ASSIGNMENT_HOMES,
          on_progress: Callable[[int, int, str], None] | None = None) -> Check:
    """Run the visible tests of every assignment notebook in ``course_folder``, record the
    check in ``store`` (``default_store()`` when None) and return it. ``on_progress(done,
    total, name)`` is called as notebooks start and finish."""
    root = Path(course_folder).expanduser().resolve()
    settings = course_settings(root)
    found = find_notebooks(root, homes)
    problems: list[str] = []
    runnable: list[AssignmentNotebook] = []
    for item in found:
        name = item.path.relative_to(root).as_posix()
        try:
            saved = nbformat.read(item.path, as_version=4)
        except (OSError, ValueError) as unreadable:
            problems.append(f"{name}: could not be read ({_line(str(unreadable), 120)})")
            continue
        if _hidden_tests_in(saved, settings):
            problems.append(f"{name}: holds hidden tests (an instructor's notebook), not run")
            continue
        runnable.append(item)

    executed = _run_all(runnable, settings, on_progress)
    results: list[CellResult] = []
    seen: set[tuple[str, str]] = set()
    for item, notebook in zip(runnable, executed, strict=True):  # newest first: a copy saved later wins
        name = item.path.relative_to(root).as_posix()
        if isinstance(notebook, BaseException):
            problems.append(f"{name}: could not be run ({type(notebook).__name__}: {_line(str(notebook), 120)})")
            continue
        for result in cell_results(notebook, item.assignment, name):
            if (result.assignment, result.function) not in seen:
                seen.add((result.assignment, result.function))
                results.append(result)
    ordered = sorted(results, key=lambda result: result.assignment)  # stable: cells keep the notebook's order
    done = Check(datetime.now().astimezone().isoformat(timespec="seconds"), str(root), scores(ordered), problems)
    save_check(done, default_store() if store is None else Path(store))
    return done


def _run_all(items: Sequence[AssignmentNotebook], settings, on_progress) -> list:
    """Each notebook run (or the exception that stopped it), ``WORKERS`` at a time. The
    event loop gets a thread of its own: a Jupyter kernel, where the board runs, already
    has one running in its main thread."""
    finished = 0
    lock = threading.Lock()

    async def one(item: AssignmentNotebook, gate: asyncio.Semaphore):
        nonlocal finished
        async with gate:
            try:
                return await _run_one(item.path, settings)
            except Exception as failed:  # noqa: BLE001 (one notebook that cannot run must not stop the others)
                return failed
            finally:
                with lock:
                    finished += 1
                    if on_progress:
                        on_progress(finished, len(items), item.assignment)

    async def every():
        gate = asyncio.Semaphore(WORKERS)
        return await asyncio.gather(*(one(item, gate) for item in items))

    if on_progress:
        on_progress(0, len(items), "")
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, every()).result()


# ---- where checks are kept ----


def default_store() -> Path:
    """``$XDG_DATA_HOME/pytorch-inplace/progress.json`` (``~/.local/share`` when unset)."""
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / STORE_NAME


def load_checks(store: Path | str | None = None, folder: Path | str | None = None) -> list[Check]:
    """The checks kept in ``store``, oldest first (those of ``folder`` only, when given). A
    store that cannot be read holds none: it is a record, not something to stop over."""
    path = default_store() if store is None else Path(store)
    try:
        runs = json.loads(path.read_text())["checks"]
        checks = [Check.from_json(run) for run in runs]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    wanted = None if folder is None else str(Path(folder).expanduser().resolve())
    return [check for check in checks if wanted is None or check.folder == wanted]


def save_check(done: Check, store: Path | str | None = None) -> None:
    """Add a check to ``store``, keeping the last ``RUNS_KEPT``; written through a scratch
    file renamed over it, so an interrupted write leaves the previous history whole."""
    path = default_store() if store is None else Path(store)
    kept = [check.to_json() for check in load_checks(path)] + [done.to_json()]
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps({"format": 1, "checks": kept[-RUNS_KEPT:]}, indent=1))
    os.replace(scratch, path)


# ---- the widget ----


def _points(value: float) -> str:
    return f"{value:g}"


def scores_html(done: Check) -> str:
    """The table of functions: points earned of points possible, and what the tests said;
    then the notebooks that were not counted, and why."""
    marks = {"passes": "✓ passes", "fails": "✗ fails", "not started": "– not started"}
    rows = []
    for score in done.functions:
        message = f"<br><small>{html.escape(score.message)}</small>" if score.status == "fails" else ""
        rows.append(f"<tr class='progress-{score.status.replace(' ', '-')}'>"
                    f"<td>{html.escape(score.assignment)}</td><td><code>{html.escape(score.function)}</code></td>"
                    f"<td class='points'>{_points(score.earned)} / {_points(score.possible)}</td>"
                    f"<td>{marks[score.status]}{message}</td></tr>")
    total = (f"<tr><th colspan='2'>total</th><th class='points total'>{_points(done.total)} / "
             f"{_points(done.possible)}</th><th></th></tr>")
    table = ("<table class='progress-scores'><thead><tr><th>assignment</th><th>function</th><th>points</th>"
             f"<th>visible tests</th></tr></thead><tbody>{''.join(rows)}{total}</tbody></table>" if rows else
             "<p>No assignment notebook found: they belong in <code>release/NN-topic/</code> or where the "
             "<i>Assignments</i> tab fetched them.</p>")
    problems = "".join(f"<li>{html.escape(problem)}</li>" for problem in done.problems)
    return table + (f"<p>Not counted:</p><ul>{problems}</ul>" if problems else "")


def level_html(points: float) -> str:
    level = level_for(points)
    to_next = ("top level" if level.points_to_next is None
               else f"{_points(level.points_to_next)} points to level {level.number + 1}, {LEVELS[level.number + 1]}")
    return f"<b>Level {level.number}: {html.escape(level.name)}</b> ({to_next})"


def badges_html(functions: Sequence[FunctionScore]) -> str:
    earned = earned_badges(functions)
    items = [f"<li class='badge-{'earned' if badge in earned else 'not-yet'}'>"
             f"{'★' if badge in earned else '☆'} <b>{html.escape(badge.name)}</b>"
             f"{'' if badge in earned else ' (not yet)'}: {html.escape(badge.how)}</li>" for badge in BADGES]
    return f"<b>Badges</b><ul class='progress-badges'>{''.join(items)}</ul>"


def history_html(checks: Sequence[Check]) -> str:
    if not checks:
        return "<i>No check yet: press the button.</i>"
    shown = [f"<li>{html.escape(check.time.replace('T', ' ')[:16])}: {_points(check.total)} / "
             f"{_points(check.possible)} points, level {level_for(check.total).number}</li>"
             for check in reversed(checks[-RUNS_SHOWN:])]
    return f"<b>Your last checks</b><ul>{''.join(shown)}</ul>"


def board(course_folder: Path | str = "..", store: Path | str | None = None) -> widgets.VBox:
    """The progress board for the assignments under ``course_folder`` (``..``: the course
    folder seen from ``notebooks/``, where 00-start-here runs). Building it runs nothing:
    it shows the last check kept for that folder; the button runs a new one."""
    folder = Path(course_folder).expanduser().resolve()
    button = widgets.Button(description="Check my progress", icon="check", button_style="primary",
                            layout=widgets.Layout(width="auto"))
    running = widgets.IntProgress(value=0, min=0, max=1, description="", bar_style="info",
                                  layout=widgets.Layout(visibility="hidden"))
    status = widgets.HTML().add_class("progress-status")
    table = widgets.HTML()
    level = widgets.HTML()
    level_bar = widgets.IntProgress(min=0, max=POINTS_PER_LEVEL, bar_style="success", description="Level",
                                    layout=widgets.Layout(width="50%")).add_class("progress-level")
    badges = widgets.HTML()
    history = widgets.HTML()

    def show(checks: list[Check]) -> None:
        history.value = history_html(checks)
        if not checks:
            table.value, badges.value = "", badges_html([])
            level.value = level_html(0)
            level_bar.value = level_for(0).bar[0]
            return
        last = checks[-1]
        table.value = scores_html(last)
        level.value = level_html(last.total)
        level_bar.value = level_for(last.total).bar[0]
        badges.value = badges_html(last.functions)

    def progress(done: int, total: int, name: str) -> None:
        running.max, running.value = max(total, 1), done
        running.description = f"{done} / {total}"
        status.value = f"Running your notebooks… ({done} of {total} done{', ' + html.escape(name) if name else ''})"

    def work() -> None:
        try:
            done = check(folder, store, on_progress=progress)
        except Exception as failed:  # noqa: BLE001 (the board says what went wrong; the kernel goes on)
            status.value = f"<b>The check stopped:</b> {html.escape(type(failed).__name__)}: {html.escape(str(failed))}"
        else:
            show(load_checks(store, folder))
            status.value = (f"Checked {html.escape(done.time.replace('T', ' ')[:19])}: "
                            f"{_points(done.total)} of {_points(done.possible)} visible points.")
        finally:
            running.layout.visibility = "hidden"
            button.disabled = False

    def press(_) -> None:
        button.disabled = True
        running.value, running.layout.visibility = 0, "visible"
        status.value = "Starting…"
        # The notebooks run in a thread, so the kernel stays free and the bar moves as they finish.
        threading.Thread(target=work, name="progress-board", daemon=True).start()

    button.on_click(press)
    show(load_checks(store, folder))
    intro = widgets.HTML(
        f"<h3>Progress board</h3><p>{NOT_A_GRADE} It runs each assignment notebook <i>as saved</i> "
        "(save first), in a fresh kernel, and never changes it.</p>")
    return widgets.VBox([intro, widgets.HBox([button, running]), status, table, level, level_bar, badges, history],
                        layout=widgets.Layout(border="1px solid #ccc", padding="8px")).add_class("progress-board")
