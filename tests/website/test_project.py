"""The site's MyST project as ``make site`` hands it to Jupyter Book
(``autograder.website.project``): every lecture translated, seconds, so not in the inner loop."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from autograder.website import pages, project, words
from tests.helpers.assignments import REPO

pytestmark = pytest.mark.slow

LAB = "https://hub.example.edu/user-redirect/lab/tree/"
LECTURES = sorted(path.name for path in (REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory):
    into = tmp_path_factory.mktemp("site")
    written = project.lay_out(REPO, into, LAB, "_theme")
    return into, written


def test_every_lecture_is_a_page_in_every_language(laid_out):
    into, written = laid_out
    assert sorted(path.relative_to(into).as_posix() for path in written) == sorted(
        f"{language}/{name}" for language in project.LANGUAGES for name in LECTURES)
    config = json.loads((into / "myst.yml").read_text())
    assert config["project"]["toc"][0] == {"file": "index.md"}
    parts = [(part["title"], [child["file"] for child in part["children"]]) for part in config["project"]["toc"][1:]]
    assert parts == [(pages.LANGUAGE_NAMES[language], [f"{language}/{name}" for name in LECTURES])
                     for language in project.LANGUAGES]
    assert config["site"]["template"] == "_theme" and (into / config["site"]["options"]["favicon"]).is_file()
    assert config["site"]["options"]["hide_footer_links"]  # they would lead from one language into the next


def test_a_page_links_to_itself_in_each_other_language_and_to_jupyterlab(laid_out):
    into, _ = laid_out
    page = nbformat.read(into / "ko" / "01-inplace-basics.ipynb", as_version=4)
    title, header = page.cells[0].source.split("\n\n")[:2]
    assert title.startswith("# ") and re.search("[\uac00-\ud7a3]", title)  # the Korean title
    switch, link = header.split("\\\n")
    assert switch == ("[English](../en/01-inplace-basics.ipynb) · **한국어** · "
                      "[中文](../zh/01-inplace-basics.ipynb) · [日本語](../ja/01-inplace-basics.ipynb)")
    # a hub's address: no word of `make lab`
    assert link == words.in_language(REPO, "ko")(words.OPEN_ON_HUB).format(
        address=f"{LAB}notebooks/01-inplace-basics.ipynb")


def test_the_students_own_jupyterlab_is_named_with_the_command_that_starts_it():
    say = words.in_language(REPO, "ja")
    header = project._header("ja", ("en", "ja"), "04-ema.ipynb", "http://localhost:8888/lab/tree/", say)
    assert header == "[English](../en/04-ema.ipynb) · **日本語**\\\n" + say(words.OPEN_IN_LAB).format(
        address="http://localhost:8888/lab/tree/notebooks/04-ema.ipynb")


def test_a_site_of_one_language_has_no_switch():
    header = project._header("en", ("en",), "04-ema.ipynb", LAB, str)
    assert header == words.OPEN_ON_HUB.format(address=f"{LAB}notebooks/04-ema.ipynb")


def test_a_site_of_some_languages_holds_and_switches_between_those_only(tmp_path):
    written = project.lay_out(REPO, tmp_path, LAB, "_theme", ("en", "zh"))
    assert {path.parent.name for path in written} == {"en", "zh"}
    config = json.loads((tmp_path / "myst.yml").read_text())
    assert [part["title"] for part in config["project"]["toc"][1:]] == ["English", "中文"]
    header = nbformat.read(tmp_path / "en" / "04-ema.ipynb", as_version=4).cells[0].source.split("\n\n")[1]
    assert header.split("\\\n")[0] == "**English** · [中文](../zh/04-ema.ipynb)"


def test_a_link_to_a_heading_of_another_lecture_goes_to_its_label_in_the_same_language(laid_out):
    into, _ = laid_out
    for language in project.LANGUAGES:
        label = f"{language}-00-start-here-may-i-write-in-place-here"
        start = nbformat.read(into / language / "00-start-here.ipynb", as_version=4)
        assert sum(cell.source.count(f"({label})=") for cell in start.cells) == 1, language
        lecture = nbformat.read(into / language / "02-autograd-safety.ipynb", as_version=4)
        assert any(f"](#{label})" in cell.source for cell in lecture.cells), language


def test_assignments_open_in_jupyterlab(laid_out):
    into, _ = laid_out
    start = "\n".join(cell.source for cell in nbformat.read(into / "zh" / "00-start-here.ipynb", as_version=4).cells)
    assert f"]({LAB}release/01-inplace-basics/01-inplace-basics.ipynb)" in start
    assert "](../release/" not in start


def test_each_cell_has_an_id_of_its_own_in_the_whole_site(laid_out):
    _, written = laid_out
    ids = [cell.id for path in written for cell in nbformat.read(path, as_version=4).cells]
    assert len(ids) == len(set(ids))


def test_a_page_keeps_the_lectures_code_and_outputs(laid_out):
    """What the site shows of a lecture's code is the lecture's (widgets drawn as saved)."""
    into, _ = laid_out
    english = nbformat.read(REPO / "notebooks" / "03-no-grad-init.ipynb", as_version=4)
    page = nbformat.read(into / "ja" / "03-no-grad-init.ipynb", as_version=4)
    code = [cell for cell in english.cells if cell.cell_type == "code"]
    shown = [cell for cell in page.cells if cell.cell_type == "code"]
    assert [cell.source for cell in shown] == [cell.source for cell in code]
    for cell, original in zip(shown, code, strict=True):
        if not any(pages.WIDGET_VIEW in output.get("data", {}) for output in original.outputs):
            assert cell.outputs == original.outputs


def test_the_front_page_lists_each_language_in_its_own_words(laid_out):
    into, _ = laid_out
    front = (into / project.FRONT_PAGE).read_text()
    for language in project.LANGUAGES:
        say = words.in_language(REPO, language)
        title = "" if language == "en" else f" · {say(words.FRONT_TITLE)}"  # English's is the page's title
        assert f"[{pages.LANGUAGE_NAMES[language]}]({language}/00-start-here.ipynb)**{title}\\\n" \
               f"  {say(words.FRONT_LINE)}\n" in front
