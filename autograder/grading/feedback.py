"""Feedback that shows students what failed, never the hidden tests, and nothing that runs.

nbgrader's own ``generate_feedback``, with two steps appended to its preprocessors
(``preprocessors.hidden_tests``): the hidden tests' quotes redacted from every output,
then their regions cleared from the test cells. Nothing on the page can run: the graded
notebook it is made from was made inert as it was graded (``preprocessors.inert``).
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
from autograder.preprocessors.hidden_tests import ClearHiddenTestsInTestCells, RedactHiddenTests


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
        "GenerateFeedback": {"preprocessors": [*defaults, RedactHiddenTests, ClearHiddenTestsInTestCells],
                             "exporter_class": FeedbackExporter},
    })
