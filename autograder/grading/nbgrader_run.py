"""Run nbgrader's converters in this process, on one course folder.

Starting the ``nbgrader`` command costs seconds of imports per call; grading workers, the
merging step and release generation call the converters directly instead, with the
course's own ``nbgrader_config.py`` and a few overrides.
"""

from __future__ import annotations

import glob
import logging
import warnings
from pathlib import Path

from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback, NbGraderException
from nbgrader.coursedir import CourseDirectory
from sqlalchemy.engine import URL
from sqlalchemy.exc import SAWarning
from traitlets.config import Config, PyFileConfigLoader

from autograder.nbgrader_cli import put_scripts_on_path


def quiet_nbgrader_internals() -> None:
    """nbgrader's gradebook makes SQLAlchemy warn about its own session use on every
    submission; the warnings say nothing to a TA and would bury the progress bar."""
    warnings.filterwarnings("ignore", category=SAWarning)


def gradebook_url(course: Path) -> str:
    """The URL of ``course``'s gradebook, whatever characters its path holds (``?``, ``#``, ``%``)."""
    return URL.create("sqlite", database=str(course / "gradebook.db")).render_as_string()


def course_config(course: Path, overrides: dict) -> Config:
    """The course's nbgrader configuration, with ``overrides`` ({Class: {trait: value}}) on top."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.db_url = gradebook_url(course)
    config.merge(Config(overrides))
    config.CourseDirectory.root = str(course)
    return config


def autograde(course: Path, assignment: str, student: str, overrides: dict | None = None) -> None:
    """``nbgrader autograde ASSIGNMENT --student STUDENT --force`` on ``course``."""
    _convert(Autograde, course, assignment, overrides, student=student)


def generate_feedback(course: Path, assignment: str, student: str, overrides: dict | None = None) -> None:
    """``nbgrader generate_feedback ASSIGNMENT --student STUDENT --force`` on ``course``."""
    _convert(GenerateFeedback, course, assignment, overrides, student=student)


def generate_assignment(course: Path, assignment: str, overrides: dict | None = None) -> None:
    """``nbgrader generate_assignment ASSIGNMENT --force`` on ``course``."""
    _convert(GenerateAssignment, course, assignment, overrides)


def _convert(converter_class, course: Path, assignment: str, overrides: dict | None,
             student: str | None = None) -> None:
    """Run one nbgrader converter, for one student or all; raise ``RuntimeError``
    carrying the errors it logged."""
    put_scripts_on_path()
    config = course_config(course, overrides or {})
    config.CourseDirectory.assignment_id = assignment
    # nbgrader reads the student id as a glob pattern: a folder named "a[1]" is one student.
    config.CourseDirectory.student_id = glob.escape(student) if student else "*"
    config.BaseConverter.force = True
    coursedir = CourseDirectory(config=config)
    converter = converter_class(coursedir=coursedir, config=config)
    errors = _ErrorLog()
    converter.log.setLevel(logging.ERROR)
    converter.log.addHandler(errors)
    try:
        converter.start()
    except NbGraderException:
        raise RuntimeError("\n".join(errors.messages)) from None
    finally:
        converter.log.removeHandler(errors)


class _ErrorLog(logging.Handler):
    """Keeps what nbgrader logs at ERROR level: its exceptions only say "see the log"."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
