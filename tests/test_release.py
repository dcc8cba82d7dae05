"""release/ is what nbgrader makes of source/ today, and gives nothing away."""

import pytest
import nbformat
from nbgrader import utils

from autograder.release import generate
from course import RELEASE, REPO, assignments, graded_functions, release_notebook


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


@pytest.mark.parametrize("function", graded_functions(), ids=lambda f: f.name)
def test_release_has_no_solution_or_hidden_test_line(function):
    notebook = nbformat.read(release_notebook(function.assignment), as_version=4)
    released = {line.strip() for cell in notebook.cells for line in cell.source.splitlines()}
    solution = function.solution_code.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
    public = {line.strip() for line in (function.visible_tests + function.setup_code).splitlines()}
    secret = [
        line.strip()
        for line in (solution + function.hidden_tests).splitlines()
        if line.strip() and line.strip() not in public
    ]
    leaked = [line for line in secret if line in released]
    assert not leaked, f"the student version of {function.name} shows: {leaked}"


@pytest.mark.parametrize("assignment", assignments())
def test_release_keeps_every_graded_cell(assignment):
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    released = {cell.metadata.nbgrader.grade_id for cell in notebook.cells if utils.is_grade(cell)}
    expected = {f"test_{f.name}" for f in graded_functions() if f.assignment == assignment}
    assert released == expected
