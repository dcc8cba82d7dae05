"""Cells run in a sandboxed grading kernel by our executor (``GuardedExecute``), with no
course, no nbgrader run and no worker: what a test of one grading behaviour needs."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nbformat
from traitlets.config import Config

from autograder.preprocessors.guarded_execute import GuardedExecute

MANUAL = "hand-graded"  # a cell kind for ``graded``: a graded solution cell, which a person scores


def graded(*cells: tuple[str, bool | str], events: list | None = None, files: dict[str, str] | None = None) -> list:
    """Run cells (source, whether it is a test cell, or ``MANUAL``) in a sandboxed grading
    kernel, in an assignment folder holding ``files`` (name -> text; none by default); the
    cells (and into ``events`` what the grader observed)."""
    notebook = nbformat.v4.new_notebook()
    for index, (source, test) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source)
        if test:
            cell.metadata["nbgrader"] = {"grade": True, "solution": test == MANUAL, "grade_id": f"test_{index}",
                                         "points": 1}
        notebook.cells.append(cell)
    with tempfile.TemporaryDirectory(prefix="assignment-") as folder:
        for name, text in (files or {}).items():
            Path(folder, name).write_text(text)
        log = Path(folder) / "events.jsonl"
        GuardedExecute(config=Config({"GradingSettings": {"sandbox": True}}), timeout=60,
                       events_log=str(log)).preprocess(notebook, {"metadata": {"path": folder}})
        if events is not None:
            events += [json.loads(line) for line in log.read_text().splitlines()]
    return notebook.cells


def errors(cell) -> list[str]:
    return [f"{output.ename}: {output.evalue}" for output in cell.outputs if output.output_type == "error"]
