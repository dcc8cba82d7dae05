"""One lecture notebook made into a page of the site (pure: a notebook in, a notebook out).

A page is the notebook a student opens, outputs and all, with what a web page needs
instead of a kernel: each widget drawn as the notebook saved it (the site runs no Python),
a header under the title (the same lecture in the other languages, the notebook in
JupyterLab), and the notebook's links made into links MyST resolves (a heading is named by
its text in JupyterLab, by a label in MyST; an assignment is not on the site, so its link
opens it in JupyterLab). What would make a broken page (a widget whose state was not
saved, a notebook without a title) stops the build with the reason.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable

from nbformat import NotebookNode, from_dict

from autograder.translation import anchors, catalogues, faithful, paragraphs

# Each language's name in itself, the way a reader looks for their own.
LANGUAGE_NAMES = {"en": "English", **{code: native for code, (_, _, native) in catalogues.LANGUAGES.items()}}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_MODEL_REFERENCE = "IPY_MODEL_"
# What a widget shows that is not a control a reader could set.
_NOT_CONTROLS = {"IntProgressModel", "FloatProgressModel", "LabelModel", "HTMLModel", "HTMLMathModel", "OutputModel"}
_SCHEME = re.compile(r"^([a-zA-Z][\w+.-]*:|//)")  # an address, not a path in the course
_LABEL = re.compile(r"\(\S+\)=")  # a MyST label, the line above what it names


class PageError(ValueError):
    """A notebook that would make a broken page."""


def static_widgets(notebook: NotebookNode, drawn: str, live_only: str) -> NotebookNode:
    """A copy of ``notebook`` whose widget outputs are what their Output widgets showed when
    it was saved, each in the widget's place, the cell followed by ``drawn`` (or by
    ``live_only`` when they showed nothing, as a button that reads the student's work does),
    each note's ``{controls}`` the widget's controls with their saved values; the saved
    widget state itself left out, so the page loads no widget library."""
    page = copy.deepcopy(notebook)
    state = page.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    cells = []
    for number, cell in enumerate(page.cells, 1):
        cells.append(cell)
        if not any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", [])):
            continue
        try:
            cell.outputs, shown, controls = _drawn(cell.outputs, state)
        except KeyError as missing:
            raise PageError(f"cell {number} shows a widget whose state was not saved ({missing.args[0]}; in "
                            "JupyterLab: Settings, Save Widget State Automatically; then run the notebook again "
                            "and save it)") from None
        note = (drawn if shown else live_only).format(controls=_escaped(", ".join(controls)) or "-")
        cells.append(from_dict({"cell_type": "markdown", "metadata": {}, "id": f"{cell.get('id', number)}-static",
                                "source": f"*{note}*"}))
    page.cells = cells
    return page


def _drawn(outputs: list, state: dict) -> tuple[list[NotebookNode], bool, list[str]]:
    """``outputs`` with each widget's view replaced, where it stands, by what its Output
    widgets drew (a widget shown inside one included); whether a widget drew anything; the
    controls named (``name = value``, or a button's label), in the order they are drawn. A
    widget without saved state raises KeyError."""
    result, shown, controls = [], False, []
    for output in outputs:
        view = output.get("data", {}).get(WIDGET_VIEW)
        if view is None:
            result.append(from_dict(output))
            continue
        drawn_outputs, named = _widget_parts(view["model_id"], state)
        drawn_outputs, _, inner = _drawn(drawn_outputs, state)
        result += drawn_outputs
        shown = shown or bool(drawn_outputs)
        controls += named + inner
    return result, shown, controls


def _widget_parts(model_id: str, state: dict) -> tuple[list[NotebookNode], list[str]]:
    """What a widget and its children drew (Output widgets' outputs) and the controls among
    them, in the order they are drawn. (An HTML widget's text is left out: it is the code's,
    in English on every language's page.)"""
    if model_id not in state:
        raise KeyError(f"widget {model_id}")
    name, values = state[model_id]["model_name"], state[model_id]["state"]
    shown, controls = [], []
    if name == "OutputModel":
        shown += [from_dict(output) for output in values.get("outputs", [])]
    elif name == "ButtonModel" and values.get("description"):
        controls.append(values["description"])
    elif name not in _NOT_CONTROLS and values.get("description"):
        controls.append(f"{values['description']} = {_value(values)}")
    for child in values.get("children", []):
        child_shown, child_controls = _widget_parts(child.removeprefix(_MODEL_REFERENCE), state)
        shown += child_shown
        controls += child_controls
    return shown, controls


def _value(values: dict) -> str:
    """A control's saved value; a selection's by its labels (its state holds the index);
    ``-`` for none."""
    if values.get("value") is not None or not values.get("_options_labels"):
        return "-" if values.get("value") in (None, "") else str(values["value"])
    index, labels = values.get("index"), values["_options_labels"]
    chosen = index if isinstance(index, list) else [] if index is None else [index]
    return ", ".join(labels[position] for position in chosen) or "-"


def _escaped(text: str) -> str:
    """``text`` as Markdown that shows it as it is (a control's label may hold ``*``, ``$``...)."""
    return re.sub(r"([\\`*_\[\]<>$~|])", r"\\\1", text)


def with_header(notebook: NotebookNode, header: str) -> NotebookNode:
    """A copy of ``notebook`` with ``header`` (Markdown) right under its title, the first
    line of its first cell (after the title's label, if it has one), which MyST makes the
    page's title."""
    page = copy.deepcopy(notebook)
    first = page.cells[0] if page.cells else None
    lines = first.source.split("\n") if first is not None and first.cell_type == "markdown" else []
    title = 1 if lines and _LABEL.fullmatch(lines[0]) else 0
    if len(lines) <= title or not lines[title].startswith("# "):
        raise PageError("its first cell does not start with its title (a `# ` heading), which the page needs")
    rest = "\n".join(lines[title + 1:]).lstrip("\n")  # blank lines only: an indented line keeps its indent
    first.source = "\n".join([*lines[:title + 1], "", header, "", rest]).rstrip() + "\n"
    return page


def relinked(notebook: NotebookNode, name: str, labels: dict[str, dict[str, str]],
             lab_link: Callable[[str], str], pages: set[str]) -> NotebookNode:
    """A copy of ``notebook`` (the page ``name``, among the file names ``pages``) whose links
    MyST can follow: a link to a heading (``page#JupyterLab-id``, or ``#id`` in the page
    itself) points at that heading's label (``labels``: page -> heading id -> label); a link
    to a notebook of the course that is not a page opens it in JupyterLab (``lab_link``: its
    path from the lectures' folder -> the address), anchor kept. An address (``https:``,
    ``mailto:``) and a link in code are left as they are."""
    def relink(found: re.Match) -> str:
        path, anchor = found.group("path"), found.group("anchor")
        target = _target(found, name)
        if target is None:
            return found.group(0)
        if anchor and target in pages:
            label = labels.get(target, {}).get(anchor)
            return f"](#{label})" if label else found.group(0)
        if path.endswith(".ipynb") and target not in pages:
            return f"]({lab_link(path)}{'#' + anchor if anchor else ''})"
        return found.group(0)

    page = copy.deepcopy(notebook)
    for cell in page.cells:
        if cell.cell_type == "markdown":
            cell.source = _outside_code(cell.source, lambda text: anchors.LINK_TARGET.sub(relink, text))
    return page


def _target(link: re.Match, name: str) -> str | None:
    """The document a link (``anchors.LINK_TARGET``) of the page ``name`` names, as a path
    from the lectures' folder (the page itself for a bare anchor); None for an address."""
    path = link.group("path")
    return None if _SCHEME.match(path) else path.removeprefix("./") or name


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` made to what is not in an inline code span (where a link is
    code, not a link)."""
    pieces, last = [], 0
    for span in faithful.CODE.finditer(text):
        pieces += [change(text[last:span.start()]), span.group(0)]
        last = span.end()
    return "".join([*pieces, change(text[last:])])


def linked_headings(notebook: NotebookNode, name: str, pages: set[str]) -> set[tuple[str, str]]:
    """(page, JupyterLab heading id) of each link of ``notebook`` (the page ``name``) to a
    heading of a page."""
    found = set()
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for link in anchors.LINK_TARGET.finditer(faithful.without_code(cell.source)):
                if link.group("anchor") and _target(link, name) in pages:
                    found.add((_target(link, name), link.group("anchor")))
    return found


def headings(notebook: NotebookNode) -> list[str]:
    """The JupyterLab id of each heading of ``notebook``'s Markdown, in order."""
    return [heading for cell in notebook.cells if cell.cell_type == "markdown"
            for _, heading in _heading_lines(cell.source)]


def _heading_lines(source: str) -> list[tuple[int, str]]:
    """(line number, JupyterLab id) of each heading line: a ``#`` line at most three spaces
    in, outside a fenced block (``paragraphs.fence_closing``: code, or display math)."""
    found, closing = [], None
    for number, line in enumerate(source.expandtabs(4).splitlines()):
        if closing:
            closing = None if closing(line) else closing
        elif opening := paragraphs.fence_closing(line):
            closing = opening
        elif not line.startswith("    ") and (heading := anchors.heading_id(line)):
            found.append((number, heading))
    return found


def html_id(text: str) -> str:
    """``text`` as MyST writes an identifier: lower case ASCII letters, digits and hyphens
    (empty for a text without any)."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-")


def with_labels(notebook: NotebookNode, labels: dict[str, str]) -> NotebookNode:
    """A copy of ``notebook`` with a MyST label, ``(label)=``, above each heading that
    ``labels`` names (by its JupyterLab id)."""
    page = copy.deepcopy(notebook)
    for cell in page.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for number, heading in reversed(_heading_lines(cell.source)):
            if heading in labels:
                lines.insert(number, f"({labels[heading]})=")
        cell.source = "\n".join(lines)
    return page
