"""The TA's report, ``grading/report.html``: every student against every assignment with
totals and links to the feedback pages, every folder counted once in a headline that adds
up, a reason for every folder without feedback, whether kernels ran sandboxed, and nothing
a student wrote able to run on the page.

Pages are made from records and a class table built directly (no grading run), and once
through ``write_reports`` on a tiny gradebook made with nbgrader's API."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook

from autograder.results.class_grades import Assignment, Standing, ClassGrades, Student
from autograder.reports.outcomes import GRADED, MEANINGS, outcome, this_run
from autograder.results.records import Record, Records
from autograder.reports.page import render_report, script_hash
from autograder.reports.class_table import class_table
from autograder.reports.write import ReportFiles, write_reports
from autograder.status import Status
from tests.helpers.report_html import Page

HOSTILE = "<script>alert(1)</script>\"'../x"
MARKUP = "<img src=x onerror=alert(1)>"


def grades(cells: dict[tuple[str, str], Standing], points: dict[str, float]) -> ClassGrades:
    students = sorted({student for student, _ in cells})
    return ClassGrades([Student(student, student, "") for student in students],
                       [Assignment(name, maximum) for name, maximum in points.items()], cells)


def report(records: list[Record], tmp_path: Path, class_grades: ClassGrades | None = None,
           settings: dict | None = None, graded_now: list[str] | None = None) -> Page:
    """The report of ``records``, with feedback pages read from ``tmp_path/feedback``; the
    class is the records' students on one assignment ``a01`` of 10 points, unless given."""
    class_grades = class_grades or grades(
        {(record.student, "a01"): Standing(True, record.score, False)
         for record in records if record.assignment == "a01"},
        {"a01": 10.0})
    table = class_table(class_grades, records, {each.name: [f"{each.name}.ipynb"] for each in class_grades.assignments},
                        tmp_path / "feedback", tmp_path / "grading")
    return Page(render_report(records, table, {}, {}, settings or {}, graded_now))


def feedback_page(tmp_path: Path, student: str, assignment: str, notebook: str | None = None) -> Path:
    page = tmp_path / "feedback" / student / assignment / f"{notebook or assignment}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("feedback")
    return page


def test_every_student_has_every_assignment_and_a_total_in_id_order(tmp_path):
    class_grades = grades({("bo", "a01"): Standing(False, 0.0, False), ("bo", "a02"): Standing(False, None, False),
                           ("ada", "a01"): Standing(True, 7.0, False), ("ada", "a02"): Standing(True, 4.5, True)},
                          {"a01": 10.0, "a02": 5.0})
    records = [Record("ada", "a01", Status.GRADED, score=7.0), Record("ada", "a02", Status.GRADED, score=4.5),
               Record("bo", "a01", Status.MISSING, "expected a01.ipynb"),
               Record("cy", "99-extra", Status.UNKNOWN_ASSIGNMENT, "the course has a01, a02")]
    page = report(records, tmp_path, class_grades)
    assert [cell["text"] for cell in page.tables["students"][0]] == ["student", "a01", "a02", "other folders",
                                                                     "total"]
    assert page.rows("students") == [
        ["ada", "7 / 10", "4.5 / 5 late", "", "11.5 / 15"],
        ["bo", "0 / 10 missing notebook", "– no submission", "", "0 / 15"],
        ["cy", "– no submission", "– no submission", "99-extra: not an assignment of this course", "0 / 15"],
    ]
    sort_keys = [[cell["attrs"].get("data-sort") for cell in row[1:3]] for row in page.tables["students"][1:]]
    assert sort_keys == [["7.0", "4.5"], ["0.0", "-1"], ["-1", "-1"]]


def test_links_reach_the_feedback_pages_on_disk_through_quoted_names(tmp_path, empty_gradebook):
    root = tmp_path / "course"
    notebooks = {"a01": ["a01.ipynb"], "a02": ["p1.ipynb", "p2.ipynb"]}
    for assignment, names in notebooks.items():
        (root / "source" / assignment).mkdir(parents=True)
        for name in names:
            nbformat.write(new_notebook(), root / "source" / assignment / name)
    shutil.copy(empty_gradebook, root / "gradebook.db")
    students = ["star*%20#", "name with spaces", "quote\"'><b>x", "ada"]
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
        for assignment, names in notebooks.items():
            gradebook.add_assignment(assignment)
            for name in names:
                gradebook.add_notebook(Path(name).stem, assignment)
                gradebook.add_grade_cell("test_it", Path(name).stem, assignment, max_score=5, cell_type="code")
        for student in students:
            gradebook.add_student(student)
            gradebook.add_submission("a01", student)
    records = Records(root / "grading" / "records.json")
    for student in students[:3]:
        records.save(Record(student, "a01", Status.GRADED))
        feedback_page(root, student, "a01")
    records.save(Record("ada", "a01", Status.MISSING, "expected a01.ipynb"))
    records.save(Record("ada", "a02", Status.GRADED))
    pages = [feedback_page(root, "ada", "a02", "p1"), feedback_page(root, "ada", "a02", "p2")]

    outputs = write_reports(root, records, {"GradingSettings.sandbox": True})
    page = Page(outputs.report.read_text())
    links = {href: text for row in page.tables["students"][1:] for cell in row for href, text in cell["links"]}
    reached = {(outputs.report.parent / unquote(href)).resolve() for href in links}
    on_disk = {path.resolve() for path in (root / "feedback").rglob("*.html")}
    assert reached == on_disk
    assert len(links) == 5
    assert all(not set(href) & set(" #\"'<>*") for href in links)
    assert "../feedback/star%2A%2520%23/a01/a01.html" in links
    assert [links[f"../feedback/ada/a02/{page.name}"] for page in pages] == ["p1.ipynb", "p2.ipynb"]
    assert page.rows("without-feedback") == [["ada", "a01", "a01.ipynb", "missing notebook: expected a01.ipynb"]]


def test_a_hostile_student_id_and_notes_are_text_and_nothing_of_theirs_runs(tmp_path):
    quoted = "quote\"'><b>x"
    feedback_page(tmp_path, quoted, "a01")
    records = [Record(HOSTILE, "a01", Status.HELD, MARKUP, [MARKUP], [MARKUP]),
               Record(quoted, "a01", Status.GRADED, problems=[HOSTILE]),
               Record("../../etc", "a01", Status.FAILED, HOSTILE)]
    text = render_report(records, class_table(grades({}, {"a01": 10.0}), records, {"a01": ["a01.ipynb"]},
                                              tmp_path / "feedback", tmp_path / "grading"), {}, {}, {})
    page = Page(text)
    assert HOSTILE not in text and MARKUP not in text and quoted not in text
    assert [row[0] for row in page.rows("students")] == ["../../etc", HOSTILE, quoted]
    assert page.tables["students"][3][1]["links"] == [("../feedback/quote%22%27%3E%3Cb%3Ex/a01/a01.html", "feedback")]
    assert page.tables["students"][2][1]["attrs"]["title"] == f"{MARKUP}; {MARKUP}"
    assert [link for row in page.tables["students"] for cell in row for link in cell["links"]] == [
        ("../feedback/quote%22%27%3E%3Cb%3Ex/a01/a01.html", "feedback")]
    assert text.count("<script") == 1 and len(page.scripts) == 1
    assert f"script-src '{script_hash(page.scripts[0])}'" in page.policy  # our script runs, and only it
    assert "default-src 'none'" in page.policy


def every_status() -> list[Record]:
    """A folder for each status there is, and one graded with a note."""
    return [Record(f"s{index:02d}", "a01", status, f"because {index}") for index, status in enumerate(Status)] + [
        Record("s99", "a01", Status.GRADED, problems=["restored a cell"])]


def test_the_headline_counts_every_folder_once_and_problems_agree(tmp_path):
    records = every_status()
    page = report(records, tmp_path)
    outcomes = page.rows("outcomes")
    counted = {row[0]: int(row[1]) for row in outcomes[:-1]}
    assert outcomes[-1][:2] == ["all", str(len(records))]
    assert sum(counted.values()) == len(records)
    assert " ".join(page.paragraphs["headline"]["text"].split()) == (
        f"{len(records)} submission folders: " + ", ".join(f"{n} {name}" for name, n in counted.items()) + ".")
    listed = [status.split(": ") for row in outcomes[:-1] for status in row[2].split("; ")]
    assert {name for name, _ in listed} == {status.value for status in Status}  # one added later is counted too
    assert sum(int(count) for _, count in listed) == len(records)
    problems = page.rows("problems")
    assert len(problems) == len(records) - counted[GRADED]
    assert sorted(row[0] for row in problems) == sorted(r.student for r in records if outcome(r) != GRADED)
    assert page.paragraphs["problems-count"]["text"].startswith(f"{len(problems)} folders")


@pytest.mark.parametrize("status", list(Status))
def test_every_status_has_an_outcome_with_a_meaning(status):
    assert outcome(Record("ada", "a01", status)) in MEANINGS


def test_every_folder_without_a_feedback_page_says_why(tmp_path):
    records = every_status()
    with_pages = {"s00", "s01", "s99"}  # graded, held, graded with notes
    for student in with_pages:
        feedback_page(tmp_path, student, "a01")
    records.append(Record("t", "99-extra", Status.UNKNOWN_ASSIGNMENT, "the course has a01"))
    page = report(records, tmp_path)
    without = {row[0]: row[3] for row in page.rows("without-feedback")}
    assert set(without) == {record.student for record in records} - with_pages
    assert all(why for why in without.values())
    for record in records:
        if record.student in without and record.status is not Status.GRADED:
            assert without[record.student] == f"{record.status.value}: {record.detail}"
    graded_without_page = Record("s00", "a01", Status.GRADED)
    assert "regrade" in report([graded_without_page], tmp_path / "elsewhere").rows("without-feedback")[0][3]
    assert page.paragraphs["without-feedback-count"]["text"].endswith(
        f"{len(without)} folders lack one, each for the reason given.")


def test_a_notebook_missing_from_a_folder_gives_its_own_reason_for_having_no_page(tmp_path):
    """A multi-notebook submission without one notebook: graded, and that notebook has no
    page because it was missing, not because something went wrong (no regrade asked)."""
    feedback_page(tmp_path, "s00", "a01", "p1")
    record = Record("s00", "a01", Status.GRADED, problems=["p2.ipynb is missing: scored zero"])
    table = class_table(grades({("s00", "a01"): Standing(True, 5.0, False)}, {"a01": 10.0}), [record],
                        {"a01": ["p1.ipynb", "p2.ipynb"]}, tmp_path / "feedback", tmp_path / "grading")
    [without] = table.without_feedback
    assert (without.notebooks, without.why) == (["p2.ipynb"], "p2.ipynb is missing: scored zero")


@pytest.mark.parametrize(("settings", "shown", "css"), [
    ({"GradingSettings.sandbox": True}, "Student code ran sandboxed", "sandboxed"),
    ({"GradingSettings.sandbox": False}, "Student code ran UNSANDBOXED", "unsandboxed"),
    ({}, "was not recorded", "unknown"),
])
def test_whether_kernels_ran_sandboxed_is_shown(tmp_path, settings, shown, css):
    page = report([Record("ada", "a01", Status.GRADED)], tmp_path, settings=settings)
    assert shown in " ".join(page.paragraphs["sandbox"]["text"].split())
    assert page.paragraphs["sandbox"]["attrs"]["class"] == css
    if settings:
        assert [row[0] for row in page.rows("settings")] == sorted(settings)
    else:
        assert "settings" not in page.tables


def test_this_run_counts_each_folder_once(tmp_path):
    records = [Record("ada", "a01", Status.GRADED, seconds=3.0), Record("bo", "a01", Status.GRADED, seconds=2.0),
               Record("cy", "a01", Status.MISSING), Record("dee", "a01", Status.GRADER_ERROR)]
    text = report(records, tmp_path, graded_now=["ada/a01", "dee/a01"]).paragraphs["this-run"]["text"]
    assert [int(count) for count in re.findall(r"(?:This run: |; )(\d+) ", text)] == [1, 1, 1, 1]
    assert "this-run" not in report(records, tmp_path).paragraphs


def test_what_the_zip_import_left_out_is_in_the_report_as_text(tmp_path):
    records = [Record("ada", "a01", Status.GRADED, seconds=3.0)]
    table = class_table(grades({("ada", "a01"): Standing(True, 5.0, False)}, {"a01": 10.0}), records,
                        {"a01": ["a01.ipynb"]}, tmp_path / "feedback", tmp_path / "grading")
    hostile = "bo_1_2_<script>x</script>.py: not a notebook, nor a file a01 declares for students"
    page = Page(render_report(records, table, {}, {}, {}, None, {"a01": [hostile]}))
    assert page.rows("import-left-out") == [["a01", hostile]]
    assert "import-left-out" not in Page(render_report(records, table, {}, {}, {}, None, {})).tables


def test_this_run_says_why_it_graded_what_it_graded(tmp_path):
    """A regrade after a fix in source/ says so, beside the folders graded for other reasons."""
    fixed = "source/a01 changed since (the gradebook's tests were updated)"
    records = [Record("ada", "a01", Status.GRADED, seconds=3.0, why_graded=fixed),
               Record("bo", "a01", Status.GRADED, seconds=2.0, why_graded=fixed),
               Record("cy", "a01", Status.GRADED, seconds=2.0, why_graded="not graded before")]
    text = report(records, tmp_path, graded_now=["ada/a01", "bo/a01", "cy/a01"]).paragraphs["this-run"]["text"]
    assert text.startswith(f"This run: 3 graded by this run (2: {fixed}; 1: not graded before);")


def test_the_terminal_summary_says_what_this_run_did_and_what_it_skipped(tmp_path):
    """A re-run that grades nothing says so, instead of a bare total the TA cannot tell
    from a fresh grading."""
    records = [Record("ada", "a01", Status.GRADED, seconds=3.0), Record("bo", "a01", Status.MISSING)]
    outputs = ReportFiles(tmp_path, tmp_path, tmp_path, tmp_path, tmp_path, {"graded": 1, "scored with a reason": 1},
                      this_run(records, graded_now=[]))
    assert outputs.summary_lines()[2].startswith(
        "this run: 0 graded by this run; 0 run by this run but not graded (grader error, or grading or saving "
        "failed); 1 left as an earlier run graded them (unchanged since")
