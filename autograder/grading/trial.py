"""Before any student's notebook counts: the course's own released notebook, graded as a
submission in the real grading kernel with the run's settings.

When the grading environment is broken (no kernel starts in the sandbox, a memory limit
too small for Python, torch missing where the kernel looks), every notebook of the run
would score a zero nobody earned. If the released notebook (which fails its tests but
runs) cannot be graded, the run stops with the cause instead, before any folder, record
or grade is touched. It is the first job of the run (the class's jobs run beside it,
in scratch folders; the pipeline collects none of them before the trial's verdict), once
per process for each kernel configuration: what the kernel is started with (sandbox,
limits, guard, the executor's kernel arguments), not the time limits or the number of
workers.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import nbformat
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from autograder.course import Course
from autograder.gradebook import released_notebook
from autograder.grading.jobs import GradingJob, JobResult, JobSettings, make_job
from autograder.settings import GradingSettings
from autograder.status import Status

# Never a real student: the trial is graded in a scratch course of its own.
TRIAL_STUDENT = "grader-trial"
_checked: set[str] = set()


def trial_job(course: Course, model: GradingJob) -> GradingJob | None:
    """The job that grades the released notebooks of ``model``'s assignment as ``model``
    would be graded (same settings, same guard), or None when this configuration was
    checked already."""
    if _configuration(course, model) in _checked:
        return None
    overrides = Config(model.settings.overrides)
    overrides.merge(Config({"Autograde": {"create_student": True}}))
    return make_job(student=TRIAL_STUDENT, assignment=model.assignment, bundle=model.bundle,
                    notebooks={name: nbformat.read(released_notebook(course, model.assignment, name), as_version=4)
                               for name in course.notebook_names(model.assignment)},
                    files={}, settings=JobSettings(model.settings.notebook_timeout, overrides),
                    guard_torch=model.guard_torch, trusted=True)


def trial_problem(course: Course, job: GradingJob, result: JobResult, log_folder: Path) -> str | None:
    """Why the trial ``job`` came out as no working kernel grades (``result``), or None
    when it was graded."""
    if result.status not in (Status.GRADED, Status.TIMED_OUT):  # a cell past its timeout ran in a working kernel
        return (f"the released notebook of {job.assignment}, graded as a submission, came out "
                f"'{result.status.value}': {result.detail} (the worker's log is in {log_folder})")
    _checked.add(_configuration(course, job))
    return None


def _configuration(course: Course, model: GradingJob) -> str:
    settings = GradingSettings(config=course.config)
    return json.dumps([asdict(settings.limits()), settings.sandbox, model.guard_torch,
                       Execute(config=course.config).extra_arguments])
