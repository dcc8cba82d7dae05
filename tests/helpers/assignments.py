"""Where the course's files are, and the graded functions its instructor notebooks define.

A graded function is a solution cell whose nbgrader ``grade_id`` is the function's name,
followed by its test cell ``test_<name>``. The answer suite and the notebook tests find
them here instead of keeping their own lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader import utils

from autograder.course import Course, split_hidden

REPO = Path(__file__).resolve().parents[2]
COURSE = Course(REPO)
RELEASE = COURSE.folder("release")
LECTURES = REPO / "notebooks"


@dataclass(frozen=True)
class GradedFunction:
    """One exercise: the code its tests need, and its visible and hidden tests apart.

    ``reference_code`` is every solution cell of the assignment: hidden tests run after the
    visible ones in the same cell, so they may use helpers the visible part defines, and
    those helpers may call the assignment's other functions.
    """

    assignment: str
    name: str
    points: float
    setup_code: str
    solution_code: str
    reference_code: str
    visible_tests: str
    hidden_tests: str


def assignments() -> list[str]:
    """Assignment names: the folders of ``source/``, in course order."""
    return COURSE.assignments()


def source_notebook(assignment: str) -> Path:
    return COURSE.notebook("source", assignment)


def release_notebook(assignment: str) -> Path:
    return COURSE.notebook("release", assignment)


def graded_functions() -> list[GradedFunction]:
    """Every graded function of every assignment."""
    return [function for name in assignments() for function in _graded_in(name)]


def total_points(assignment: str) -> float:
    """The points of every grade cell of the assignment's instructor notebook: what a
    right answer to every question scores."""
    notebook = nbformat.read(source_notebook(assignment), as_version=4)
    return sum(float(cell.metadata.nbgrader.points) for cell in notebook.cells if utils.is_grade(cell))


def _graded_in(assignment: str) -> list[GradedFunction]:
    notebook = nbformat.read(source_notebook(assignment), as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    setup = "\n".join(
        cell.source for cell in code_cells if not utils.is_solution(cell) and not utils.is_grade(cell)
    )
    references = "\n".join(cell.source for cell in code_cells if utils.is_solution(cell))
    tests = {cell.metadata.nbgrader.grade_id: cell for cell in code_cells if utils.is_grade(cell)}
    functions = []
    for cell in code_cells:
        if not utils.is_solution(cell):
            continue
        name = cell.metadata.nbgrader.grade_id
        test_cell = tests[f"test_{name}"]
        visible, hidden = _split_hidden(test_cell.source)
        functions.append(
            GradedFunction(
                assignment=assignment,
                name=name,
                points=float(test_cell.metadata.nbgrader.points),
                setup_code=setup,
                solution_code=cell.source,
                reference_code=references,
                visible_tests=visible,
                hidden_tests=hidden,
            )
        )
    return functions


def _split_hidden(source: str) -> tuple[str, str]:
    """A test cell's source as (visible part, hidden part), the delimiter lines left out."""
    visible, hidden = split_hidden(source, COURSE.hidden_delimiters)
    if not hidden:
        raise ValueError(f"test cell has no hidden section:\n{source}")
    begin, end = COURSE.hidden_delimiters
    if begin not in hidden[0] or end not in hidden[-1] or source.rstrip().splitlines()[-1] != hidden[-1]:
        raise ValueError(f"hidden tests must end the test cell with '{end}'")
    return "\n".join(visible) + "\n", "\n".join(hidden[1:-1]) + "\n"
