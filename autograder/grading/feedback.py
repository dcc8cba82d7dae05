"""Feedback that shows students what failed, never the hidden tests, and nothing that runs.

nbgrader's own ``generate_feedback``, with four steps appended to its preprocessors: raw
cells shown as their text (``preprocessors.inert``), then (``preprocessors.hidden_tests``)
of what the hidden tests' run produced only its error's verdict, the hidden tests' quotes
redacted from every output, and their regions cleared from the test cells. Nothing on the
page can run: the graded notebook it is made from was made inert as it was graded
(``preprocessors.inert``; raw cells are made text again here for notebooks graded before
that step did it).
Its HTML exporter keeps the templates it compiled for the whole process: compiling them
again for every page was half of a page's cost.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from nbconvert.exporters import HTMLExporter
from nbgrader.converters import GenerateFeedback

from autograder.nbgrader_api import generate_feedback
from autograder.preprocessors.hidden_tests import (
    ClearHiddenTestsInTestCells, HiddenTestsVerdictOnly, RedactHiddenTests,
)
from autograder.preprocessors.inert import RawCellsAsText

# After nbgrader's own; the verdict step before redaction, which then redacts its message too.
FEEDBACK_STEPS = (RawCellsAsText, HiddenTestsVerdictOnly, RedactHiddenTests, ClearHiddenTestsInTestCells)


class _CompiledTemplates(BytecodeCache):
    """Compiled templates in memory, by jinja's key (a template's name, and a checksum of its
    source: a template that changed is compiled again)."""

    def __init__(self):
        self._compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self._compiled:
            bucket.bytecode_from_string(self._compiled[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._compiled[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback exporter (configured as ``HTMLExporter``), with the process's
    compiled templates."""

    @property
    def environment(self):
        environment = super().environment
        environment.bytecode_cache = _COMPILED
        return environment


def render_feedback(course: Path, assignment: str, student: str) -> None:
    """nbgrader's generate_feedback for one graded submission, made safe to hand back."""
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    generate_feedback(course, assignment, student, {
        "GenerateFeedback": {"preprocessors": [*defaults, *FEEDBACK_STEPS],
                             "exporter_class": FeedbackExporter},
    })
