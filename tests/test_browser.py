"""What students and TAs see: JupyterLab, started as docs/index.md says, driven in headless
Chromium (Debian's, through Playwright).

Every lecture runs top to bottom with no error, each figure is drawn as an image, and each
widget is drawn and answers a slider move or a button click. A student types a right and
then a wrong answer into an exercise and sees the public test pass and then fail with its
message; nbgrader's Validate button accepts a solved notebook and, for a wrong answer, names
the failing test and its message; the formgrader lists the course's assignments; the
progress board of 00-start-here, pressed, shows a solved function's points and an unsolved
one's zero, the level bar and the badges. A screenshot of every step goes to
``browser-screenshots/<run>/``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from autograder import progress
from tests.conftest import SCREENSHOTS
from tests.helpers import chromium
from tests.helpers.assignments import REPO, assignments, release_notebook
from tests.fixtures.build_demo_class import PARTIAL, RIGHT
from tests.helpers.lab_server import TOKEN, running_lab
from tests.helpers.submissions import answered_release

pytestmark = pytest.mark.slow

LECTURES = sorted(path.name for path in (REPO / "notebooks").glob("*.ipynb"))
START_HERE = "00-start-here.ipynb"
SCRATCH = REPO / "browser-scratch"  # student notebooks the tests type into (git-ignored)
A01 = "01-inplace-basics"
A06 = "06-diagnose-and-measure"  # the diagnosing assignment: training steps, the profiler, a custom Function
RIGHT_ADD_SCALED = '''def add_scaled(x, y, alpha):
    """Return x + alpha * y as a new tensor; x and y keep their values."""
    return x + alpha * y'''
WRONG_ADD_SCALED = '''def add_scaled(x, y, alpha):
    """Return x + alpha * y as a new tensor; x and y keep their values."""
    return x.add_(y, alpha=alpha)'''
# JupyterLab settings for the run: every cell drawn (not only those in view), nothing
# saved behind the tests' back, no news pop-up over the screenshots.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none",
                                                                   "autoStartDefaultKernel": True},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
}
RUN_TIMEOUT_MS = 90_000
# A widget's output as a student sees it: its text and the pixels of its images.
WHAT_A_WIDGET_SHOWS = "el => el.textContent + [...el.querySelectorAll('img')].map(img => img.src).join()"


@pytest.fixture(scope="module")
def screenshots() -> Path:
    folder = SCREENSHOTS / time.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> str:
    settings = tmp_path_factory.mktemp("lab-settings")
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    environment = {"JUPYTERLAB_SETTINGS_DIR": str(settings),
                   "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path_factory.mktemp("lab-workspaces"))}
    with running_lab(environment) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium.launched() as launched:
        yield launched


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    yield page
    page.close()


@pytest.fixture(scope="module")
def scratch():
    SCRATCH.mkdir(exist_ok=True)
    yield SCRATCH
    shutil.rmtree(SCRATCH)


def open_notebook(page, lab: str, path: str):
    """Open ``path`` alone in a fresh workspace, wait for its kernel; return its panel."""
    page.goto(f"{lab}/lab/workspaces/{uuid.uuid4().hex}/tree/{path}?reset&token={TOKEN}")
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=RUN_TIMEOUT_MS)
    return panel


# A code cell that ran or waits to run: its prompt shows a count or a star.
STARTED = ("panel => [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
           ".some(p => /\\[(\\d+|\\*)\\]/.test(p.textContent))")


def run_all(page, panel, until=None) -> None:
    """Clear every output, then Run All Cells; wait until every code cell (or ``until``,
    where an error in a later exercise stops the run) shows an execution count. On a
    loaded machine a menu's click can land before the menu opened: when no cell started
    within 15 s, the command is given once more (no cell ran, so none runs twice)."""
    menu(page, "Edit", "Clear Outputs of All Cells")
    menu(page, "Run", "Run All Cells")
    try:
        page.wait_for_function(STARTED, arg=panel.element_handle(), timeout=15_000, polling=250)
    except PlaywrightTimeout:
        menu(page, "Run", "Run All Cells")
    wait_until_run(page, panel, until)


def menu(page, name: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=name).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def wait_until_run(page, panel, until=None, not_prompt: str | None = None) -> None:
    """The kernel is idle, no cell waits (``[*]``), and ``until`` (else every code cell)
    shows a count, other than ``not_prompt`` when given."""
    try:
        page.wait_for_function(
            """([panel, until, notPrompt]) => {
                const ran = p => /\\[\\d+\\]/.test(p.textContent) && p.textContent !== notPrompt;
                const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
                const done = until ? ran(until.querySelector('.jp-InputPrompt')) : prompts.every(ran);
                return done && prompts.every(p => !p.textContent.includes('*'))
                    && panel.querySelector('.jp-Notebook-ExecutionIndicator').dataset.status === 'idle';
            }""",
            arg=[panel.element_handle(), until.element_handle() if until else None, not_prompt],
            timeout=RUN_TIMEOUT_MS, polling=250)
    except PlaywrightTimeout:
        prompts = panel.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        shown = [error[-300:] for error in errors(panel).all_inner_texts()]
        raise AssertionError(f"the notebook did not finish running: prompts {prompts}, errors {shown}") from None


def errors(area):
    """Error outputs: JupyterLab draws them as stderr text holding a traceback."""
    return area.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                        has_text="Traceback (most recent call last)")


def code_cell(panel, text: str):
    return panel.locator(".jp-CodeCell").filter(has_text=text).first


def type_into(page, cell, source: str) -> None:
    """Replace a cell's source the way a student does: click, select all, type."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)  # no auto-indent or bracket closing on the way


def stored_outputs(path: Path) -> dict[str, int]:
    counts = {"error": 0, "image": 0, "widget": 0}
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            counts["error"] += output.output_type == "error"
            counts["image"] += "image/png" in output.get("data", {})
            counts["widget"] += "application/vnd.jupyter.widget-view+json" in output.get("data", {})
    return counts


@pytest.mark.parametrize("lecture", LECTURES)
def test_a_lecture_runs_with_its_figures_and_widgets(lab, page, screenshots, lecture):
    path = REPO / "notebooks" / lecture
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    expected = stored_outputs(path)
    panel = open_notebook(page, lab, f"notebooks/{lecture}")
    run_all(page, panel)
    page.screenshot(path=screenshots / f"{lecture}-1-ran.png")

    assert errors(panel).count() == expected["error"]
    # Figures the notebook itself shows; a widget's own plot is checked with the widget.
    images = panel.locator(".jp-Cell-outputArea > .jp-OutputArea-child > .jp-RenderedImage img")
    assert images.count() == expected["image"]
    for index in range(images.count()):
        assert images.nth(index).evaluate("img => img.complete && img.naturalWidth > 0")

    widgets = panel.locator(".jp-OutputArea-output > .jupyter-widgets, .jp-OutputArea-output .widget-vbox")
    if expected["widget"] and lecture != START_HERE:  # the start page's widget is the progress board: its own test
        widget = widgets.first
        widget.scroll_into_view_if_needed()
        widget.wait_for()
        widget.screenshot(path=screenshots / f"{lecture}-2-widget.png")
        output = widget.locator(".widget-output").first
        shown = output.evaluate(WHAT_A_WIDGET_SHOWS)
        assert shown.strip(), "the widget shows nothing"
        answered = any(answers(page, output, shown, control) for control in controls(page, widget))
        widget.screenshot(path=screenshots / f"{lecture}-3-widget-after-input.png")
        assert answered, "no control of the widget changed what it shows"
    if lecture != START_HERE:
        reveal_an_answer(panel, screenshots / f"{lecture}-4-answer.png")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the test must not save a lecture"


def reveal_an_answer(panel, screenshot: Path):
    """The questionnaire's answers survive JupyterLab's HTML sanitizer as closed boxes that
    a click opens."""
    box = panel.locator(".jp-RenderedMarkdown details").last
    box.scroll_into_view_if_needed()
    assert box.evaluate("box => box.open") is False, "an answer is shown before it is asked for"
    box.locator("summary").click()
    assert box.evaluate("box => box.open") is True
    box.screenshot(path=screenshot)


def controls(page, widget):
    """One way to use each control of a widget: the next option of a drop-down, a click
    on a button not yet pressed, one step right on a slider (as a student would)."""
    for dropdown in widget.locator("select").all():
        count, chosen = dropdown.locator("option").count(), dropdown.evaluate("select => select.selectedIndex")
        yield lambda dropdown=dropdown: dropdown.select_option(index=(chosen + 1) % count)
    for button in widget.locator(".widget-toggle-button:not(.mod-active)").all():
        yield button.click
    for handle in widget.locator(".widget-slider .noUi-handle").all():
        yield lambda handle=handle: (handle.focus(), page.keyboard.press("ArrowRight"))


def answers(page, output, shown: str, control) -> bool:
    """Use ``control``; True once the widget's output differs from ``shown``. (Some
    settings rightly show the same thing, so the test tries each control in turn.)"""
    control()
    try:
        page.wait_for_function(f"([output, before]) => ({WHAT_A_WIDGET_SHOWS})(output) !== before",
                               arg=[output.element_handle(), shown], timeout=8_000)
    except PlaywrightTimeout:
        return False
    return True


def test_a_student_sees_a_public_test_pass_then_fail(lab, page, screenshots, scratch):
    shutil.copy(release_notebook(A01), scratch / "student.ipynb")
    panel = open_notebook(page, lab, f"{scratch.name}/student.ipynb")
    type_into(page, code_cell(panel, "def add_scaled(x, y, alpha)"), RIGHT_ADD_SCALED)
    test = code_cell(panel, "result = add_scaled(x, y, 0.5)")
    run_all(page, panel, until=test)
    test.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "student-1-right-answer.png")
    assert "add_scaled: the visible tests pass." in test.inner_text()
    assert errors(test).count() == 0

    solution = code_cell(panel, "def add_scaled(x, y, alpha)")
    type_into(page, solution, WRONG_ADD_SCALED)
    before = test.locator(".jp-InputPrompt").inner_text()
    page.keyboard.press("Shift+Enter")  # run the answer, move to its test
    page.keyboard.press("Shift+Enter")  # run the test
    wait_until_run(page, panel, until=test, not_prompt=before)
    test.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "student-2-wrong-answer.png")
    error = errors(test)
    assert error.count() == 1
    message = error.inner_text()
    assert "CheckFailed: `add_scaled`" in message, message
    assert "checks.py" not in message, "the checks' own frames are hidden"


def test_the_progress_board_shows_points_level_and_badges(lab, page, screenshots, scratch):
    """00-start-here's board in a scratch course folder: 01 with ``add_scaled`` solved and
    ``add_scaled_`` not started. The page is the course's own, but for where it keeps checks."""
    course = scratch / "progress-course"
    (course / "notebooks").mkdir(parents=True)
    (course / "release" / A01).mkdir(parents=True)
    solved = answered_release(A01, {"add_scaled": RIGHT["add_scaled"]})
    nbformat.write(solved, course / "release" / A01 / f"{A01}.ipynb")
    start_here = nbformat.read(REPO / "notebooks" / START_HERE, as_version=4)
    (cell,) = [cell for cell in start_here.cells if 'board("..")' in cell.source]
    cell.source = cell.source.replace('board("..")', 'board("..", store="progress.json")')  # not the tester's home
    nbformat.write(start_here, course / "notebooks" / START_HERE)
    points = {cell.metadata.nbgrader.grade_id: cell.metadata.nbgrader.points for cell in solved.cells
              if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"}

    panel = open_notebook(page, lab, f"{scratch.name}/{course.name}/notebooks/{START_HERE}")
    run_all(page, panel)
    board = panel.locator(".progress-board")
    board.scroll_into_view_if_needed()
    assert "No check yet" in board.inner_text() and "not a grade" in board.inner_text()
    board.get_by_role("button", name="Check my progress").click()
    status = board.locator(".progress-status")
    status.get_by_text(re.compile("Checked|The check stopped")).wait_for(timeout=RUN_TIMEOUT_MS)
    board.screenshot(path=screenshots / "progress-board.png")
    assert "Checked" in status.inner_text(), status.inner_text()

    rows = {row.locator("td").nth(1).inner_text(): row.locator("td").nth(2).inner_text()
            for row in board.locator("table.progress-scores tbody tr:has(td)").all()}
    assert rows["add_scaled"] == f"{points['test_add_scaled']:g} / {points['test_add_scaled']:g}"
    assert rows["add_scaled_"] == f"0 / {points['test_add_scaled_']:g}"
    assert len(rows) == len(points)
    level = progress.level_for(points["test_add_scaled"])
    width = board.locator(".progress-level .progress-bar").evaluate("bar => parseFloat(bar.style.width)")
    assert width == pytest.approx(100 * level.bar[0] / level.bar[1]), "the level bar: the points into the level"
    assert f"Level {level.number}: {level.name}" in board.inner_text()
    earned = board.locator(".badge-earned").all_inner_texts()
    assert len(earned) == 1 and "First steps" in earned[0], earned
    assert "No allocation (not yet)" in " ".join(board.locator(".badge-not-yet").all_inner_texts())
    assert (course / "notebooks" / "progress.json").is_file(), "the check is kept"


def validate(page, lab: str, scratch: Path, notebook, name: str):
    """Write ``notebook`` as ``name`` and press nbgrader's Validate button; return the
    dialog its result will appear in."""
    nbformat.write(notebook, scratch / name)
    panel = open_notebook(page, lab, f"{scratch.name}/{name}")
    panel.locator(".jp-Toolbar").get_by_text("Validate", exact=True).click()
    return page.locator(".jp-Dialog")


@pytest.mark.parametrize("assignment", [A01, A06])
def test_validate_accepts_a_solved_notebook(lab, page, screenshots, scratch, assignment):
    dialog = validate(page, lab, scratch, answered_release(assignment, RIGHT), f"solved-{assignment}.ipynb")
    dialog.get_by_text("Success!").wait_for(timeout=RUN_TIMEOUT_MS)
    page.screenshot(path=screenshots / f"validate-success-{assignment}.png")
    assert "Your notebook passes all the tests" in dialog.inner_text()


def test_validate_names_the_failing_test_and_its_message(lab, page, screenshots, scratch):
    # In PARTIAL, add_scaled_ rebinds x: a visible test fails.
    dialog = validate(page, lab, scratch, answered_release(A01, PARTIAL), "partial.ipynb")
    dialog.get_by_text("The following cell failed").wait_for(timeout=RUN_TIMEOUT_MS)
    dialog.evaluate("el => el.querySelectorAll('*').forEach(e => e.scrollTop = e.scrollHeight)")
    page.screenshot(path=screenshots / "validate-failure.png")
    shown = dialog.inner_text()
    assert "CheckFailed: `add_scaled_` returned a new tensor" in shown, shown
    assert "checks.py" not in shown, "the checks' own frames are hidden"
    assert "add_scaled: the visible tests pass" not in shown  # only the failing cell is listed


def test_the_formgrader_lists_the_assignments(lab, page, screenshots):
    gradebook = REPO / "gradebook.db"  # the formgrader makes one in the course folder
    existed = gradebook.exists()
    try:
        page.goto(f"{lab}/formgrader?token={TOKEN}")
        rows = page.locator("table tbody tr")
        for name in assignments():
            rows.filter(has_text=name).first.wait_for(timeout=30_000)
        page.screenshot(path=screenshots / "formgrader.png")
    finally:
        if not existed:
            gradebook.unlink(missing_ok=True)
