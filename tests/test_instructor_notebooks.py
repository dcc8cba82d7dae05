"""Every instructor notebook runs top to bottom with every test cell passing, and binds
none of the names the grading guard keeps for itself."""

import ast

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader import utils

from autograder.sandbox.guard import NOTEBOOK_NAMES
from tests.helpers.assignments import assignments, source_notebook

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", assignments())
def test_instructor_notebook_passes_its_own_tests(assignment):
    path = source_notebook(assignment)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, allow_errors=True, resources={
        "metadata": {"path": str(path.parent)}
    }).execute()
    failures = [
        f"{cell.metadata.nbgrader.grade_id}: {output.get('ename') or output.get('text')}"
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error" or output.get("name") == "stderr"
    ]
    assert not failures, "\n".join(failures)
    test_cells = [cell for cell in notebook.cells if utils.is_grade(cell)]
    assert test_cells, f"{path} has no graded test cells"


@pytest.mark.parametrize("assignment", assignments())
def test_no_cell_rebinds_a_name_the_guard_puts_back(assignment):
    """The guard puts ``torch``, ``checks`` and ``cases`` back to their modules after every
    cell and calls a test cell that changed them tampering: a test's own ``cases = [...]``
    would score every submission zero. (Importing the module under its name is fine.)"""
    rebound = [f"{cell.metadata.get('nbgrader', {}).get('grade_id')}: {node.id} (line {node.lineno})"
               for cell in nbformat.read(source_notebook(assignment), as_version=4).cells if cell.cell_type == "code"
               for node in ast.walk(ast.parse(cell.source))
               if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in NOTEBOOK_NAMES]
    assert not rebound, rebound
