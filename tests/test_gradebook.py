"""Registering assignments in the gradebook (``autograder.gradebook.register_assignments``):
a course's first run makes its gradebook with one nbgrader run per assignment; a gradebook
that exists, or appears meanwhile, gets each update tried aside first."""

from __future__ import annotations

import os

import pytest
from nbgrader.api import Gradebook

from autograder import gradebook
from autograder.course import Course, scratch_course
from tests.helpers.assignments import REPO

pytestmark = pytest.mark.slow  # nbgrader's generate_assignment, about half a second per assignment

A01, A02 = "01-inplace-basics", "02-autograd-safety"


@pytest.fixture
def runs(monkeypatch) -> list[str]:
    """The assignments nbgrader's generate_assignment ran for, one entry per run."""
    made: list[str] = []
    generate = gradebook.generate_assignment

    def counted(root, assignment, overrides=None):
        made.append(assignment)
        generate(root, assignment, overrides)

    monkeypatch.setattr(gradebook, "generate_assignment", counted)
    return made


def registered(course: Course) -> dict[str, set[str]]:
    with Gradebook(course.gradebook_url) as book:
        return {assignment.name: {notebook.name for notebook in assignment.notebooks}
                for assignment in book.assignments}


def test_a_first_run_makes_the_gradebook_with_one_nbgrader_run_per_assignment(tmp_path, runs):
    course = scratch_course(Course(REPO), tmp_path / "course", [A01, A02])
    assert gradebook.register_assignments(course) == [A01, A02]
    assert runs == [A01, A02]
    assert registered(course) == {A01: {A01}, A02: {A02}}
    assert gradebook.released_notebook(course, A02, f"{A02}.ipynb").is_file()
    assert not course.grader_folder.scratch.joinpath("gradebook-update").exists()


def test_a_gradebook_that_appeared_meanwhile_is_updated_as_an_existing_one_is(tmp_path, runs, monkeypatch):
    """A formgrader that made the gradebook while the assignments were made aside: the
    aside one does not replace it; the update is tried on a copy of the gradebook that
    appeared, then made on it, as for any gradebook (nbgrader: three runs, not one)."""
    course = scratch_course(Course(REPO), tmp_path / "course", [A01])

    def taken(made, gradebook_file):
        Gradebook(course.gradebook_url).close()  # the formgrader's, empty
        raise FileExistsError(gradebook_file)

    monkeypatch.setattr(os, "link", taken)
    gradebook.register_assignments(course)
    assert runs == [A01, A01, A01]
    assert registered(course) == {A01: {A01}}
