"""Every instructor notebook runs top to bottom with every test cell passing."""

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader import utils

from course import assignments, source_notebook

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
