"""Feedback that shows students what failed, never the hidden tests themselves.

nbgrader's feedback renders the autograded notebook, whose test cells carry the full
instructor source, hidden section included, and whose error outputs quote the failing
line of it in the traceback. This preprocessor, added to nbgrader's GenerateFeedback,
removes the hidden section and keeps only the name and message of each test cell's
error: the message from ``autograder.checks`` is written to be read on its own.
"""

from __future__ import annotations

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor


class HideHiddenTests(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        clear = ClearHiddenTests(parent=self)
        for cell in nb.cells:
            if cell.cell_type != "code" or not utils.is_grade(cell):
                continue
            clear._remove_hidden_test_region(cell)
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return nb, resources
