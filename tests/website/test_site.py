"""The lectures' site as a reader sees it: ``make site`` builds it without a warning, and
headless Chromium reads it from a plain static server (as any web host serves it).

Every page (the front page and each lecture in each language) renders its title, loads
every image (figures, the storage diagrams, widgets drawn as saved), logs no console
error and asks nothing of any other host (the site works where no CDN is reachable); the
language switch under a lecture's title opens the same lecture in another language; its
JupyterLab link names the notebook in the course. A screenshot of each lecture's first
screen goes to ``browser-screenshots/<run>/site/``.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.translation import catalogues
from autograder.website import pages, project, words
from tests.conftest import SCREENSHOTS
from tests.helpers import chromium
from tests.helpers.assignments import REPO

# The documentation's test builds the same theme into the same cache: never both at once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("myst-theme")]

LECTURES = sorted(path.name for path in (REPO / "notebooks").glob("*.ipynb"))
HUB = "https://hub.example.edu/user-redirect/lab/tree/course/"  # where the pages' JupyterLab links go


def slug(name: str) -> str:
    """A lecture's address in its language's folder, as MyST names it (no number in front)."""
    return re.sub(r"^\d+-", "", Path(name).stem).lower()


def title(language: str, name: str) -> str:
    """A lecture's title in ``language`` as the page shows it, from the course itself: the
    first line of the English lecture, or its translation in the language's catalogue,
    without its Markdown (code spans' backticks)."""
    heading = nbformat.read(REPO / "notebooks" / name, as_version=4).cells[0].source.split("\n")[0]
    if language != "en":
        catalogue = catalogues.catalogue_path(REPO, language, Path("notebooks", name))
        heading = catalogues.usable(catalogues.read(catalogue))[heading]
    return heading.removeprefix("# ").replace("`", "").strip()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """``make site`` into a folder of the test's (the repository's dist/site/ left as it is),
    with a hub's address for the JupyterLab links: the folders of the site and its project,
    and the build's log."""
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(["make", "--no-print-directory", "site", f"SITE_INTO={folder / 'site'}",
                           f"SITE_PROJECT={folder / 'project'}", f"SITE_LAB_URL={HUB}",
                           f"SITE_LANGUAGES={' '.join(project.LANGUAGES)}"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    (folder / "build.log").write_text(done.stdout + done.stderr)
    return {"site": folder / "site", "project": folder / "project", "log": folder / "build.log"}


@pytest.fixture(scope="module")
def served(built) -> str:
    handler = functools.partial(_QuietHandler, directory=str(built["site"]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def browser():
    with chromium.launched() as launched:
        yield launched


@pytest.fixture
def reader(browser, served):
    """A page, and everything that went wrong while it was read: console errors, failed
    or refused requests, requests to another host."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = []
    page.on("console", lambda message: problems.append(f"console: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    # (a request the page dropped as it moved on, such as a script a switch left behind, is no fault)
    page.on("requestfailed", lambda request: None if request.failure == "net::ERR_ABORTED"
            else problems.append(f"failed: {request.url} ({request.failure})"))
    page.on("response", lambda response: problems.append(f"{response.status}: {response.url}")
            if response.status >= 400 else None)
    page.on("request", lambda request: None if request.url.startswith((served, "data:", "blob:"))
            else problems.append(f"another host: {request.url}"))
    yield page, problems
    page.close()


def test_the_build_warns_of_nothing(built):
    """A broken link, a missing label or two cells with one id is a warning, not a failure,
    for Jupyter Book (the version pinned: its warnings start so): here it fails."""
    log = built["log"].read_text()
    assert re.search(r"Built \d+ pages for project", log)  # the log read is mystmd's
    assert [line for line in log.splitlines() if line.startswith(("⚠️", "⛔"))] == []


def test_every_page_is_built_and_says_its_language(built):
    site = built["site"]
    assert (site / "index.html").is_file()
    assert [f"{language}/{slug(name)}" for language in project.LANGUAGES for name in LECTURES
            if not (site / language / slug(name) / "index.html").is_file()] == []
    marks = {language: {re.search(r'<html lang="([^"]+)"', page.read_text())[1]
                        for page in (site / language).rglob("index.html")} for language in project.LANGUAGES}
    assert marks == {"en": {"en"}, "ko": {"ko-KR"}, "zh": {"zh-CN"}, "ja": {"ja-JP"}}


LOAD_IMAGES = """() => Promise.all([...document.images].map(img => {
    img.loading = 'eager';
    return img.decode().then(() => img.naturalWidth, () => 0);
}))"""


def test_every_page_renders_its_title_and_images_and_logs_no_error(reader, served, built):
    page, problems = reader
    shots = SCREENSHOTS / time.strftime("%Y%m%d-%H%M%S") / "site"
    shots.mkdir(parents=True, exist_ok=True)
    short = []
    for language, name in [("", ""), *((language, name) for language in project.LANGUAGES for name in LECTURES)]:
        address = f"{served}/{language}/{slug(name)}/" if name else f"{served}/"
        page.goto(address, wait_until="networkidle")
        heading = page.locator("h1").first.inner_text()
        widths = page.evaluate(LOAD_IMAGES)
        expected = title(language, name) if name else words.FRONT_TITLE
        figures = _images(REPO / "notebooks" / name) if name else 0
        if heading.strip() != expected or 0 in widths or len(widths) < figures:
            short.append(f"{address}: title {heading!r} (not {expected!r}), images {widths} (of {figures})")
        if name:
            page.screenshot(path=shots / f"{language}-{slug(name)}.png")
    assert short == []
    assert problems == []


def _images(lecture: Path) -> int:
    """The images a lecture shows, counted in the lecture itself: its outputs' and those its
    widgets' Output widgets saved (the site draws those as images too)."""
    notebook = nbformat.read(lecture, as_version=4)
    outputs = sum("image/png" in output.get("data", {}) for cell in notebook.cells if cell.cell_type == "code"
                  for output in cell.outputs)
    widgets = notebook.metadata.get("widgets", {}).get(pages.WIDGET_STATE, {}).get("state", {}).values()
    return outputs + sum("image/png" in output.get("data", {}) for model in widgets
                         for output in model["state"].get("outputs", []))


def test_the_language_switch_opens_the_same_lecture_in_another_language(reader, served, built):
    page, problems = reader
    name = "01-inplace-basics.ipynb"
    page.goto(f"{served}/en/{slug(name)}/", wait_until="networkidle")
    for language in ("ko", "zh", "ja", "en"):
        page.locator("article").get_by_role("link", name=pages.LANGUAGE_NAMES[language], exact=True).first.click()
        page.wait_for_url(re.compile(rf"/{language}/{slug(name)}/?$"))
        page.locator("h1", has_text=title(language, name)).first.wait_for()
        assert page.evaluate("document.title").startswith(title(language, name)[:10])
    assert problems == []


def test_a_lecture_links_to_its_notebook_in_jupyterlab(reader, served):
    page, _ = reader
    page.goto(f"{served}/ko/ema/", wait_until="networkidle")
    text = re.match(r"\[([^\]]+)\]", words.in_language(REPO, "ko")(words.OPEN_ON_HUB))[1]
    assert page.get_by_role("link", name=text).get_attribute("href") == f"{HUB}notebooks/04-ema.ipynb"


def test_a_widget_is_shown_as_it_was_saved_with_its_controls_named(reader, served):
    page, _ = reader
    page.goto(f"{served}/en/ema/", wait_until="networkidle")
    note = words.STATIC_WIDGET.split("{")[0]
    assert page.get_by_text(note).first.inner_text().endswith("(decay = 0.99); here it is as the notebook was saved.")
