"""Feedback that shows students what failed, never the hidden tests, and nothing that runs.

nbgrader's own ``generate_feedback``, with four steps appended to its preprocessors: raw
cells shown as their text (``preprocessors.inert``), then (``preprocessors.hidden_tests``)
of what the hidden tests' run produced only its error's verdict, the hidden tests' quotes
redacted from every output, and their regions cleared from the test cells. Nothing on the
page can run: the graded notebook it is made from was made inert as it was graded
(``preprocessors.inert``; raw cells are made text again here for notebooks graded before
that step did it).
Its HTML exporter keeps the templates it compiled for the whole process (compiling them
again for every page was half of a page's cost), and makes nbconvert's accessibility
touches (alt text on images that have none, focusable input and output areas) with
patterns instead of a BeautifulSoup parse of the whole page, which took half of what was
left: the page is the template's HTML around cleaned outputs (``preprocessors.inert``), and
the tests check that it parses to what nbconvert's own pass gives.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
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


# What nbconvert's HTMLExporter adds to a page after its template ran.
NO_ALT_TEXT = "No description has been provided for this image"
_IMAGE_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)(?=[\s>/])")
_FOCUSABLE = re.compile(r'<div class="((?:[^"]*\s)?(?:jp-Cell-inputWrapper|jp-OutputArea-output)(?:\s[^"]*)?)"')


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback exporter (configured as ``HTMLExporter``), with the process's
    compiled templates and the accessibility touches made without a parse of the page."""

    @property
    def environment(self):
        environment = super().environment
        environment.bytecode_cache = _COMPILED
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        """``HTMLExporter.from_notebook_node`` up to its BeautifulSoup pass (the same
        filters, the same template), then that pass's changes as patterns."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        self.register_filter("highlight_code",
                             self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type",
                             WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self,
                                                   resources=resources))
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return accessible(html), resources


def accessible(html: str) -> str:
    """What nbconvert's HTMLExporter does to a page with BeautifulSoup: every image without
    alt text gets its placeholder, every input and output area is focusable."""
    html = _IMAGE_WITHOUT_ALT.sub(f'<img alt="{NO_ALT_TEXT}"', html)
    return _FOCUSABLE.sub(r'<div class="\1" tabindex="0"', html)


def render_feedback(course: Path, assignment: str, student: str) -> None:
    """nbgrader's generate_feedback for one graded submission, made safe to hand back."""
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    generate_feedback(course, assignment, student, {
        "GenerateFeedback": {"preprocessors": [*defaults, *FEEDBACK_STEPS],
                             "exporter_class": FeedbackExporter},
    })
