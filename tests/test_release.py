"""release/ is what nbgrader makes of source/ today, and gives nothing away."""

import pytest
import nbformat
from nbgrader import utils

from autograder.release import generate
from tests.helpers.assignments import RELEASE, REPO, assignments, graded_functions, release_notebook


@pytest.mark.slow
def test_release_is_fresh(tmp_path):
    regenerated = generate(REPO, tmp_path)
    assert [path.relative_to(tmp_path) for path in regenerated] == [
        path.relative_to(RELEASE) for path in sorted(RELEASE.glob("*/*.ipynb"))
    ], "release/ and source/ have different assignments: run `make release`"
    for fresh in regenerated:
        committed = RELEASE / fresh.relative_to(tmp_path)
        assert committed.read_bytes() == fresh.read_bytes(), (
            f"{committed} is stale: run `make release` and commit the result"
        )


@pytest.mark.parametrize("assignment", assignments())
def test_release_has_no_markers(assignment):
    text = release_notebook(assignment).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text


@pytest.mark.parametrize("assignment", assignments())
def test_release_has_no_solution_or_hidden_test_line(assignment):
    """No line of a solution or a hidden test reaches students, unless the public part of
    the instructor notebook has the same line (``with torch.no_grad():`` may be both)."""
    functions = [f for f in graded_functions() if f.assignment == assignment]
    secret_code = "\n".join(
        f.solution_code.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0] + f.hidden_tests
        for f in functions
    )
    public_code = "\n".join([functions[0].setup_code, *(f.visible_tests for f in functions)])
    public = {line.strip() for line in public_code.splitlines()}
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    released = {line.strip() for cell in notebook.cells for line in cell.source.splitlines()}
    secret = {line.strip() for line in secret_code.splitlines()} - public - {""}
    leaked = sorted(secret & released)
    assert not leaked, f"the student version of {assignment} shows: {leaked}"


@pytest.mark.parametrize("assignment", assignments())
def test_release_keeps_every_graded_cell(assignment):
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    released = {cell.metadata.nbgrader.grade_id for cell in notebook.cells if utils.is_grade(cell)}
    expected = {f"test_{f.name}" for f in graded_functions() if f.assignment == assignment}
    assert released == expected
