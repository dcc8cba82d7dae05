"""Feedback that shows students what failed, never the hidden tests, and nothing that runs.

nbgrader's own ``generate_feedback``, with two steps appended to its preprocessors
(``preprocessors.hidden_tests``): the hidden tests' quotes redacted from every output,
then their regions cleared from the test cells. Nothing on the page can run: the graded
notebook it is made from was made inert as it was graded (``preprocessors.inert``).
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.converters import GenerateFeedback

from autograder.nbgrader_api import generate_feedback
from autograder.preprocessors.hidden_tests import ClearHiddenTestsInTestCells, RedactHiddenTests


def render_feedback(course: Path, assignment: str, student: str) -> None:
    """nbgrader's generate_feedback for one graded submission, made safe to hand back."""
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    generate_feedback(course, assignment, student, {
        "GenerateFeedback": {"preprocessors": [*defaults, RedactHiddenTests, ClearHiddenTestsInTestCells]},
    })
