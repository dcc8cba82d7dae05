"""Moodle, the second LMS format, and how a course chooses its format.

The download: one folder per participant (``Full Name_12345_assignsubmission_file_/``),
the student id made of the full name as Canvas makes its own, namesakes told apart by
participant number as Canvas' are by user id, and participant numbers taken for what they
are, each assignment's own. The import's rules are the same as Canvas': an online text,
anything deeper than a participant's folder and an archive inside the archive are named
and left alone, and the caps hold. What goes back: the grading worksheet Moodle's "Upload
grading worksheet" reads (its columns, ``Participant 12345``, a score that is not final
left empty, never 0) and feedback inside each participant's folder, as "Upload multiple
feedback files in a zip" reads it. The format is ``c.Lms.format`` or ``--lms``; an
unknown one is refused with the known ones. The last test grades a Moodle download end
to end and exports it."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest
from nbformat.v4 import new_notebook

from autograder import cli
from autograder.cli import demo_course
from autograder.course import DEMO_CLASS, Course
from autograder.lms import download
from autograder.lms.canvas import Canvas, CanvasExport
from autograder.lms.exports import write_scores_csv
from autograder.lms.feedback_archives import write_feedback_archives
from autograder.lms.formats import Lms, Table, chosen_format
from autograder.lms.download import collect_zip
from autograder.lms.moodle import Moodle
from autograder.results.class_grades import Assignment, ClassGrades, Standing, Student
from autograder.results.lms_records import LmsRecords, LmsSubmission
from tests.conftest import A01, CELL_TIMEOUT
from tests.helpers.assignments import REPO

NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
ADA = "Ada Lovelace_101_assignsubmission_file_/"  # Moodle before 4.1: the folder ends in "_"
BO = "Bo Bell_102_assignsubmission_file/"  # Moodle 4.1 and after
CY = "Cy Young_103_assignsubmission_file_"  # "Download submissions in folders" off: no folder
NOT_GRADED_YET = "imported from the LMS but not in the gradebook: not graded yet, or refused (grading/report.html)"
NEEDS_A_PERSON = "needs manual grading (held for review, not graded, or cells a person grades)"


@pytest.fixture
def course(tmp_path):
    (tmp_path / "course").mkdir()
    return tmp_path / "course"


def build(path, entries: dict) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in entries.items():
            bundle.writestr(name, content)


def moodle_import(course, tmp_path, entries: dict, assignment: str = A01):
    archive = tmp_path / "download.zip"
    build(archive, entries)
    return collect_zip(course, archive, assignment, Moodle())


def test_each_participants_folder_is_read_and_the_student_id_made_of_the_full_name(course, tmp_path):
    collected = moodle_import(course, tmp_path, {
        ADA: b"", f"{ADA}{A01}.ipynb": b"ada's", f"{BO}{A01}.ipynb": b"bo's",
        f"{CY}{A01}.ipynb": b"cy's", f"José Núñez_104_assignsubmission_file/{A01}.ipynb": b"jose's"})
    assert collected.placed == [(student, f"{A01}.ipynb") for student in ("adalovelace", "bobell", "cyyoung",
                                                                            "josenunez")]
    assert (collected.left_out, collected.notes) == ([], [])
    submitted = course / "submitted"
    assert (submitted / "adalovelace" / A01 / f"{A01}.ipynb").read_bytes() == b"ada's"
    assert (submitted / "josenunez" / A01 / f"{A01}.ipynb").read_bytes() == b"jose's"
    kept = LmsRecords.of(course)
    assert kept.get("adalovelace", A01) == LmsSubmission("adalovelace", A01, "101", False, {f"{A01}.ipynb": ADA})
    assert kept.get("bobell", A01).prefixes == {f"{A01}.ipynb": BO}
    assert kept.get("cyyoung", A01).prefixes == {f"{A01}.ipynb": CY}


def test_a_full_name_without_a_letter_a_to_z_is_named_not_given_an_id_it_cannot_keep(course, tmp_path):
    """A student id is plain: letters a to z, digits, ``.``, ``_``, ``@``, ``-``."""
    name = "李雷_106_assignsubmission_file_/"
    collected = moodle_import(course, tmp_path, {f"{ADA}{A01}.ipynb": NOTEBOOK, f"{name}{A01}.ipynb": NOTEBOOK})
    assert collected.placed == [("adalovelace", f"{A01}.ipynb")]
    assert collected.left_out == [f"{name}{A01}.ipynb: the full name '李雷' gives no student id (no letter a to z, "
                                  "no digit)"]


def test_an_online_text_is_named_as_left_out(course, tmp_path):
    online = "Ada Lovelace_101_assignsubmission_onlinetext_/onlinetext.html"
    collected = moodle_import(course, tmp_path, {f"{ADA}{A01}.ipynb": NOTEBOOK, online: b"<p>my answer</p>"})
    assert collected.placed == [("adalovelace", f"{A01}.ipynb")]
    assert collected.left_out == [f"{online}: an online text, not a file the student handed in: it would not be "
                                  "graded"]


def test_deeper_folders_nested_archives_and_other_names_are_refused_and_named(course, tmp_path):
    """A participant's folder holds their files: a folder inside it, or an archive (which
    could hold another participant's folder), is never read."""
    inner = tmp_path / "inner.zip"
    build(inner, {f"Eve Evans_105_assignsubmission_file_/{A01}.ipynb": NOTEBOOK})
    collected = moodle_import(course, tmp_path, {
        f"{ADA}{A01}.ipynb": NOTEBOOK, f"{ADA}sub/": b"", f"{ADA}sub/{A01}.ipynb": NOTEBOOK,
        f"{BO}bundle.zip": inner.read_bytes(), f"{A01}.ipynb": NOTEBOOK, f"x/{BO}{A01}.ipynb": NOTEBOOK})
    assert collected.placed == [("adalovelace", f"{A01}.ipynb")]
    deeper = "in a folder: only what is directly in each participant's folder is read"
    assert collected.left_out == [
        f"{ADA}sub/: {deeper}", f"{ADA}sub/{A01}.ipynb: {deeper}",
        f"{BO}bundle.zip: an archive inside the archive is not unpacked",
        f"{A01}.ipynb: its name is not one of Moodle's (FULL NAME_PARTICIPANT_assignsubmission_file/FILE)",
        f"x/{BO}{A01}.ipynb: {deeper}"]
    assert [path.name for path in (course / "submitted").iterdir()] == ["adalovelace"]


def test_namesakes_are_told_apart_by_participant_number_as_canvas_namesakes_are(course, tmp_path):
    collected = moodle_import(course, tmp_path, {f"John Smith_201_assignsubmission_file_/{A01}.ipynb": b"first",
                                                 f"John Smith_202_assignsubmission_file_/{A01}.ipynb": b"second"})
    assert collected.placed == [("johnsmith-201", f"{A01}.ipynb"), ("johnsmith-202", f"{A01}.ipynb")]
    assert collected.notes == [f"LMS users 201, 202 all have the student id johnsmith: LMS user {user}'s files are "
                               f"imported as johnsmith-{user}" for user in ("201", "202")]
    assert (course / "submitted" / "johnsmith-202" / A01 / f"{A01}.ipynb").read_bytes() == b"second"


def test_participant_numbers_are_each_assignments_own(course, tmp_path):
    """Moodle numbers a participant afresh in each assignment: Ada keeps her id in the
    next one, and a lone John Smith there, who may be either of two, is not given theirs."""
    moodle_import(course, tmp_path, {f"{ADA}{A01}.ipynb": NOTEBOOK,
                                     f"John Smith_201_assignsubmission_file_/{A01}.ipynb": NOTEBOOK,
                                     f"John Smith_202_assignsubmission_file_/{A01}.ipynb": NOTEBOOK})
    collected = moodle_import(course, tmp_path, {"Ada Lovelace_301_assignsubmission_file/b.ipynb": NOTEBOOK,
                                                 "John Smith_305_assignsubmission_file/b.ipynb": NOTEBOOK}, "02-views")
    assert collected.placed == [("adalovelace", "b.ipynb"), ("johnsmith-305", "b.ipynb")]
    assert collected.notes == [
        "imports of other assignments gave namesakes of the student id johnsmith the ids johnsmith-201, "
        "johnsmith-202, and the platform's user ids are each assignment's own: which of them LMS user 305 is cannot "
        "be told: LMS user 305's files are imported as johnsmith-305"]
    kept = LmsRecords.of(course)
    assert (kept.get("adalovelace", A01).user_id, kept.get("adalovelace", "02-views").user_id) == ("101", "301")


def test_the_caps_hold_for_moodle_downloads(course, tmp_path, monkeypatch):
    collected = moodle_import(course, tmp_path, {f"{ADA}{A01}.ipynb": bytes(20 * 2**20),
                                                 f"{BO}{A01}.ipynb": NOTEBOOK})
    assert collected.placed == [("bobell", f"{A01}.ipynb")]
    assert collected.left_out == [f"{ADA}{A01}.ipynb: compressed more than 200:1 (a zip bomb?)"]
    part = bytes(range(256)) * 16
    monkeypatch.setattr(download, "MAX_STUDENT_BYTES", 10_000)
    collected = moodle_import(course, tmp_path, {**{f"{ADA}part{index}.ipynb": part for index in range(5)},
                                                 f"{BO}{A01}.ipynb": NOTEBOOK})
    assert collected.placed == [("bobell", f"{A01}.ipynb")]
    assert collected.left_out == ["adalovelace: their files hold 20480 bytes, more than the 0 MiB grading reads "
                                  "from one submission: none of adalovelace's files is imported (they have no "
                                  f"submitted/adalovelace/{A01})"]
    monkeypatch.setattr(download, "MAX_ENTRIES", 3)
    with pytest.raises(SystemExit, match="more than the 3 an import takes"):
        moodle_import(course, tmp_path, {f"{ADA}{index}.ipynb": NOTEBOOK for index in range(4)})


def class_of_four(course, tmp_path) -> ClassGrades:
    """Ada graded 7/10, Bo graded 9 but held for review, Cy imported and not graded yet
    (all three from Moodle), Fay graded 10 outside it."""
    moodle_import(course, tmp_path, {f"{ADA}{A01}.ipynb": NOTEBOOK, f"{BO}{A01}.ipynb": NOTEBOOK,
                                     f"{CY}{A01}.ipynb": NOTEBOOK})
    standings = {("adalovelace", A01): Standing(True, 7.0, False), ("bobell", A01): Standing(True, 9.0, False,
                                                                                              NEEDS_A_PERSON),
                 ("cyyoung", A01): Standing(False, None, False, NOT_GRADED_YET), ("fay", A01): Standing(True, 10.0,
                                                                                                          False)}
    students = [Student(student, student, "") for student in ("adalovelace", "bobell", "cyyoung", "fay")]
    return ClassGrades(students, [Assignment(A01, 10.0)], standings)


def test_the_worksheet_has_moodles_columns_and_leaves_a_score_that_is_not_final_empty(course, tmp_path):
    grades = class_of_four(course, tmp_path)
    tables, left_out = Moodle().grade_tables(Course(course), grades, LmsRecords.of(course))
    header = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade", "Grade can be changed",
              "Last modified (submission)", "Last modified (grade)", "Feedback comments")
    assert tables == [Table(f"moodle-grading-worksheet-{A01}.csv", header, [
        ["Participant 101", "Ada Lovelace", "", "", 7.0, 10.0, "", "", "", ""],
        ["Participant 102", "Bo Bell", "", "", None, 10.0, "", "", "", ""],
        ["Participant 103", "Cy Young", "", "", None, 10.0, "", "", "", ""]])]
    assert left_out == [f"fay/{A01}: not in the assignment's Moodle download, so its participant number is unknown: "
                        "their score 10.0 is not in the worksheet (enter it in Moodle)"]


def test_the_scores_file_gives_each_assignments_participant_number(course, tmp_path):
    grades = class_of_four(course, tmp_path)
    write_scores_csv(tmp_path / "scores.csv", grades, LmsRecords.of(course), ids_per_assignment=True)
    with (tmp_path / "scores.csv").open(newline="") as stream:
        assert [(row["student_id"], row["lms_user_id"]) for row in csv.DictReader(stream)] == [
            ("adalovelace", "101"), ("bobell", "102"), ("cyyoung", "103"), ("fay", "")]


def entries(path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def test_feedback_is_named_in_each_participants_folder_and_only_final_pages_go(course, tmp_path):
    grades = class_of_four(course, tmp_path)
    (course / "source" / A01).mkdir(parents=True)
    nbformat.write(new_notebook(), course / "source" / A01 / f"{A01}.ipynb")
    for student in ("adalovelace", "bobell", "fay"):
        (course / "feedback" / student / A01).mkdir(parents=True)
        (course / "feedback" / student / A01 / f"{A01}.html").write_text(f"{student}'s page")
    into = tmp_path / "exports"
    into.mkdir()
    archives = write_feedback_archives(Course(course), grades, LmsRecords.of(course), into, Moodle())
    assert archives.written == [into / "feedback.zip", into / f"lms-feedback-{A01}.zip"]
    assert entries(into / f"lms-feedback-{A01}.zip") == {f"{ADA}{A01}.html": "adalovelace's page"}


def test_the_course_chooses_its_format_and_the_flag_overrides_it(course, tmp_path):
    assert isinstance(chosen_format(Course(course).config), Canvas)
    (course / "nbgrader_config.py").write_text('c = get_config()\nc.Lms.format = "moodle"\n')
    config = Course(course).config
    assert isinstance(chosen_format(config), Moodle)
    assert isinstance(chosen_format(config, "canvas"), Canvas)
    archive = tmp_path / "download.zip"
    build(archive, {f"{ADA}{A01}.ipynb": NOTEBOOK})
    assert collect_zip(course, archive, A01).placed == [("adalovelace", f"{A01}.ipynb")]


def test_an_unknown_format_is_refused_by_name_with_the_known_ones(course, tmp_path):
    refused = r"no LMS format 'blackboard' \(c.Lms.format, --lms\): the known ones are canvas, moodle"
    with pytest.raises(SystemExit, match=refused):
        chosen_format(Course(course).config, "blackboard")
    (course / "nbgrader_config.py").write_text('c = get_config()\nc.Lms.format = "blackboard"\n')
    with pytest.raises(SystemExit, match=refused):
        chosen_format(Course(course).config)
    with pytest.raises(SystemExit, match=refused):
        cli.main(["export", "--course", str(course), "--lms", "blackboard"])
    (course / "source" / A01).mkdir(parents=True)
    nbformat.write(new_notebook(), course / "source" / A01 / f"{A01}.ipynb")
    build(tmp_path / "download.zip", {f"{ADA}{A01}.ipynb": NOTEBOOK})
    with pytest.raises(SystemExit, match=refused):
        cli.main(["grade", "--course", str(course), "--lms", "blackboard", "--zip", str(tmp_path / "download.zip"),
                  "--assignment", A01])
    assert not (course / "submitted").exists()


def test_the_lms_flag_of_grade_goes_with_a_download(course):
    (course / "source" / A01).mkdir(parents=True)
    nbformat.write(new_notebook(), course / "source" / A01 / f"{A01}.ipynb")
    with pytest.raises(SystemExit, match="--lms says which platform the --zip download comes from: give --zip too"):
        cli.main(["grade", "--course", str(course), "--lms", "moodle", "--assignment", A01])


def test_the_zip_pattern_is_for_names_one_pattern_reads(course):
    with pytest.raises(SystemExit, match="--zip-pattern does not apply to Moodle's download"):
        chosen_format(Course(course).config, "moodle", r"(?P<student_id>.+)_(?P<file_id>.+)")


def test_every_lms_setting_says_what_it_does():
    """The documentation's configuration reference is written from these."""
    assert Lms.class_traits(config=True)["format"].help.strip()
    assert CanvasExport.class_traits(config=True)["assignment_ids"].help.strip()


@pytest.mark.slow
def test_a_moodle_download_is_graded_end_to_end_and_exported(tmp_path):
    """A Moodle download of a small class: two notebooks graded, an online text, a
    notebook in a subfolder and a nested archive named and left out; then the export's
    worksheet and feedback archive, named as Moodle's uploads read them."""
    course = demo_course(REPO, tmp_path / "course")
    shutil.rmtree(course / "submitted")
    right, partial = (DEMO_CLASS / name / A01 / f"{A01}.ipynb" for name in ("all-right", "partial"))
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(right, f"{ADA}{A01}.ipynb")
        bundle.write(partial, f"{BO}{A01}.ipynb")
        bundle.writestr("Bo Bell_102_assignsubmission_onlinetext/onlinetext.html", "<p>see my notebook</p>")
        bundle.write(right, f"{BO}old/{A01}.ipynb")
        bundle.writestr(f"{BO}mine.zip", b"PK\x05\x06" + bytes(18))
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--course", str(course), "--lms", "moodle",
         "--zip", str(archive), "--assignment", A01, "--quiet", "--cell-timeout", str(CELL_TIMEOUT)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not imported: Bo Bell_102_assignsubmission_onlinetext/onlinetext.html: an online text" in done.stdout
    assert (f"not imported: {BO}old/{A01}.ipynb: in a folder: only what is directly in each participant's folder "
            "is read") in done.stdout
    assert f"not imported: {BO}mine.zip: an archive inside the archive is not unpacked" in done.stdout
    records = {r["student"]: (r["status"], r["score"]) for r in json.loads((course / "grading" /
                                                                            "records.json").read_text())}
    assert records == {"adalovelace": ("graded", 10.0), "bobell": ("graded", 7.0)}
    done = subprocess.run([sys.executable, "-m", "autograder", "export", "--course", str(course), "--lms", "moodle"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    exports = course / "grading" / "exports"
    assert f"wrote: {exports / f'moodle-grading-worksheet-{A01}.csv'}" in done.stdout
    with (exports / f"moodle-grading-worksheet-{A01}.csv").open(newline="") as stream:
        worksheet = list(csv.reader(stream))
    assert worksheet == [
        ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade", "Grade can be changed",
         "Last modified (submission)", "Last modified (grade)", "Feedback comments"],
        ["Participant 101", "Ada Lovelace", "", "", "10.0", "10.0", "", "", "", ""],
        ["Participant 102", "Bo Bell", "", "", "7.0", "10.0", "", "", "", ""]]
    assert sorted(entries(exports / f"lms-feedback-{A01}.zip")) == [f"{ADA}{A01}.html", f"{BO}{A01}.html"]
    assert not (exports / "canvas-gradebook.csv").exists()


def test_a_full_name_posing_as_another_participants_mark_is_refused(course, tmp_path):
    """In the flat layout Moodle 4.1 writes a name's ``?`` as ``_``: Eve (666) named
    ``Aaa?101?assignsubmission?file?x`` would read as participant 101 (Ada)."""
    forged = f"Aaa_101_assignsubmission_file_x_666_assignsubmission_file_{A01}.ipynb"
    collected = moodle_import(course, tmp_path, {forged: NOTEBOOK, f"{ADA}{A01}.ipynb": NOTEBOOK})
    assert collected.left_out == [f"{forged}: its name holds Moodle's participant mark twice: a full name made to "
                                  "look like another participant's folder"]
    assert not (course / "submitted" / "aaa").exists()


def test_a_participant_kept_under_two_student_ids_gets_no_row_and_no_page(course, tmp_path):
    """Eve (202) imported as ``eveevans``, then, renamed, as ``aaronevans``: both folders
    are kept, and a row or a page for participant 202 would carry one to the other."""
    moodle_import(course, tmp_path, {f"Eve Evans_202_assignsubmission_file/{A01}.ipynb": NOTEBOOK})
    moodle_import(course, tmp_path, {f"Aaron Evans_202_assignsubmission_file/{A01}.ipynb": NOTEBOOK})
    standings = {(student, A01): Standing(True, 5.0, False) for student in ("aaronevans", "eveevans")}
    grades = ClassGrades([Student(student, student, "") for student in ("aaronevans", "eveevans")],
                         [Assignment(A01, 10.0)], standings)
    tables, left_out = Moodle().grade_tables(Course(course), grades, LmsRecords.of(course))
    assert tables == []
    assert left_out == [f"{student}/{A01}: the platform's user 202 of {A01} is kept under 2 student ids "
                        "(aaronevans, eveevans): nothing of theirs is written back; enter their grades in the platform"
                        for student in ("aaronevans", "eveevans")]
    (course / "source" / A01).mkdir(parents=True)
    nbformat.write(new_notebook(), course / "source" / A01 / f"{A01}.ipynb")
    for student in ("aaronevans", "eveevans"):
        (course / "feedback" / student / A01).mkdir(parents=True)
        (course / "feedback" / student / A01 / f"{A01}.html").write_text(f"{student}'s page")
    into = tmp_path / "exports"
    into.mkdir()
    archives = write_feedback_archives(Course(course), grades, LmsRecords.of(course), into, Moodle())
    assert archives.written == [into / "feedback.zip"]
    assert len(archives.left_out) == 2
