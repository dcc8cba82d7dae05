"""CSV files a TA opens in a spreadsheet: every field quoted, and no cell a formula.

Student ids and file names come from students. A cell that starts with ``=``, ``+``,
``-`` or ``@`` is a formula in Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)``
runs when clicked), and an unquoted comma or newline forges extra fields or rows. Every
field is quoted, and a text that a spreadsheet would read as a formula is prefixed with
an apostrophe, which spreadsheets show as plain text. Numbers are written as numbers.
"""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GRADES_COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                  "raw_score", "late_submission_penalty", "score", "max_score")


def safe_cell(value) -> str | int | float:
    """A value as a spreadsheet may show it, never run it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def write_csv(path: Path, header: list[str] | tuple[str, ...], rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_ALL)
        writer.writerow(header)
        writer.writerows([safe_cell(value) for value in row] for row in rows)


class SafeCsvExportPlugin(ExportPlugin):
    """nbgrader's CSV export (the same columns, a row for every student and assignment,
    zero where nothing was submitted), written safely; also usable as
    ``nbgrader export --exporter=autograder.csv_files.SafeCsvExportPlugin``."""

    def export(self, gradebook: Gradebook) -> None:
        write_csv(Path(self.to or "grades.csv"), GRADES_COLUMNS, self._rows(gradebook))

    def _rows(self, gradebook: Gradebook):
        for assignment in gradebook.assignments:
            if self.assignment and assignment.name not in self.assignment:
                continue
            for student in gradebook.students:
                if self.student and student.id not in self.student:
                    continue
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    timestamp, raw, penalty = None, 0.0, 0.0
                else:
                    timestamp, raw, penalty = submission.timestamp, submission.score, submission.late_submission_penalty
                yield (assignment.name, assignment.duedate, timestamp, student.id, student.last_name,
                       student.first_name, student.email, raw, penalty, max(0.0, raw - penalty), assignment.max_score)
