"""The command's exit status: non-zero, with the list, while a folder could not be graded;
every other folder is graded all the same."""

from __future__ import annotations

import pytest

from autograder import cli
from autograder.grading.pipeline import Run
from autograder.grading.records import Record, Records
from autograder.grading.reports import Outputs
from autograder.grading.status import NOT_GRADED, Status


@pytest.fixture
def run_with(monkeypatch, tmp_path):
    def run(*statuses: Status) -> None:
        records = Records(tmp_path / "records.json")
        for index, status in enumerate(statuses):
            records.save(Record(f"student-{index}", "a01", status, f"because {index}"))
        monkeypatch.setattr(cli, "grade_course", lambda course, options: Run(records, [], {}))
        monkeypatch.setattr(cli, "write_reports", lambda *args: Outputs(tmp_path, tmp_path, tmp_path, tmp_path,
                                                                         tmp_path, {}))
        cli.main(["grade", "--course", str(tmp_path)])
    return run


@pytest.mark.parametrize("failure", sorted(NOT_GRADED))
def test_a_folder_that_could_not_be_graded_makes_the_command_fail_and_is_named(run_with, capsys, failure):
    with pytest.raises(SystemExit, match="1 submission folder"):
        run_with(Status.GRADED, failure, Status.MISSING)
    assert "NOT GRADED: student-1/a01: because 1" in capsys.readouterr().out


def test_zero_scores_for_what_a_student_left_out_or_broke_are_not_failures(run_with):
    run_with(Status.GRADED, Status.MISSING, Status.EMPTY, Status.WRONG_ASSIGNMENT, Status.TIMED_OUT, Status.HELD)
