"""One lecture notebook made into a page of the site (pure: a notebook in, a notebook out).

A page is the notebook a student opens, outputs and all, with what a web page needs
instead of a kernel: each widget drawn as the notebook saved it (the site runs no Python),
links to the same lecture in the other languages and to the notebook in JupyterLab under
the title, and the notebook's links made into links MyST resolves (a heading is named by
its text in JupyterLab, by a label in MyST; an assignment is not on the site, so its link
opens it in JupyterLab).
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Callable

from nbformat import NotebookNode, from_dict

from autograder.translation import anchors

# Each language's name in itself, the way a reader looks for their own.
LANGUAGE_NAMES = {"en": "English", "ko": "한국어", "zh": "中文", "ja": "日本語"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_MODEL_REFERENCE = "IPY_MODEL_"
_LINK = re.compile(r"\]\((?P<path>[^)#\s]*?)(?:#(?P<anchor>[^)\s]+))?\)")


def static_widgets(notebook: NotebookNode, note: str) -> NotebookNode:
    """A copy of ``notebook`` whose widget outputs are what their widgets showed when it was
    saved (an Output widget's outputs, an HTML widget's text), each followed by ``note``
    (with ``{controls}``: the widget's controls and their saved values); the saved widget
    state itself left out, so the page loads no widget library."""
    page = copy.deepcopy(notebook)
    state = page.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    cells = []
    for cell in page.cells:
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        outputs, controls = [], []
        for output in cell.outputs:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(output)
                continue
            shown, named = _widget_parts(view["model_id"], state)
            outputs += shown
            controls += named
        if len(outputs) != len(cell.outputs) or controls:
            cell.outputs = outputs
            cells.append(from_dict({"cell_type": "markdown", "metadata": {}, "id": f"{cell.get('id', 'cell')}-static",
                                    "source": f"*{note.format(controls=', '.join(controls) or '-')}*"}))
    page.cells = cells
    return page


def _widget_parts(model_id: str, state: dict) -> tuple[list[NotebookNode], list[str]]:
    """What a widget and its children showed (outputs) and the controls among them
    (``name = value``, or a button's label), in the order they are drawn."""
    model = state.get(model_id)
    if model is None:
        return [], []
    values = model["state"]
    shown, controls = [], []
    if model["model_name"] == "OutputModel":
        shown += [from_dict(output) for output in values.get("outputs", [])]
    elif model["model_name"] in ("HTMLModel", "HTMLMathModel") and _text(values.get("value", "")):
        # as text: the theme hands an HTML output to a renderer that fetches MathJax from a CDN
        shown.append(from_dict({"output_type": "display_data", "metadata": {},
                                "data": {"text/plain": _text(values["value"])}}))
    elif model["model_name"] == "ButtonModel" and values.get("description"):
        controls.append(values["description"])
    elif values.get("description"):
        value = values.get("value")
        if value is None and values.get("index") is not None and values.get("_options_labels"):
            value = values["_options_labels"][values["index"]]
        controls.append(f"{values['description']} = {value}")
    for child in values.get("children", []):
        child_shown, child_controls = _widget_parts(child.removeprefix(_MODEL_REFERENCE), state)
        shown += child_shown
        controls += child_controls
    return shown, controls


def _text(markup: str) -> str:
    """What an HTML widget says, its tags left out (a line for each block)."""
    lines = re.sub(r"<[^<>]+>", "", re.sub(r"<(br|/p|/h\d|/li|/div|/ul)\b[^<>]*>", "\n", markup))
    return "\n".join(" ".join(line.split()) for line in html.unescape(lines).splitlines() if line.strip())


def with_header(notebook: NotebookNode, header: str) -> NotebookNode:
    """A copy of ``notebook`` with ``header`` (Markdown) right under its title, the first
    line of its first cell, which MyST makes the page's title."""
    page = copy.deepcopy(notebook)
    first = page.cells[0]
    title, _, rest = first.source.partition("\n")
    first.source = f"{title}\n\n{header}\n\n{rest.lstrip()}".rstrip() + "\n"
    return page


def relinked(notebook: NotebookNode, name: str, labels: dict[str, dict[str, str]],
             lab_link: Callable[[str], str], pages: set[str]) -> NotebookNode:
    """A copy of ``notebook`` (the page ``name``, among the file names ``pages``) whose links
    MyST can follow: a link to a heading (``page#JupyterLab-id``, or ``#id`` in the page
    itself) points at that heading's label (``labels``: page -> heading id -> label); a link
    to a notebook of the course that is not a page opens it in JupyterLab (``lab_link``: its
    path from the lectures' folder -> the address)."""
    def relink(found: re.Match) -> str:
        path, anchor = found.group("path"), found.group("anchor")
        target = path.removeprefix("./") or name
        if anchor and target in pages:
            label = labels.get(target, {}).get(anchor)
            return f"](#{label})" if label else found.group(0)
        if path.endswith(".ipynb") and target not in pages:
            return f"]({lab_link(path)})"
        return found.group(0)

    page = copy.deepcopy(notebook)
    for cell in page.cells:
        if cell.cell_type == "markdown":
            cell.source = _LINK.sub(relink, cell.source)
    return page


def linked_headings(notebook: NotebookNode, name: str, pages: set[str]) -> set[tuple[str, str]]:
    """(page, JupyterLab heading id) of each link of ``notebook`` (the page ``name``) to a
    heading of a page."""
    found = set()
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for link in _LINK.finditer(cell.source):
                target = link.group("path").removeprefix("./") or name
                if link.group("anchor") and target in pages:
                    found.add((target, link.group("anchor")))
    return found


def headings(notebook: NotebookNode) -> list[str]:
    """The JupyterLab id of each heading of ``notebook``'s Markdown, in order (a ``#`` line
    inside a fenced code block is code, not a heading)."""
    return [heading for cell in notebook.cells if cell.cell_type == "markdown"
            for _, heading in _heading_lines(cell.source)]


def _heading_lines(source: str) -> list[tuple[int, str]]:
    found, fenced = [], False
    for number, line in enumerate(source.splitlines()):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (heading := anchors.heading_id(line)):
            found.append((number, heading))
    return found


def html_id(text: str) -> str:
    """``text`` as MyST writes an identifier: lower case ASCII letters, digits and hyphens."""
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
