"""Build student submissions: the released notebook with chosen answers typed in."""

from __future__ import annotations

import inspect

import nbformat
from nbgrader import utils

from course import release_notebook


def answer_source(graded_name: str, answer) -> str:
    """The source of an answer from ``tests/answers``, renamed to the graded function."""
    source = inspect.getsource(answer)
    return source.replace(f"def {answer.__name__}(", f"def {graded_name}(", 1)


def answered_release(assignment: str, answers: dict) -> nbformat.NotebookNode:
    """The student version of ``assignment`` with ``answers`` (graded name -> answer
    function) written into their solution cells; other cells keep the stub."""
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    for cell in notebook.cells:
        if utils.is_solution(cell) and cell.metadata.nbgrader.grade_id in answers:
            name = cell.metadata.nbgrader.grade_id
            cell.source = answer_source(name, answers[name])
    return notebook
