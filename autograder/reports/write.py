"""What a grading run leaves for the TA beside the feedback pages: CSVs and an HTML summary report.

- ``grades.csv``: nbgrader's CSV export of the gradebook, written safely (``csv_files``).
- ``tests.csv``: one row per student, assignment and test cell, with its score.
- ``grading/report.html`` (``page``): whether kernels ran sandboxed, every folder
  counted once by outcome (``outcomes``), every student against every assignment with
  totals and links to the feedback pages (``class_table``), problems, folders without
  feedback and why, score histograms, pass rate per test, lines the static scan flags,
  slowest notebooks, the settings in force.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.course import Course
from autograder.results.class_grades import ClassGrades, class_grades
from autograder.results.lms_records import LmsRecords, left_out
from autograder.reports.outcomes import tallies, this_run
from autograder.results.records import Records
from autograder.reports.page import render_report
from autograder.reports.class_table import class_table
from autograder.csv_files import SafeCsvExportPlugin, write_csv


@dataclass(frozen=True)
class ReportFiles:
    course: Path
    grades_csv: Path
    tests_csv: Path
    feedback: Path
    report: Path
    counts: dict[str, int]  # outcome -> folders, as the report's headline counts them
    this_run: list[tuple[str, int]] | None = None  # what this run did with each folder (``outcomes.this_run``)

    def summary_lines(self) -> list[str]:
        counted = ", ".join(f"{n} {outcome}" for outcome, n in self.counts.items())
        done = [f"this run: {'; '.join(f'{n} {part}' for part, n in self.this_run)}"] if self.this_run else []
        return [
            f"graded course: {self.course}",
            f"submission folders: {sum(self.counts.values())} ({counted})",
            *done,
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


def write_reports(course: Path, records: Records, settings: dict[str, object] | None = None,
                  graded_now: list[str] | None = None) -> ReportFiles:
    """grades.csv, tests.csv and the HTML report (with the ``settings`` the run used, and
    the folders it graded, ``Run.graded_now``, if given)."""
    course = Course(course)
    grades_csv = course.root / "grades.csv"
    with Gradebook(course.gradebook_url) as gradebook:
        SafeCsvExportPlugin(to=str(grades_csv)).export(gradebook)
        tests = _test_scores(gradebook, records)
    tests_csv = course.root / "tests.csv"
    write_csv(tests_csv, ("student", "assignment", "test", "score", "max_score"),
              ((t.student, t.assignment, t.test, t.score, t.max_score) for t in tests))
    grades = class_grades(course, LmsRecords.of(course.root), records, datetime.now(timezone.utc).replace(tzinfo=None))
    report = course.grader_folder.report
    rows = records.all()
    table = class_table(grades, rows, {each.name: course.notebook_names(each.name) for each in grades.assignments},
                        course.folder("feedback"), report.parent)
    passed: dict[str, list[bool]] = {}
    for t in tests:
        passed.setdefault(f"{t.assignment}: {t.test}", []).append(t.score == t.max_score)
    report.write_text(render_report(rows, table, _percentages(grades), passed, settings or {}, graded_now,
                                    left_out(course.root)))
    counts = {tally.outcome: tally.count for tally in tallies(rows)}
    done = this_run(rows, graded_now) if graded_now is not None else None
    return ReportFiles(course.root, grades_csv, tests_csv, course.folder("feedback"), report, counts, done)


def _percentages(grades: ClassGrades) -> dict[str, list[float]]:
    """Each assignment's graded submissions, in % of its points."""
    return {assignment.name: [100 * standing.score / assignment.max_score
                              for (_, name), standing in grades.standings.items()
                              if name == assignment.name and standing.graded]
            for assignment in grades.assignments if assignment.max_score}


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
