"""Hostile submissions, graded sandboxed beside honest ones (the session's ``graded``
demo class): none gains a point, damages a file, reaches the network or leaves a process
behind, and every attempt is named for the TA. The plain-nbgrader side of each score
attack (that it does work there) is in ``test_nbgrader_autograde.py``."""

from __future__ import annotations

import ast
import shutil

import nbformat
import pytest

from attacks import SCORE_ATTACKS
from autograder.cli import demo_course
from autograder.grading.merge import cell_scores
from autograder.grading.pipeline import Options, grade_course
from autograder.grading.status import Status
from autograder.sandbox.limits import Limits
from conftest import A01, FAST, grading_processes
from course import REPO

pytestmark = pytest.mark.slow


def records(graded) -> dict:
    return {record.student: record for record in graded.run.records.all()}


def printed(graded, student: str) -> str:
    """Everything the student's graded notebook printed."""
    notebook = nbformat.read(graded.course / "autograded" / student / A01 / f"{A01}.ipynb", as_version=4)
    return "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))


def test_grading_ran_sandboxed(graded):
    assert graded.run.unsandboxed_because is None


def test_honest_submissions_graded_beside_attacks_keep_their_scores(graded):
    by_student = {(r.student, r.assignment): r.score for r in graded.run.records.all()}
    assert by_student["all-right", A01] == 10.0 and by_student["partial", A01] == 7.0


@pytest.mark.parametrize("student", sorted(SCORE_ATTACKS))
def test_a_score_attack_gains_nothing_and_is_named(graded, student):
    record = records(graded)[student]
    assert record.score <= 7.0
    assert record.status is Status.TAMPERED or any(p.startswith("put back before test_") for p in record.problems)
    assert record.flags, "the static scan should name the lines of the attack"


def test_hijacking_during_a_test_scores_the_notebook_as_tampered(graded):
    record = records(graded)["attack-during-a-test"]
    assert record.status is Status.TAMPERED
    assert record.detail.startswith("while test_add_scaled_ ran, the notebook changed ")
    assert "shell.showtraceback" in record.detail


@pytest.mark.parametrize(("student", "event"), [("attack-audit-hook", "sys.addaudithook"),
                                                ("attack-ctypes", "ctypes.")])
def test_what_cannot_be_undone_scores_the_notebook_as_tampered(graded, student, event):
    record = records(graded)[student]
    assert record.status is Status.TAMPERED and f"audit event {event}" in record.detail


def test_no_file_outside_a_scratch_folder_changed(graded):
    assert graded.changed_files == []
    # It does find and overwrite its own scratch copy: the one folder it may write.
    damaged = ast.literal_eval(printed(graded, "attack-files").split("damaged: ")[1].splitlines()[0])
    own = str(graded.course / "grading" / "scratch" / "jobs" / "attack-files") + "/"
    assert all(path.startswith(own) for path in damaged), damaged


def test_nothing_reached_the_network(graded):
    assert graded.connections == []
    assert "reached: []" in printed(graded, "attack-network")


def test_no_process_outlives_its_grading(graded):
    assert "left two sleepers behind" in printed(graded, "attack-processes")
    assert graded.surviving_processes == [] == grading_processes()


def test_memory_beyond_the_cap_is_refused(graded):
    assert "allocation refused" in printed(graded, "attack-memory")


def test_the_fork_bomb_meets_the_process_cap(graded):
    output = printed(graded, "attack-fork-bomb")
    assert "fork refused: BlockingIOError" in output
    assert int(output.split("children:")[1].split()[0]) < Limits.processes


def test_leaked_hidden_tests_are_cut_from_feedback(graded):
    """The leak reaches the graded notebook (a kernel cannot stop it), not the student."""
    assert "### BEGIN HIDDEN TESTS" in printed(graded, "attack-print-hidden-tests")
    page = (graded.outputs.feedback / "attack-print-hidden-tests" / A01 / f"{A01}.html").read_text()
    assert "HIDDEN TESTS" not in page and "a line of the hidden tests was removed here" in page


def test_the_report_lists_the_flagged_lines(graded):
    report = graded.outputs.report.read_text()
    assert "Code to read" in report and "ast_transformers changes how IPython runs cells" in report


def test_unsandboxed_grading_agrees_and_says_so(graded, tmp_path):
    students = ("all-right", "partial")
    course = demo_course(REPO, tmp_path / "course")
    for folder in course.glob("submitted/*/*"):
        if folder.name != A01:  # one assignment is enough to compare, and saves a minute
            shutil.rmtree(folder)
    with pytest.warns(UserWarning, match="grading UNSANDBOXED"):
        run = grade_course(course, Options(workers=2, students=students, sandbox=False, **FAST))
    assert run.unsandboxed_because == "the sandbox was switched off (--no-sandbox)"
    sandboxed = {key: score for key, score in cell_scores(graded.course).items() if key[0] in students}
    sandboxed = {key: score for key, score in sandboxed.items() if key[1] == A01}
    assert cell_scores(course) == sandboxed and len(sandboxed) == 6
