"""The progress board of 00-start-here (``autograder/progress.py``): scores, levels and badges
from recorded test cells, the history it keeps, where it finds a student's assignments (and
where it never looks), that it never runs a notebook holding hidden tests, that building it
runs nothing; and, slow, a real check of a scratch course folder with a solved, an unsolved
and a wrong function. The browser test presses its button (``tests/test_browser.py``)."""

from __future__ import annotations

import json
import os
import shutil
import time

import nbformat
import pytest

from autograder import progress
from autograder.progress import BADGES, Check, CellResult, FunctionScore
from tests.helpers.assignments import COURSE, release_notebook
from tests.fixtures.build_demo_class import RIGHT
from tests.helpers.submissions import answered_release

A01 = "01-inplace-basics"
A02 = "02-autograd-safety"
# A wrong add_scaled_: a new tensor, x untouched; its visible test must fail.
WRONG_ADD_SCALED_ = '''def add_scaled_(x, y, alpha):
    return x + alpha * y'''


def cell(function, points, error=None, assignment=A01):
    return CellResult(assignment, f"release/{assignment}/{assignment}.ipynb", function, points, error)


def score(function, status, assignment=A01, points=5.0):
    return FunctionScore(assignment, function, "nb", points if status == "passes" else 0.0, points, status)


def visible_points(assignment) -> dict[str, float]:
    """Each function of the assignment's student version, with the points of its test cell."""
    return {item.metadata.nbgrader.grade_id.removeprefix("test_"): float(item.metadata.nbgrader.points)
            for item in nbformat.read(release_notebook(assignment), 4).cells
            if item.get("metadata", {}).get("nbgrader", {}).get("grade") and item.cell_type == "code"}


def by_name(functions):
    return {(item.function, item.earned, item.possible, item.status) for item in functions}


# ---- scores, levels, badges ----


def test_a_function_earns_the_points_of_its_passing_test_cells_only():
    found = progress.scores([cell("add_scaled", 3), cell("add_scaled_", 3, "CheckFailed: returned a new tensor"),
                             cell("shares_storage", 4, "NotImplementedError"),
                             cell("mask_fill", 2, assignment=A02), cell("mask_fill", 3, "AssertionError", A02)])
    assert by_name(found) == {("add_scaled", 3, 3, "passes"), ("add_scaled_", 0, 3, "fails"),
                              ("shares_storage", 0, 4, "not started"), ("mask_fill", 2, 5, "fails")}
    assert [item.function for item in found] == ["add_scaled", "add_scaled_", "shares_storage", "mask_fill"]
    assert next(item for item in found if item.function == "add_scaled_").message == \
        "CheckFailed: returned a new tensor"
    check = Check("now", "/course", found)
    assert (check.total, check.possible) == (5, 15)


@pytest.mark.parametrize(("points", "number", "bar"), [(0, 0, 0), (9.5, 0, 9), (10, 1, 0), (23, 2, 3),
                                                       (50, 5, 10), (80, 5, 10)])
def test_every_ten_points_a_level_and_the_last_has_no_end(points, number, bar):
    level = progress.level_for(points)
    assert (level.number, level.name, level.bar) == (number, progress.LEVELS[number], (bar, 10))
    assert (level.points_to_next is None) == (number == len(progress.LEVELS) - 1)


def earned(functions) -> set[str]:
    return {badge.name for badge in progress.earned_badges(functions)}


def test_badges_are_earned_as_their_table_says():
    assert earned([]) == set()
    assert earned([score("add_scaled", "fails"), score("add_scaled_", "not started")]) == set()
    assert earned([score("add_scaled", "passes", points=1), score("add_scaled_", "fails", points=9)]) == {
        "First steps"}
    # every in-place function (name ending in _), wherever it is, and nothing else needed
    in_place = [score("add_scaled_", "passes", points=1), score("ema_update_", "passes", "04-ema", points=1),
                score("add_scaled", "fails", points=9)]
    assert earned(in_place) == {"First steps", "No allocation"}
    assert "No allocation" not in earned(in_place + [score("init_mlp_", "not started", "03-no-grad-init")])
    autograd = [score("mask_fill", "passes", A02), score("scaled_sigmoid", "passes", A02),
                score("add_scaled_", "fails", points=20)]
    assert earned(autograd) == {"First steps", "Gradient-safe"}
    assert "Gradient-safe" not in earned(autograd[:1] + [score("scaled_sigmoid", "fails", A02)])
    assert earned([score("residual", "passes", "05-residuals", 10), score("x", "fails", points=10)]) == {
        "First steps", "Skip connection", "Halfway"}
    everything = [score("add_scaled_", "passes"), score("mask_fill", "passes", A02),
                  score("scaled_sigmoid", "passes", A02), score("residual", "passes", "05-residuals")]
    assert earned(everything) == {badge.name for badge in BADGES}
    assert all(badge.how for badge in BADGES), "each badge says how it is earned"


# ---- what a test cell's outputs say ----


def executed(*outputs_per_cell, run=True):
    """A notebook with a graded test cell per item of ``outputs_per_cell`` (their outputs),
    as if it had run, and a solution cell and a lecture-like cell around them."""
    notebook = nbformat.v4.new_notebook()
    solution = nbformat.v4.new_code_cell("def f(): pass")
    solution.metadata.nbgrader = {"grade": False, "solution": True, "grade_id": "f", "locked": False}
    notebook.cells = [solution, nbformat.v4.new_code_cell("print(1)")]
    for index, outputs in enumerate(outputs_per_cell):
        test = nbformat.v4.new_code_cell("assert f() is None", execution_count=index + 1 if run else None)
        test.metadata.nbgrader = {"grade": True, "solution": False, "grade_id": f"test_f{index}", "points": 2,
                                  "locked": True}
        test.outputs = outputs
        notebook.cells.append(test)
    return notebook


def test_a_test_cell_passes_only_when_it_ran_with_no_error_and_nothing_on_stderr():
    error = nbformat.v4.new_output("error", ename="CheckFailed", evalue="`f` returned a new tensor\nmore",
                                   traceback=[])
    stderr = nbformat.v4.new_output("stream", name="stderr", text="UserWarning: careful\n")
    stdout = nbformat.v4.new_output("stream", name="stdout", text="f: the visible tests pass.\n")
    results = progress.cell_results(executed([stdout], [error], [stderr], []), A01, "nb.ipynb")
    assert [(result.function, result.points, result.error) for result in results] == [
        ("f0", 2.0, None), ("f1", 2.0, "CheckFailed: `f` returned a new tensor"),
        ("f2", 2.0, "wrote to stderr: UserWarning: careful"), ("f3", 2.0, None)]
    (never_ran,) = progress.cell_results(executed([], run=False), A01, "nb.ipynb")
    assert not never_ran.passed


# ---- the history ----


def a_check(folder, total, when="2026-01-01T10:00:00+00:00"):
    return Check(when, str(folder), [FunctionScore(A01, "add_scaled", "nb", total, 10.0,
                                                   "passes" if total == 10 else "fails", "")])


def test_checks_are_kept_with_their_time_and_read_back_per_folder(tmp_path):
    store = tmp_path / "data" / "progress.json"
    progress.save_check(a_check(tmp_path / "course", 0, "2026-01-01T10:00:00+00:00"), store)
    progress.save_check(a_check(tmp_path / "other", 10), store)
    progress.save_check(a_check(tmp_path / "course", 10, "2026-01-02T10:00:00+00:00"), store)
    kept = progress.load_checks(store, tmp_path / "course")
    assert [(check.time[:10], check.total) for check in kept] == [("2026-01-01", 0), ("2026-01-02", 10)]
    assert len(progress.load_checks(store)) == 3
    saved = json.loads(store.read_text())["checks"][-1]
    assert (saved["total"], saved["possible"], saved["level"], saved["badges"]) == (
        10, 10, 1, ["First steps", "Halfway", "All visible tests"])
    assert not list(store.parent.glob("*.tmp")), "the scratch file is renamed over the store"


def test_the_store_keeps_the_last_checks_and_starts_over_from_an_unreadable_file(tmp_path, monkeypatch):
    store = tmp_path / "progress.json"
    monkeypatch.setattr(progress, "RUNS_KEPT", 3)
    for total in range(5):
        progress.save_check(a_check(tmp_path, total), store)
    assert [check.total for check in progress.load_checks(store)] == [2, 3, 4]
    store.write_text("{half a file")
    assert progress.load_checks(store) == []
    progress.save_check(a_check(tmp_path, 7), store)
    assert [check.total for check in progress.load_checks(store)] == [7]


def test_the_store_is_in_the_users_data_folder_outside_the_course(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert progress.default_store() == tmp_path / "data" / "pytorch-inplace" / "progress.json"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert progress.default_store() == tmp_path / "home" / ".local" / "share" / "pytorch-inplace" / "progress.json"


# ---- finding the student's notebooks ----


def put(path, notebook=None, age=0.0):
    """A copy of 01's student version (or ``notebook``) at ``path``, saved ``age`` seconds ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if notebook is None:
        shutil.copy(release_notebook(A01), path)
    else:
        nbformat.write(notebook, path)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_assignments_are_found_in_release_and_where_the_exchange_puts_them(tmp_path):
    course = tmp_path / "course"
    released = put(course / "release" / A01 / f"{A01}.ipynb", age=100)
    fetched = put(course / "05-residuals" / "05-residuals.ipynb", nbformat.read(release_notebook("05-residuals"), 4))
    with_course = put(course / progress.COURSE_ID / A02 / f"{A02}.ipynb", nbformat.read(release_notebook(A02), 4),
                      age=50)
    put(course / "notebooks" / "00-start-here.ipynb")  # the lectures are never assignments...
    put(course / "source" / A01 / f"{A01}.ipynb")  # ...nor the instructor's folders
    put(course / "source" / f"{A01}.ipynb")
    put(course / "submitted" / "someone" / A01 / f"{A01}.ipynb")
    put(course / "release" / A01 / ".ipynb_checkpoints" / f"{A01}-checkpoint.ipynb")
    put(course / "release" / "notes" / "notes.ipynb", nbformat.v4.new_notebook())  # no graded test cell
    found = progress.find_notebooks(course)
    assert [(item.assignment, item.path) for item in found] == [
        ("05-residuals", fetched), (A02, with_course), (A01, released)]  # newest first


def test_an_assignment_in_two_places_counts_once_the_copy_saved_last(tmp_path):
    course = tmp_path / "course"
    put(course / "release" / A01 / f"{A01}.ipynb", age=100)
    fetched = put(course / A01 / f"{A01}.ipynb", age=10)
    assert [item.path for item in progress.find_notebooks(course)] == [fetched]
    released = put(course / "release" / A01 / f"{A01}.ipynb", age=1)
    assert [item.path for item in progress.find_notebooks(course)] == [released]


def test_the_same_function_in_two_notebooks_of_an_assignment_counts_once(tmp_path, monkeypatch):
    """A student's *Duplicate* of a notebook holds the same tests: the newest copy counts."""
    course = tmp_path / "course"
    put(course / "release" / A01 / f"{A01}.ipynb", age=100)
    put(course / "release" / A01 / f"{A01}-Copy1.ipynb", age=10)
    ran = []

    async def pretend_to_run(path, settings):
        ran.append(path.name)
        notebook = nbformat.read(path, as_version=4)
        for item in notebook.cells:
            item.execution_count = 1 if item.cell_type == "code" else None
        return notebook

    monkeypatch.setattr(progress, "_run_one", pretend_to_run)
    done = progress.check(course, store=tmp_path / "store.json")
    assert sorted(ran) == [f"{A01}-Copy1.ipynb", f"{A01}.ipynb"]
    assert [(item.function, item.notebook) for item in done.functions] == [
        (name, f"release/{A01}/{A01}-Copy1.ipynb") for name in visible_points(A01)]
    assert done.possible == sum(visible_points(A01).values())


def test_a_notebook_holding_hidden_tests_is_never_run(tmp_path, monkeypatch):
    """Only an instructor's notebook holds hidden tests; the board names it and runs nothing of it."""
    course = tmp_path / "course"
    source = nbformat.read(COURSE.notebook("source", A01), as_version=4)
    put(course / "release" / A01 / f"{A01}.ipynb", source)
    put(course / "release" / "broken" / "broken.ipynb").write_text("{not json")

    async def must_not_run(path, settings):
        raise AssertionError(f"ran {path}")

    monkeypatch.setattr(progress, "_run_one", must_not_run)
    done = progress.check(course, store=tmp_path / "store.json")
    assert done.functions == []
    hidden, broken = sorted(done.problems)
    assert hidden == f"release/{A01}/{A01}.ipynb: holds hidden tests (an instructor's notebook), not run"
    assert broken.startswith("release/broken/broken.ipynb: could not be read ("), broken
    assert "not run" in progress.scores_html(done)


# ---- the widget ----


def test_building_the_board_runs_nothing_and_shows_the_last_check(tmp_path, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the board ran notebooks before the button was pressed")

    monkeypatch.setattr(progress, "_run_all", must_not_run)
    monkeypatch.setattr(progress, "find_notebooks", must_not_run)
    store = tmp_path / "store.json"
    empty = progress.board(tmp_path, store)
    text = widget_text(empty)
    assert "Check my progress" in text and "not a grade" in text and "No check yet" in text
    progress.save_check(Check("2026-01-01T10:00:00+00:00", str(tmp_path),
                              [score("add_scaled", "passes", points=12), score("add_scaled_", "not started")]), store)
    shown = progress.board(tmp_path, store)
    text = widget_text(shown)
    assert "12 / 12" in text and "0 / 5" in text and "Level 1: Trailing underscore" in text
    assert "2026-01-01 10:00: 12 / 17 points" in text
    (bar,) = [child for child in walk(shown) if getattr(child, "description", "") == "Level"]
    assert (bar.value, bar.max) == (2, 10)


def walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def widget_text(widget) -> str:
    return " ".join(str(getattr(child, "value", "")) + " " + str(getattr(child, "description", ""))
                    for child in walk(widget))


# ---- the real thing ----


def saved_after_a_run(notebook):
    """As if the student ran every cell and saved: execution counts, no error shown."""
    for item in notebook.cells:
        if item.cell_type == "code":
            item.outputs, item.execution_count = [], 1
    return notebook


def with_source(notebook, grade_id, source):
    (found,) = [item for item in notebook.cells
                if item.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    found.source = source
    return notebook


@pytest.mark.slow
def test_a_check_runs_the_students_notebooks_and_scores_their_visible_tests(tmp_path):
    """A scratch course folder as the student edition lays it out: in 01, ``add_scaled``
    solved (a right answer of the answer suite), ``add_scaled_`` wrong, ``shares_storage``
    not started; in 02, an answer that kills the kernel. Both were saved as if every cell had
    run without an error: what they were saved with does not count."""
    course = tmp_path / "course"
    first = with_source(answered_release(A01, {"add_scaled": RIGHT["add_scaled"]}), "add_scaled_", WRONG_ADD_SCALED_)
    saved = put(course / "release" / A01 / f"{A01}.ipynb", saved_after_a_run(first)).read_bytes()
    dies = with_source(answered_release(A02, {}), "mask_fill", "import os\n\nos._exit(1)")
    put(course / "release" / A02 / f"{A02}.ipynb", saved_after_a_run(dies))
    shutil.copy(COURSE.root / "nbgrader_config.py", course)
    store = tmp_path / "data" / "progress.json"
    seen = []
    started = time.monotonic()
    done = progress.check(course, store, on_progress=lambda *args: seen.append(args))
    seconds = time.monotonic() - started

    status = {"add_scaled": "passes", "add_scaled_": "fails", "shares_storage": "not started"}
    assert by_name(done.functions) == {
        (function, points if function == "add_scaled" else 0, points, status.get(function, "fails"))
        for assignment in (A01, A02) for function, points in visible_points(assignment).items()}
    messages = {item.function: item.message for item in done.functions}
    assert "add_scaled_" in messages["add_scaled_"], messages
    assert {messages[function] for function in visible_points(A02)} == {
        "did not run (the kernel stopped before this cell)"}
    assert done.problems == []
    assert done.total == visible_points(A01)["add_scaled"]
    assert progress.level_for(done.total).number == 0
    assert earned(done.functions) == {"First steps"}
    assert seen[0] == (0, 2, "") and seen[-1][:2] == (2, 2)
    (kept,) = progress.load_checks(store, course)
    assert kept.functions == done.functions
    assert (course / "release" / A01 / f"{A01}.ipynb").read_bytes() == saved, "the check changes no notebook"
    assert seconds < 60, f"two notebooks took {seconds:.0f} s"
