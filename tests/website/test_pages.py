"""A lecture notebook made into a page of the site (``autograder.website.pages``): widgets
drawn as saved, links MyST can follow, the header under the title."""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.website import pages
from tests.helpers.assignments import REPO

NOTE = "Live in JupyterLab ({controls})."
LIVE_ONLY = "Only in JupyterLab ({controls})."
PNG = "iVBORw0KGgo="


def widget_notebook() -> nbformat.NotebookNode:
    """A notebook with an interactive figure as ipywidgets saves it: a box of a slider, a
    dropdown, a button, a progress bar, an HTML widget and an Output widget holding the
    drawn figure."""
    state = {
        "box": {"model_name": "VBoxModel", "state": {"children": [f"IPY_MODEL_{name}" for name in
                                                                  ("slider", "menu", "button", "bar", "html", "out")]}},
        "slider": {"model_name": "FloatSliderModel", "state": {"description": "decay", "value": 0.99}},
        "menu": {"model_name": "DropdownModel", "state": {"description": "recipe", "index": 1,
                                                          "_options_labels": ["clone", "detach"]}},
        "button": {"model_name": "ButtonModel", "state": {"description": "Check my progress"}},
        "bar": {"model_name": "IntProgressModel", "state": {"description": "Level", "value": 0}},
        "html": {"model_name": "HTMLModel", "state": {"value": "<h3>Progress</h3><p>Level <b>0</b> &amp; up</p>"}},
        "out": {"model_name": "OutputModel", "state": {"outputs": [
            {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG, "text/plain": "<Figure>"}}]}},
    }
    view = new_output("execute_result", execution_count=1, data={
        pages.WIDGET_VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
        "text/plain": "interactive(children=(FloatSlider(...",
    })
    plain = new_output("stream", name="stdout", text="before the widget\n")
    notebook = new_notebook(cells=[new_markdown_cell("# Title\n\nIntro."),
                                   new_code_cell("interactive(...)", outputs=[plain, view])])
    notebook.metadata["widgets"] = {pages.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    return notebook


def test_a_widget_is_drawn_as_it_was_saved_and_its_controls_named():
    """The Output widget's figure, not the HTML widget's text (the code's English on every
    language's page); the controls a reader could set, not the progress bar."""
    page = pages.static_widgets(widget_notebook(), NOTE, LIVE_ONLY)
    code, note = page.cells[1], page.cells[2]
    assert [output.get("data", {}).get("image/png") or output.get("text") for output in code.outputs] == [
        "before the widget\n", PNG]
    assert note.cell_type == "markdown"
    assert note.source == "*Live in JupyterLab (decay = 0.99, recipe = detach, Check my progress).*"
    assert "widgets" not in page.metadata
    nbformat.validate(page)


def test_a_widget_that_drew_nothing_says_it_works_only_in_jupyterlab():
    notebook = widget_notebook()
    state = notebook.metadata["widgets"][pages.WIDGET_STATE]["state"]
    state["box"]["state"]["children"] = ["IPY_MODEL_button", "IPY_MODEL_html"]
    page = pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    assert [output.output_type for output in page.cells[1].outputs] == ["stream"]
    assert page.cells[2].source == "*Only in JupyterLab (Check my progress).*"


def test_a_widget_whose_state_was_not_saved_stops_the_page_with_the_way_to_save_it():
    notebook = widget_notebook()
    del notebook.metadata["widgets"]
    with pytest.raises(pages.PageError, match="cell 2 shows a widget whose state was not saved .*Save Widget State"):
        pages.static_widgets(notebook, NOTE, LIVE_ONLY)


def test_a_widget_whose_childs_state_was_not_saved_stops_the_page_too():
    notebook = widget_notebook()
    del notebook.metadata["widgets"][pages.WIDGET_STATE]["state"]["slider"]
    with pytest.raises(pages.PageError, match="cell 2 shows a widget whose state was not saved \\(widget slider"):
        pages.static_widgets(notebook, NOTE, LIVE_ONLY)


def test_what_a_widget_drew_takes_its_place_among_the_cells_outputs():
    notebook = widget_notebook()
    notebook.cells[1].outputs.reverse()  # the widget first, then what the cell printed
    page = pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    assert [output.output_type for output in page.cells[1].outputs] == ["display_data", "stream"]


def test_a_widget_shown_inside_an_output_widget_is_drawn_too():
    notebook = widget_notebook()
    state = notebook.metadata["widgets"][pages.WIDGET_STATE]["state"]
    inner = new_output("display_data", data={pages.WIDGET_VIEW: {"model_id": "slider2"}, "text/plain": "FloatSlider()"})
    state["out"]["state"]["outputs"].append(inner)
    state["slider2"] = {"model_name": "FloatSliderModel", "state": {"description": "lr*", "value": 0.1}}
    page = pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    assert not any(pages.WIDGET_VIEW in output.get("data", {}) for output in page.cells[1].outputs)
    assert page.cells[2].source.endswith("Check my progress, lr\\* = 0.1).*")  # a label's Markdown escaped


def test_a_selection_of_several_options_is_named_by_its_labels():
    notebook = widget_notebook()
    notebook.metadata["widgets"][pages.WIDGET_STATE]["state"]["menu"]["state"]["index"] = [0, 1]
    page = pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    assert "recipe = clone, detach" in page.cells[2].source


def test_the_notebook_itself_is_left_as_it_was():
    notebook = widget_notebook()
    before = copy.deepcopy(notebook)
    pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    assert notebook == before


@pytest.mark.parametrize("lecture", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda path: path.stem)
def test_no_lecture_page_keeps_a_live_widget(lecture):
    """What the site would otherwise try to run (a widget library from a CDN), on every lecture."""
    notebook = nbformat.read(lecture, as_version=4)
    page = pages.static_widgets(notebook, NOTE, LIVE_ONLY)
    views = [output for cell in page.cells if cell.cell_type == "code" for output in cell.outputs
             if pages.WIDGET_VIEW in output.get("data", {})]
    assert views == [] and "widgets" not in page.metadata
    had_widgets = any(pages.WIDGET_VIEW in output.get("data", {}) for cell in notebook.cells
                      if cell.cell_type == "code" for output in cell.outputs)
    assert had_widgets == any(cell.source.startswith(("*Live in JupyterLab", "*Only in JupyterLab"))
                              for cell in page.cells)


def test_the_header_goes_under_the_title():
    page = pages.with_header(new_notebook(cells=[new_markdown_cell("# Lecture 1\nAn **out-of-place** op.")]), "HEADER")
    assert page.cells[0].source == "# Lecture 1\n\nHEADER\n\nAn **out-of-place** op.\n"


def test_the_header_keeps_an_indented_line_after_the_title_indented():
    page = pages.with_header(new_notebook(cells=[new_markdown_cell("# T\n\n    code\ntext")]), "H")
    assert page.cells[0].source == "# T\n\nH\n\n    code\ntext\n"


def test_the_header_goes_under_a_title_that_has_a_label():
    page = pages.with_header(new_notebook(cells=[new_markdown_cell("(en-start)=\n# Start\nText.")]), "HEADER")
    assert page.cells[0].source == "(en-start)=\n# Start\n\nHEADER\n\nText.\n"


@pytest.mark.parametrize("first", [new_code_cell("# not a title"), new_markdown_cell("Intro.\n# Title")],
                         ids=["a code cell", "text before the title"])
def test_a_notebook_that_does_not_start_with_its_title_stops_the_page(first):
    with pytest.raises(pages.PageError, match="does not start with its title"):
        pages.with_header(new_notebook(cells=[first]), "HEADER")


LINKS = new_notebook(cells=[new_markdown_cell(
    "See [the rule](00-start-here.ipynb#May-I-write-in-place-here?), [lecture 2](./02-b.ipynb), "
    "[here](#Storage), [assignment 1](../release/01-a/01-a.ipynb#Task-1), [a notebook](https://x.org/n.ipynb) "
    "and [PyTorch](https://pytorch.org/docs#x).")])
PAGES = {"00-start-here.ipynb", "01-a.ipynb", "02-b.ipynb"}


def test_links_to_headings_go_to_their_labels_and_assignments_open_in_jupyterlab():
    labels = {"00-start-here.ipynb": {"May-I-write-in-place-here?": "en-00-start-here-may-i"},
              "01-a.ipynb": {"Storage": "en-01-a-storage"}}
    page = pages.relinked(LINKS, "01-a.ipynb", labels, lambda path: f"LAB/{path}", PAGES)
    assert page.cells[0].source == (
        "See [the rule](#en-00-start-here-may-i), [lecture 2](./02-b.ipynb), [here](#en-01-a-storage), "
        "[assignment 1](LAB/../release/01-a/01-a.ipynb#Task-1), [a notebook](https://x.org/n.ipynb) "
        "and [PyTorch](https://pytorch.org/docs#x).")


def test_a_link_in_code_or_to_another_host_is_left_as_it_is():
    source = "`[x](../release/a.ipynb)` and [y](//host/b.ipynb) but [z](../release/c.ipynb)"
    page = pages.relinked(new_notebook(cells=[new_markdown_cell(source)]), "01-a.ipynb", {}, lambda path: "LAB", PAGES)
    assert page.cells[0].source == "`[x](../release/a.ipynb)` and [y](//host/b.ipynb) but [z](LAB)"


def test_a_link_to_a_heading_without_a_label_is_left_for_the_build_to_refuse():
    page = pages.relinked(LINKS, "01-a.ipynb", {}, lambda path: path, PAGES)
    assert "(00-start-here.ipynb#May-I-write-in-place-here?)" in page.cells[0].source


def test_the_headings_linked_to_are_found():
    assert pages.linked_headings(LINKS, "01-a.ipynb", PAGES) == {
        ("00-start-here.ipynb", "May-I-write-in-place-here?"), ("01-a.ipynb", "Storage")}


def test_a_hash_line_in_a_fenced_block_is_code_not_a_heading():
    source = "## May I write in place here?\n```python\n# Storage\n```\n# Storage"
    notebook = new_notebook(cells=[new_markdown_cell(source)])
    assert pages.headings(notebook) == ["May-I-write-in-place-here?", "Storage"]
    labelled = pages.with_labels(notebook, {"Storage": "en-x-storage"})
    assert labelled.cells[0].source.splitlines() == [
        "## May I write in place here?", "```python", "# Storage", "```", "(en-x-storage)=", "# Storage"]


@pytest.mark.parametrize("source", [
    "````\n```\n# a\n````\n# Real",  # a longer fence holds a shorter one
    "```\n~~~\n# a\n```\n# Real",  # a fence of the other character inside
    "    # an indented code line\n\n# Real",
    "\t# a tab-indented code line\n\n# Real",
    "$$\n# a\n$$\n# Real",
], ids=["four backticks", "tildes inside backticks", "indented code", "tab-indented code", "display math"])
def test_code_blocks_of_every_kind_hold_no_heading(source):
    assert pages.headings(new_notebook(cells=[new_markdown_cell(source)])) == ["Real"]


def test_a_label_is_made_as_myst_makes_an_identifier():
    assert pages.html_id("May-I-write-in-place-here?") == "may-i-write-in-place-here"
    assert pages.html_id("`x.data`-vs-`.detach()`") == "x-data-vs-detach"
    assert pages.html_id("???") == ""
