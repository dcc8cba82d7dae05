"""What goes back to the learning platform: the Canvas gradebook CSV (its columns, its
Points Possible row, every student and every assignment, the LMS user ids the import
kept), the one-row-per-score CSV, and the feedback archives, with what is not final
withheld and no link followed.

The class: lovelaceada (imported from Canvas, late, graded 7/10), cy (imported, not graded
yet), dee (imported, held for review), fay (graded 10/10 outside the LMS), bo (submitted
nothing); a01 was handed in and has no due date, a02 is past its due date with no
submission, a03 has no due date and no submission. The gradebook is built with nbgrader's
API and the grading records by hand, no grading run."""

from __future__ import annotations

import csv
import shutil
import zipfile
from datetime import datetime

import nbformat
import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook

from autograder import cli
from autograder.course import Course
from autograder.lms.exports import write_exports
from autograder.lms.download import collect_zip
from autograder.course import GraderFolder
from autograder.results.records import Record, Records, fingerprint
from autograder.status import Status
from autograder.intake.submission_files import list_folder

pytestmark = pytest.mark.slow  # each test makes a course and its gradebook through nbgrader: about half a second

MAX_SCORES = {"a01": 10.0, "a02": 5.0, "a03": 4.0}
A02_DUE = datetime(2026, 1, 10)
AFTER_A02 = datetime(2026, 2, 1)
NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
NOT_GRADED_YET = "imported from the LMS but not in the gradebook: not graded yet, or refused (grading/report.html)"
NEEDS_A_PERSON = "needs manual grading (held for review, not graded, or cells a person grades)"


@pytest.fixture
def course(tmp_path, empty_gradebook):
    root = tmp_path / "course"
    for assignment in MAX_SCORES:
        (root / "source" / assignment).mkdir(parents=True)
        nbformat.write(new_notebook(), root / "source" / assignment / f"{assignment}.ipynb")
    shutil.copy(empty_gradebook, root / "gradebook.db")
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name in ("lovelaceada_LATE_1001_5550_a01.ipynb", "cy_1003_5560_a01.ipynb", "dee_1004_5570_a01.ipynb"):
            bundle.writestr(name, NOTEBOOK)
    collect_zip(root, archive, "a01")
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
        for assignment, points in MAX_SCORES.items():
            gradebook.add_assignment(assignment, duedate=A02_DUE if assignment == "a02" else None)
            gradebook.add_notebook(assignment, assignment)
            gradebook.add_grade_cell("test_it", assignment, assignment, max_score=points, cell_type="code")
        gradebook.add_student("lovelaceada", first_name="Ada", last_name="Lovelace")
        for student in ("bo", "dee", "fay"):
            gradebook.add_student(student)
        for student, score, held in (("lovelaceada", 7, False), ("dee", 9, True), ("fay", 10, False)):
            add_graded(gradebook, student, score, held)
    for student, text in (("lovelaceada", "ada's page"), ("dee", "dee's page"), ("fay", "fay's page")):
        (root / "feedback" / student / "a01").mkdir(parents=True)
        (root / "feedback" / student / "a01" / "a01.html").write_text(text)
    for student, status in (("lovelaceada", Status.GRADED), ("dee", Status.HELD)):
        record_grading(root, student, status)
    return root


def record_grading(root, student: str, status: Status) -> None:
    """The grading record a run leaves for submitted/STUDENT/a01 as it is now."""
    graded_from = fingerprint(Course(root), "a01", list_folder(root / "submitted" / student / "a01"))
    Records(GraderFolder.of(root).records).save(Record(student, "a01", status, fingerprint=graded_from))


def add_graded(gradebook: Gradebook, student: str, score: float, held: bool) -> None:
    gradebook.add_submission("a01", student)
    grade = gradebook.find_grade("test_it", "a01", "a01", student)
    grade.auto_score, grade.needs_manual_grade = score, held
    gradebook.db.commit()


def rows(path) -> list[list[str]]:
    with path.open(newline="") as stream:
        return list(csv.reader(stream))


def entries(path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def test_the_canvas_file_has_every_student_and_assignment_handed_out_and_withholds_what_is_not_final(course):
    """a01 was submitted, a02 is past its due date; a03, neither, is no column (Canvas
    would offer to create it)."""
    exported = write_exports(course, now=AFTER_A02)
    assert rows(course / "grading" / "exports" / "canvas-gradebook.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a01", "a02"],
        ["Points Possible", "", "", "", "", "10.0", "5.0"],
        ["bo", "", "", "bo", "", "", "0.0"],
        ["cy", "1003", "", "cy", "", "", "0.0"],
        ["dee", "1004", "", "dee", "", "", "0.0"],
        ["fay", "", "", "fay", "", "10.0", "0.0"],
        ["Lovelace, Ada", "1001", "", "lovelaceada", "", "7.0", "0.0"],
    ]
    assert exported.not_final == [f"cy/a01: {NOT_GRADED_YET}", f"dee/a01: {NEEDS_A_PERSON}"]


def test_the_ta_may_choose_the_assignments_to_export_and_an_unknown_one_is_named(course):
    write_exports(course, now=AFTER_A02, chosen=["a03"])
    assert rows(course / "grading" / "exports" / "canvas-gradebook.csv")[0][5:] == ["a03"]
    with pytest.raises(SystemExit, match="the course has no assignment a04; it has a01, a02, a03"):
        write_exports(course, now=AFTER_A02, chosen=["a04"])


def test_an_assignment_before_its_due_date_reports_nothing_for_those_without_a_submission(course):
    write_exports(course, now=A02_DUE.replace(day=9), chosen=["a01", "a02"])
    table = rows(course / "grading" / "exports" / "canvas-gradebook.csv")
    assert [row[6] for row in table[2:]] == ["", "", "", "", ""]


def test_without_a_due_date_grading_the_early_submissions_uploads_no_zeros(course):
    """bo has submitted nothing for a01, which has no due date: others' grades do not make
    it due."""
    write_exports(course, now=AFTER_A02)
    table = rows(course / "grading" / "exports" / "canvas-gradebook.csv")
    assert [row[5] for row in table[2:]] == ["", "", "", "10.0", "7.0"]


def test_a_folder_changed_since_it_was_graded_is_not_final(course):
    """A resubmission imported after the last run: the gradebook's score is the old one."""
    (course / "submitted" / "lovelaceada" / "a01" / "extra.py").write_text("x = 1\n")
    exported = write_exports(course, now=AFTER_A02)
    assert "lovelaceada/a01: submitted/ changed since it was graded: run the grader" in exported.not_final
    assert rows(course / "grading" / "exports" / "canvas-gradebook.csv")[6][5] == ""
    assert "lms-feedback-a01.zip" not in [path.name for path in exported.written]


def test_a_grader_error_or_a_folder_never_graded_is_not_final(course):
    record_grading(course, "lovelaceada", Status.GRADER_ERROR)
    (course / "submitted" / "bo" / "a03").mkdir(parents=True)
    (course / "submitted" / "bo" / "a03" / "a03.ipynb").write_bytes(NOTEBOOK)
    exported = write_exports(course, now=AFTER_A02)
    assert "lovelaceada/a01: the last run had a grader error on it: run the grader again" in exported.not_final
    assert "bo/a03: in submitted/ but not graded yet: run the grader" in exported.not_final
    table = rows(course / "grading" / "exports" / "canvas-gradebook.csv")
    assert table[6][5] == "" and table[2][7] == ""


def test_canvas_ids_from_the_configuration_name_the_columns(course):
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.CanvasExport.assignment_ids = {'a01': 777}\n")
    write_exports(course, now=AFTER_A02)
    assert rows(course / "grading" / "exports" / "canvas-gradebook.csv")[0][5:] == ["a01 (777)", "a02"]


def test_a_canvas_id_that_is_not_a_number_is_a_one_line_error(course):
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.CanvasExport.assignment_ids = {'a01': 'x7'}\n")
    with pytest.raises(SystemExit, match="c.CanvasExport.assignment_ids cannot be used"):
        write_exports(course, now=AFTER_A02)


def test_the_scores_file_has_one_row_per_student_and_assignment(course):
    write_exports(course, now=AFTER_A02)
    table = rows(course / "grading" / "exports" / "scores.csv")
    assert table[0] == ["student_id", "lms_user_id", "assignment", "graded", "late", "score", "max_score", "not_final"]
    assert len(table) == 1 + 5 * 2  # a03, not handed out, has no rows
    by_key = {(row[0], row[2]): row for row in table[1:]}
    assert by_key[("lovelaceada", "a01")] == ["lovelaceada", "1001", "a01", "yes", "yes", "7.0", "10.0", ""]
    assert by_key[("dee", "a01")] == ["dee", "1004", "a01", "yes", "no", "9.0", "10.0", NEEDS_A_PERSON]
    assert by_key[("cy", "a01")] == ["cy", "1003", "a01", "no", "no", "", "10.0", NOT_GRADED_YET]
    assert by_key[("bo", "a01")] == ["bo", "", "a01", "no", "no", "", "10.0", ""]
    assert by_key[("bo", "a02")] == ["bo", "", "a02", "no", "no", "0.0", "5.0", ""]


def test_the_feedback_archives_hold_final_pages_the_lms_archive_named_as_canvas_named_the_files(course):
    exported = write_exports(course, now=AFTER_A02)
    exports = course / "grading" / "exports"
    assert exported.written == [exports / name for name in ("canvas-gradebook.csv", "scores.csv", "feedback.zip",
                                                            "lms-feedback-a01.zip")]
    assert entries(exports / "feedback.zip") == {"fay/a01/a01.html": "fay's page",
                                                 "lovelaceada/a01/a01.html": "ada's page"}
    assert entries(exports / "lms-feedback-a01.zip") == {"lovelaceada_LATE_1001_5550_a01.html": "ada's page"}


@pytest.mark.parametrize(("linked", "why"), [("fay", "Not a directory"),
                                             ("fay/a01/a01.html", "Too many levels of symbolic links")])
def test_a_linked_feedback_folder_or_page_is_not_followed(course, tmp_path, linked, why):
    outside = tmp_path / "outside" / "a01"
    outside.mkdir(parents=True)
    (outside / "a01.html").write_text("not fay's")
    link = course / "feedback" / linked
    if link.is_dir():
        shutil.rmtree(link)
    else:
        link.unlink()
    link.symlink_to(outside.parent if linked == "fay" else outside / "a01.html")
    exported = write_exports(course, now=AFTER_A02)
    assert entries(course / "grading" / "exports" / "feedback.zip") == {"lovelaceada/a01/a01.html": "ada's page"}
    assert exported.left_out == [f"feedback/fay/a01/a01.html: not read ({why}): left out"]


def test_an_export_replaces_the_previous_one(course):
    stale = course / "grading" / "exports" / "lms-feedback-old.zip"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale")
    write_exports(course, now=AFTER_A02)
    assert not stale.exists()


def test_the_command_writes_the_exports_and_names_what_is_withheld(course, capsys):
    cli.main(["export", "--course", str(course)])
    out = capsys.readouterr().out.splitlines()
    assert f"wrote: {course / 'grading' / 'exports' / 'canvas-gradebook.csv'}" in out
    assert [line for line in out if line.startswith("NOT FINAL")] == [
        f"NOT FINAL, withheld from the Canvas file and the feedback archives: cy/a01: {NOT_GRADED_YET}",
        f"NOT FINAL, withheld from the Canvas file and the feedback archives: dee/a01: {NEEDS_A_PERSON}"]


def test_the_command_exports_the_assignments_the_ta_names(course):
    cli.main(["export", "--course", str(course), "--assignment", "a03", "--assignment", "a01"])
    assert rows(course / "grading" / "exports" / "canvas-gradebook.csv")[0][5:] == ["a01", "a03"]


def test_a_course_whose_gradebook_lacks_an_assignment_is_refused(course):
    (course / "source" / "a04").mkdir()
    nbformat.write(new_notebook(), course / "source" / "a04" / "a04.ipynb")
    with pytest.raises(SystemExit, match="does not hold a04 of source/ yet: grade the course first"):
        write_exports(course)


def test_a_course_without_a_gradebook_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="has no gradebook to export yet"):
        write_exports(tmp_path)


def test_a_page_whose_student_id_windows_reads_as_a_path_is_left_out(course):
    """A folder name may hold backslashes on Linux; in a zip, Windows tools would unpack
    ``a\\..\\..\\x/a01/a01.html`` outside the folder they unpack into."""
    sneaky = "a\\..\\..\\x"
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        gradebook.add_student(sneaky)
        add_graded(gradebook, sneaky, 10, False)
    (course / "feedback" / sneaky / "a01").mkdir(parents=True)
    (course / "feedback" / sneaky / "a01" / "a01.html").write_text("planted")
    exported = write_exports(course, now=AFTER_A02)
    assert not any("\\" in name for name in entries(course / "grading" / "exports" / "feedback.zip"))
    assert exported.left_out == [f"feedback/{sneaky}/a01: the student id holds \\ or :, which unzip tools on "
                                 "Windows read as a path: left out"]
