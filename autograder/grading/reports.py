"""What a grading run leaves for the TA: CSVs, feedback, and an HTML summary report.

- ``grades.csv``: nbgrader's CSV export of the gradebook, written safely (``tables``).
- ``tests.csv``: one row per student, assignment and test cell, with its score.
- ``grading/report.html``: score histograms, pass rate per test, problems, lines the static
  scan flags, slowest notebooks.
"""

from __future__ import annotations

import base64
import html
import io
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from nbgrader.api import Gradebook, MissingEntry

from autograder.course import Course
from autograder.grading.records import Records
from autograder.grading.tables import SafeCsvExportPlugin, write_csv
from autograder.grading.status import Status


@dataclass(frozen=True)
class Outputs:
    course: Path
    grades_csv: Path
    tests_csv: Path
    feedback: Path
    report: Path
    counts: dict[str, int]

    def summary_lines(self) -> list[str]:
        counted = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items()))
        return [
            f"graded course: {self.course}",
            f"submission folders: {counted}",
            f"grades:   {self.grades_csv}",
            f"per test: {self.tests_csv}",
            f"feedback: {self.feedback}",
            f"report:   {self.report}",
        ]


@dataclass(frozen=True)
class TestScore:
    student: str
    assignment: str
    test: str
    score: float
    max_score: float


def write_reports(course: Path, records: Records, settings: dict[str, object] | None = None) -> Outputs:
    """grades.csv, tests.csv and the HTML report (with the ``settings`` the run used, if given)."""
    course = Course(course)
    grades_csv = course.root / "grades.csv"
    with Gradebook(course.gradebook_url) as gradebook:
        SafeCsvExportPlugin(to=str(grades_csv)).export(gradebook)
        tests = _test_scores(gradebook, records)
    tests_csv = course.root / "tests.csv"
    write_csv(tests_csv, ("student", "assignment", "test", "score", "max_score"),
              ((t.student, t.assignment, t.test, t.score, t.max_score) for t in tests))
    report = course.root / "grading" / "report.html"
    report.write_text(_report_html(records, tests, settings or {}))
    counts: dict[str, int] = defaultdict(int)
    for record in records.all():
        counts[record.status.value] += 1
    return Outputs(course.root, grades_csv, tests_csv, course.folder("feedback"), report, dict(counts))


def _test_scores(gradebook: Gradebook, records: Records) -> list[TestScore]:
    scores = []
    for record in records.all():
        try:
            submission = gradebook.find_submission(record.assignment, record.student)
        except MissingEntry:  # a folder refused or of no assignment: nothing in the gradebook
            continue
        several = len(submission.notebooks) > 1  # then a test is named with its notebook: ids repeat across them
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.cell_type == "code":
                    name = f"{notebook.name}/{grade.name}" if several else grade.name
                    scores.append(TestScore(record.student, record.assignment, name, grade.score, grade.max_score))
    return scores


def _figure(draw) -> str:
    figure, axes = plt.subplots(figsize=(7, 3))
    draw(axes)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def _report_html(records: Records, tests: list[TestScore], settings: dict[str, object]) -> str:
    rows = records.all()
    by_assignment: dict[str, list[float]] = defaultdict(list)
    for record in rows:
        if record.max_score:  # in the gradebook
            by_assignment[record.assignment].append(100 * record.score / record.max_score)

    def histogram(axes):
        axes.hist(list(by_assignment.values()), bins=range(0, 110, 10), label=list(by_assignment), stacked=True)
        axes.set_xlabel("score (% of the assignment's points)")
        axes.set_ylabel("students")
        axes.yaxis.get_major_locator().set_params(integer=True)
        axes.legend(fontsize=7)
        axes.set_title("Scores per assignment")

    passed: dict[str, list[bool]] = defaultdict(list)
    for t in tests:
        passed[f"{t.assignment}: {t.test}"].append(t.score == t.max_score)
    names = sorted(passed)

    def pass_rates(axes):
        rates = [100 * sum(passed[n]) / len(passed[n]) for n in names]
        axes.barh(names, rates, color="tab:blue")
        axes.set_xlim(0, 100)
        axes.invert_yaxis()
        axes.set_xlabel("% of submissions passing")
        axes.set_title("Pass rate per test")
        axes.tick_params(axis="y", labelsize=7)

    slowest = sorted((r for r in rows if r.seconds), key=lambda r: -r.seconds)[:10]
    problems = [r for r in rows if r.status is not Status.GRADED or r.problems]

    def table(header, body):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in body)
        return f"<table><tr>{head}</tr>{cells}</table>"

    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Grading report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}td,th{{border:1px solid #ccc;padding:2px 6px}}
table{{border-collapse:collapse}}</style></head><body>
<h1>Grading report</h1>
<p>{len(rows)} submission folders, {sum(r.status is Status.GRADED for r in rows)} graded without problems.</p>
<h2>Scores</h2>{_figure(histogram) if by_assignment else "<p>No scores.</p>"}
<h2>Tests</h2>{_figure(pass_rates) if names else "<p>No tests ran.</p>"}
<h2>Problems</h2>{table(["student", "assignment", "status", "detail", "notes"],
    [(r.student, r.assignment, r.status.value, r.detail, "; ".join(r.problems)) for r in problems])}
<h2>Code to read</h2>
<p>Lines of students' own code that break the course's policy: they reach for what can
forge a score (IPython, the kernel, the interpreter, the tests' own objects) and honest
answers never need. No check inside the kernel can stop such code, so these notebooks are
held for review: their scores are not final. Read the lines, then grade the notebook in
nbgrader's formgrader (it lists them as needing manual grading) before releasing grades.</p>
{table(["student", "assignment", "where, what and why"],
    [(r.student, r.assignment, flag) for r in rows for flag in r.flags])
  if any(r.flags for r in rows) else "<p>None.</p>"}
<h2>Slowest notebooks</h2>{table(["student", "assignment", "seconds"],
    [(r.student, r.assignment, r.seconds) for r in slowest])}
<h2>Every submission</h2>{table(["student", "assignment", "status", "score", "max"],
    [(r.student, r.assignment, r.status.value, r.score, r.max_score) for r in rows])}
<h2>Settings</h2>{table(["setting (nbgrader configuration)", "value"], sorted(settings.items()))
                  if settings else "<p>Not recorded.</p>"}
</body></html>"""
