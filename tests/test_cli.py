"""The command's exit status: non-zero, with the list, while a folder could not be graded;
every other folder is graded all the same."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbformat.v4 import new_notebook

from autograder import cli
from autograder.grading.pipeline import Run
from autograder.results.records import Record, Records
from autograder.reports.write import ReportFiles
from autograder.status import NOT_GRADED, Status


@pytest.fixture
def run_with(monkeypatch, tmp_path):
    def run(*statuses: Status) -> None:
        records = Records(tmp_path / "records.json")
        for index, status in enumerate(statuses):
            records.save(Record(f"student-{index}", "a01", status, f"because {index}"))
        monkeypatch.setattr(cli, "grade_course", lambda course, options: Run(records, [], {}))
        monkeypatch.setattr(cli, "write_reports", lambda *args: ReportFiles(tmp_path, tmp_path, tmp_path, tmp_path,
                                                                         tmp_path, {}))
        cli.main(["grade", "--course", str(tmp_path)])
    return run


@pytest.mark.parametrize("failure", sorted(NOT_GRADED))
def test_a_folder_that_could_not_be_graded_makes_the_command_fail_and_is_named(run_with, capsys, failure):
    with pytest.raises(SystemExit, match="1 submission folder") as stopped:
        run_with(Status.GRADED, failure, Status.MISSING)
    label = "GRADER ERROR" if failure is Status.GRADER_ERROR else "NOT GRADED"
    assert f"{label}: student-1/a01: because 1" in capsys.readouterr().out
    assert ("the next run grades them again" in str(stopped.value)) == (failure is Status.GRADER_ERROR)


def test_zero_scores_for_what_a_student_left_out_or_broke_are_not_failures(run_with):
    run_with(Status.GRADED, Status.MISSING, Status.EMPTY, Status.WRONG_ASSIGNMENT, Status.TIMED_OUT, Status.HELD)


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course of one assignment and one student; grading itself only records its options."""
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(), tmp_path / "source" / "ps1" / "p1.ipynb")
    (tmp_path / "submitted" / "alice" / "ps1").mkdir(parents=True)
    given = []

    def grade(course, options):
        given.append(options)
        return Run(Records(tmp_path / "records.json"), [], {})
    monkeypatch.setattr(cli, "grade_course", grade)
    monkeypatch.setattr(cli, "write_reports", lambda *args: ReportFiles(tmp_path, tmp_path, tmp_path, tmp_path,
                                                                     tmp_path, {}))
    return tmp_path, given


@pytest.mark.parametrize(("flags", "error"), [
    (["--student", "alcie"], "no student 'alcie' in the course's submitted/; did you mean alice?"),
    (["--assignment", "ps2"], "no assignment 'ps2' in the course's source/; did you mean ps1?"),
    (["--assignment", "final"], "no assignment 'final' in the course's source/; it has ps1"),
])
def test_a_name_the_course_does_not_have_is_an_error_with_the_nearest_ones(course, flags, error):
    root, given = course
    with pytest.raises(SystemExit, match=re.escape(error)):
        cli.main(["grade", "--course", str(root), *flags])
    assert given == []


def test_one_assignment_is_graded_without_an_archive(course):
    root, given = course
    cli.main(["grade", "--course", str(root), "--assignment", "ps1", "--student", "alice"])
    assert (given[0].assignments, given[0].students) == (("ps1",), ("alice",))


def test_a_missing_course_folder_is_a_one_line_error(tmp_path):
    with pytest.raises(SystemExit, match="is not a folder: --course names a course folder"):
        cli.main(["grade", "--course", str(tmp_path / "nowhere")])


def test_ctrl_c_stops_with_what_was_saved(course, monkeypatch):
    root, _ = course

    def interrupted(course, options):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "grade_course", interrupted)
    with pytest.raises(SystemExit, match="interrupted: every folder graded so far is saved"):
        cli.main(["grade", "--course", str(root)])


def test_without_a_course_outside_the_repository_the_command_asks_for_one(tmp_path, monkeypatch):
    """The demo class is graded without --course only in the course's repository; an
    installed grader run anywhere else says what to give it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="is not the course's repository .*name your course folder with --course"):
        cli.main(["grade"])
    assert list(tmp_path.iterdir()) == []
