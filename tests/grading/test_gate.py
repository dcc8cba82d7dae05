"""The gate of a grading run (``pipeline._Gate``): no student's result is saved before the
trial and the second witness's references are in, and either one failing stops the run,
the trial's verdict first."""

from __future__ import annotations

import pytest

from autograder.grading import pipeline
from autograder.grading.jobs import GradingJob, JobResult, JobSettings, ReferenceJob
from autograder.status import Status

RECORDERS = {"ps1.ipynb": {"test_f": "def witness_f(f, record): ..."}}


def reference(tmp_path, assignment="ps1") -> ReferenceJob:
    return ReferenceJob(assignment, "digest", JobSettings(60.0), notebooks={"ps1.ipynb": None}, recorders=RECORDERS)


def recorded(job, status=Status.GRADED, records=None) -> JobResult:
    records = {"ps1.ipynb": {"test_f": {"entries": []}}} if records is None else records
    return JobResult(job.student, job.assignment, status, "", 1.0, records=records)


@pytest.fixture
def trial(tmp_path, monkeypatch) -> GradingJob:
    """A trial job whose verdict is its result's status (no kernel involved)."""
    monkeypatch.setattr(pipeline, "trial_problem", lambda course, job, result, log_folder:
                        None if result.status is Status.GRADED else f"came out '{result.status.value}'")
    return GradingJob("grader-trial", "ps1", "digest", JobSettings(60.0), {"ps1.ipynb": b"{}"})


def test_the_gate_opens_once_the_trial_and_every_reference_are_in(tmp_path, trial):
    ref = reference(tmp_path)
    gate = pipeline._Gate(None, tmp_path, trial, [ref])
    assert gate.take(ref, recorded(ref)) and not gate.open
    assert gate.take(trial, recorded(trial)) and gate.open
    assert gate.references == {"ps1": {"ps1.ipynb": {"test_f": {"entries": []}}}}
    student = GradingJob("ada", "ps1", "digest", JobSettings(60.0), {"ps1.ipynb": b"{}"})
    assert not gate.take(student, recorded(student))  # not the gate's


@pytest.mark.parametrize(("status", "records"), [
    (Status.KERNEL_DIED, None),
    (Status.GRADED, {"ps1.ipynb": {}}),  # the recorder's record never came
])
def test_a_reference_that_cannot_be_recorded_stops_the_run(tmp_path, status, records):
    ref = reference(tmp_path)
    gate = pipeline._Gate(None, tmp_path, None, [ref])
    with pytest.raises(SystemExit, match="the second witness's reference for ps1 could not be recorded"):
        gate.take(ref, recorded(ref, status, records))


def test_a_broken_kernel_is_named_before_a_reference_that_failed_with_it(tmp_path, trial):
    ref = reference(tmp_path)
    gate = pipeline._Gate(None, tmp_path, trial, [ref])
    gate.take(ref, recorded(ref, Status.KERNEL_DIED))  # waits for the trial's verdict
    with pytest.raises(SystemExit, match="the grading kernel does not work"):
        gate.take(trial, recorded(trial, Status.KERNEL_DIED))


def test_a_recorder_that_fails_on_the_instructors_solution_is_left_out_and_named(tmp_path):
    ref = reference(tmp_path)
    gate = pipeline._Gate(None, tmp_path, None, [ref])
    with pytest.warns(UserWarning, match="no second witness for ps1 test_f"):
        gate.take(ref, recorded(ref, records={"ps1.ipynb": {"test_f": {"failure": "NameError"}}}))
    assert gate.references == {"ps1": {"ps1.ipynb": {}}} and gate.coverage() == "no recorders declared"
