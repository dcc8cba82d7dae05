"""Importing an LMS download: only the archive's top level, student ids only from the
platform's file names and only plain ones, duplicates resolved newest-first, and caps
that stop a zip bomb; nothing in the archive can stop the import or forge a row. Only
what can be graded is imported, and the rest named; what the platform's names say (user
id, late flag, its name for each file) is kept, and a student id two users share is
refused."""

from __future__ import annotations

import re
import zipfile

import pytest

from autograder.grading import lms
from autograder.grading.lms import collect_zip
from autograder.grading.lms_records import LmsRecords, LmsSubmission
from autograder.terminal import printable

A01 = "01-inplace-basics"
NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def entry(name: str, date=(2026, 11, 1, 12, 0, 0)) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=date)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


@pytest.fixture
def course(tmp_path):
    (tmp_path / "course").mkdir()
    return tmp_path / "course"


def build(path, entries: dict) -> None:
    with zipfile.ZipFile(path, "w") as bundle:
        for info, content in entries.items():
            bundle.writestr(info if isinstance(info, zipfile.ZipInfo) else entry(info), content)


def test_nested_archives_and_folders_are_never_unpacked(course, tmp_path):
    inner = tmp_path / "inner.zip"
    build(inner, {f"bob_3_4_{A01}.ipynb": NOTEBOOK})
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": NOTEBOOK, "ada_1_2_bundle.zip": inner.read_bytes(),
                    f"sub/bob_3_4_{A01}.ipynb": NOTEBOOK, "folder/": b""})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb")]
    assert sorted((course / "submitted").iterdir()) == [course / "submitted" / "ada"]
    assert "ada_1_2_bundle.zip: an archive inside the archive is not unpacked" in collected.left_out
    assert f"sub/bob_3_4_{A01}.ipynb: in a folder: only the archive's top level is read" in collected.left_out


@pytest.mark.parametrize("student", ['eve\n,=HYPERLINK("x")', "=cmd", "\x1b[2Kmallory", "..", "a b"])
def test_a_student_id_that_is_not_plain_is_refused_and_named(course, tmp_path, student):
    archive = tmp_path / "download.zip"
    build(archive, {f"{student}_1_2_{A01}.ipynb": NOTEBOOK, f"ada_1_2_{A01}.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb")]
    assert collected.left_out == [f"{student}_1_2_{A01}.ipynb: the student id in its name is not plain "
                                  "(letters, digits, . _ @ - only)"]
    shown = printable(collected.left_out[0])
    assert "\x1b" not in shown and "\n" not in shown


def test_the_newest_of_two_files_wins_and_the_other_is_named(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {entry(f"ada_1_2_{A01}.ipynb", (2026, 11, 2, 9, 0, 0)): b"new",
                    entry(f"ada_late_1_3_{A01}.ipynb", (2026, 11, 1, 9, 0, 0)): b"old"})
    collected = collect_zip(course, archive, A01)
    assert (course / "submitted" / "ada" / A01 / f"{A01}.ipynb").read_bytes() == b"new"
    assert collected.left_out == [f"ada_late_1_3_{A01}.ipynb: an older file of ada named {A01}.ipynb "
                                  f"(the newest, ada_1_2_{A01}.ipynb, is imported)"]


def test_a_zip_bomb_is_refused_before_it_is_read(course, tmp_path, monkeypatch):
    archive = tmp_path / "bomb.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": bytes(20 * 2**20), f"bo_1_2_{A01}.ipynb": NOTEBOOK})
    assert archive.stat().st_size < 100_000
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("bo", f"{A01}.ipynb")]
    assert collected.left_out == [f"ada_1_2_{A01}.ipynb: compressed more than 200:1 (a zip bomb?)"]
    monkeypatch.setattr(lms, "MAX_FILE_BYTES", 2**10)
    collected = collect_zip(course, archive, A01)
    assert collected.left_out[0] == f"ada_1_2_{A01}.ipynb: larger than 0 MiB"


def test_the_total_and_the_entry_count_are_capped(course, tmp_path, monkeypatch):
    archive = tmp_path / "download.zip"
    build(archive, {f"s{index}_1_2_{A01}.ipynb": bytes(range(256)) * 8 for index in range(5)})
    monkeypatch.setattr(lms, "MAX_TOTAL_BYTES", 5000)
    collected = collect_zip(course, archive, A01)
    assert len(collected.placed) == 2 and "it and the rest are not imported" in collected.left_out[0]
    monkeypatch.setattr(lms, "MAX_ENTRIES", 3)
    with pytest.raises(SystemExit, match="more than the 3 an import takes"):
        collect_zip(course, archive, A01)


def test_a_damaged_entry_is_named_and_the_rest_imported(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"x" * 5000, f"bo_1_2_{A01}.ipynb": NOTEBOOK})
    data = bytearray(archive.read_bytes())
    data[60:70] = b"\xff" * 10  # inside the first entry's compressed bytes
    archive.write_bytes(bytes(data))
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("bo", f"{A01}.ipynb")]
    assert collected.left_out[0].startswith(f"ada_1_2_{A01}.ipynb: damaged in the archive")


@pytest.mark.parametrize(("name", "student", "file"), [
    ("ada_123_4567_01-inplace-basics.ipynb", "ada", "01-inplace-basics.ipynb"),
    ("bob_late_123_4567_helpers.py", "bob", "helpers.py"),
    ("c.d@uni.edu_1_2_notebook_v2.ipynb", "c.d@uni.edu", "notebook_v2.ipynb"),
])
def test_the_default_pattern_reads_canvas_names(name, student, file):
    match = re.fullmatch(lms.DEFAULT_PATTERN, name)
    assert (match["student_id"], match["file_id"]) == (student, file)


def test_the_default_pattern_refuses_names_without_the_platform_ids():
    assert re.fullmatch(lms.DEFAULT_PATTERN, "01-inplace-basics.ipynb") is None


def test_a_students_timestamp_file_is_not_imported(course, tmp_path):
    """nbgrader reads a submission's lateness from timestamp.txt: only the collection writes it."""
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": NOTEBOOK, "ada_1_2_timestamp.txt": b"2000-01-01 00:00:00"})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb")]
    assert collected.left_out[0].startswith("ada_1_2_timestamp.txt: timestamp.txt records when a submission")


@pytest.mark.parametrize(("name", "user", "late"), [
    ("smithjohn_LATE_1001_5550_notebook.ipynb", "1001", "LATE"),
    ("smithjohn_late_1001_5550_notebook.ipynb", "1001", "late"),
    ("smithjohn_1001_5550_notebook.ipynb", "1001", None),
])
def test_the_default_pattern_reads_the_user_id_and_the_late_flag(name, user, late):
    match = re.fullmatch(lms.DEFAULT_PATTERN, name)
    assert (match["student_id"], match["lms_user_id"], match["late"], match["file_id"]) == (
        "smithjohn", user, late, "notebook.ipynb")


def test_what_the_platform_said_is_kept_for_the_exports(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_LATE_1001_5550_{A01}.ipynb": NOTEBOOK, f"bo_1002_5551_{A01}.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01)
    kept = LmsRecords.of(course)
    assert kept.get("ada", A01) == LmsSubmission("ada", A01, "1001", True, {f"{A01}.ipynb": "ada_LATE_1001_5550_"})
    assert kept.get("bo", A01) == LmsSubmission("bo", A01, "1002", False, {f"{A01}.ipynb": "bo_1002_5551_"})
    assert (kept.user_id("ada"), kept.user_id("eve"), kept.students()) == ("1001", "", {"ada", "bo"})
    build(archive, {f"ada_1001_5560_{A01}.ipynb": NOTEBOOK})  # a new download: ada's submission replaced
    collect_zip(course, archive, A01)
    again = LmsRecords.of(course)
    assert again.get("ada", A01) == LmsSubmission("ada", A01, "1001", False, {f"{A01}.ipynb": "ada_1001_5560_"})
    assert again.get("bo", A01) == kept.get("bo", A01)


def test_a_file_that_would_not_be_graded_is_named_not_dropped(course, tmp_path):
    """Only notebooks and the files the assignment declares reach grading: nothing else is
    imported, and each is named with why."""
    (course / "nbgrader_config.py").write_text(f"c = get_config()\nc.Autograde.exclude_overwriting = "
                                               f"{{'{A01}': ['helpers.py']}}\n")
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": NOTEBOOK, "ada_1_3_helpers.py": b"x = 1", "ada_1_4_report.pdf": b"%PDF",
                    "ada_1_5_scratch.py": b"y = 2"})
    collected = collect_zip(course, archive, A01)
    assert sorted(collected.placed) == [("ada", f"{A01}.ipynb"), ("ada", "helpers.py")]
    why = (f"not a notebook, nor a file {A01} declares for students (c.Autograde.exclude_overwriting: helpers.py): "
           "it would not be graded")
    assert collected.left_out == [f"ada_1_4_report.pdf: {why}", f"ada_1_5_scratch.py: {why}"]
    assert sorted(path.name for path in (course / "submitted" / "ada" / A01).iterdir()) == [f"{A01}.ipynb",
                                                                                            "helpers.py"]
    assert LmsRecords.of(course).get("ada", A01).prefixes == {f"{A01}.ipynb": "ada_1_2_", "helpers.py": "ada_1_3_"}


def test_a_student_id_two_platform_users_share_imports_neither(course, tmp_path):
    """Canvas builds the id from the name: two John Smiths must not become one student,
    nor the newer file of one replace the other's."""
    archive = tmp_path / "download.zip"
    build(archive, {f"smithjohn_1001_5550_{A01}.ipynb": b"first", f"smithjohn_1002_5551_{A01}.ipynb": b"second",
                    f"ada_1003_5552_{A01}.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb")]
    why = ("LMS users 1001, 1002 all have the student id smithjohn: none of their files is imported "
           "(a --zip-pattern whose student_id is the user id tells them apart)")
    assert collected.left_out == [f"smithjohn_1001_5550_{A01}.ipynb: {why}", f"smithjohn_1002_5551_{A01}.ipynb: {why}"]
    assert not (course / "submitted" / "smithjohn").exists()
    assert LmsRecords.of(course).students() == {"ada"}


def test_a_student_id_that_was_another_platform_user_before_is_refused(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {"smithjohn_1001_5550_a.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01)
    build(archive, {"smithjohn_1002_5560_b.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, "02-views")
    assert collected.placed == []
    assert collected.left_out == ["smithjohn_1002_5560_b.ipynb: the student id smithjohn was LMS user 1001 in an "
                                  "earlier import, here 1002: none of their files is imported (a --zip-pattern "
                                  "whose student_id is the user id tells them apart)"]
    assert LmsRecords.of(course).get("smithjohn", "02-views") is None


def test_a_user_id_that_is_not_plain_is_refused(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_=1+1_{A01}.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, A01, r"(?P<student_id>[^_]+)_(?P<lms_user_id>[^_]+)_(?P<file_id>.+)")
    assert collected.left_out == [f"ada_=1+1_{A01}.ipynb: the LMS user id in its name is not plain "
                                  "(letters, digits, . _ @ - only)"]


def test_a_pattern_without_platform_ids_keeps_none(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada--{A01}.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01, r"(?P<student_id>[^-]+)--(?P<file_id>.+)")
    assert LmsRecords.of(course).get("ada", A01) == LmsSubmission("ada", A01, "", False, {f"{A01}.ipynb": "ada--"})
