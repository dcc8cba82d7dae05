"""Importing an LMS download: only the archive's top level, student ids only from the
platform's file names and only plain ones, duplicates resolved newest-first, and caps
that stop a zip bomb; nothing in the archive can stop the import or forge a row. Only
what can be graded is imported, and the rest named; what the platform's names say (user
id, late flag, its name for each file) is kept. Each student is imported whole or not at
all: one student's bad file, failed write or oversized upload leaves their folder as it
was and never touches another's; namesakes are both imported, under ids their user ids
tell apart."""

from __future__ import annotations

import errno
import re
import zipfile

import pytest

from autograder.lms import download as lms
from autograder.lms.canvas import DEFAULT_PATTERN, Canvas
from autograder.lms.download import collect_zip
from autograder.results.lms_records import LmsRecords, LmsSubmission, left_out
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


def test_what_an_import_left_out_is_kept_for_the_report_until_the_next_import(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": NOTEBOOK, "ada_1_2_bundle.zip": b"PK"})
    collected = collect_zip(course, archive, A01)
    assert left_out(course) == {A01: collected.left_out} and collected.left_out
    build(archive, {f"ada_1_2_{A01}.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01)
    assert left_out(course) == {}


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
    build(archive, {f"s3_1_2_{A01}.ipynb": b"earlier"})
    collect_zip(course, archive, A01)
    build(archive, {f"s{index}_1_2_{A01}.ipynb": bytes(range(256)) * 8 for index in range(5)})
    monkeypatch.setattr(lms, "MAX_TOTAL_BYTES", 5000)
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("s0", f"{A01}.ipynb"), ("s1", f"{A01}.ipynb")]
    assert [line.split(":")[0] for line in collected.left_out] == ["s2", "s3", "s4"]
    assert all("the import stopped before theirs" in line for line in collected.left_out)
    assert collected.left_out[1].endswith(f"none of s3's files is imported, and submitted/s3/{A01} is left as it was")
    assert (course / "submitted" / "s3" / A01 / f"{A01}.ipynb").read_bytes() == b"earlier"
    assert not (course / "submitted" / "s2").exists()
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
    match = re.fullmatch(DEFAULT_PATTERN, name)
    assert (match["student_id"], match["file_id"]) == (student, file)


def test_the_default_pattern_refuses_names_without_the_platform_ids():
    assert re.fullmatch(DEFAULT_PATTERN, "01-inplace-basics.ipynb") is None


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
    match = re.fullmatch(DEFAULT_PATTERN, name)
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


def test_namesakes_are_both_imported_under_ids_their_user_ids_tell_apart(course, tmp_path):
    """Canvas builds the id from the name: two John Smiths must not become one student,
    nor keep each other out; each keeps the id they were given, import after import."""
    archive = tmp_path / "download.zip"
    build(archive, {f"smithjohn_1001_5550_{A01}.ipynb": b"first", f"smithjohn_1002_5551_{A01}.ipynb": b"second",
                    f"ada_1003_5552_{A01}.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb"), ("smithjohn-1001", f"{A01}.ipynb"),
                                ("smithjohn-1002", f"{A01}.ipynb")]
    assert collected.left_out == []
    assert collected.notes == [f"LMS users 1001, 1002 all have the student id smithjohn: LMS user {user}'s files are "
                               f"imported as smithjohn-{user}" for user in ("1001", "1002")]
    submitted = course / "submitted"
    assert (submitted / "smithjohn-1001" / A01 / f"{A01}.ipynb").read_bytes() == b"first"
    assert (submitted / "smithjohn-1002" / A01 / f"{A01}.ipynb").read_bytes() == b"second"
    assert not (submitted / "smithjohn").exists()
    kept = LmsRecords.of(course)  # what the exports read: each id's user, each file's platform name
    assert kept.students() == {"ada", "smithjohn-1001", "smithjohn-1002"}
    assert (kept.user_id("smithjohn-1001"), kept.user_id("smithjohn-1002")) == ("1001", "1002")
    assert kept.get("smithjohn-1002", A01).prefixes == {f"{A01}.ipynb": "smithjohn_1002_5551_"}
    assert all(lms.PLAIN_ID.fullmatch(student) for student in kept.students())
    build(archive, {"smithjohn_1001_5560_b.ipynb": NOTEBOOK})  # alone now: still the id they were given
    collected = collect_zip(course, archive, "02-views")
    assert collected.placed == [("smithjohn-1001", "b.ipynb")]
    assert collected.notes == ["LMS user 1001 has the student id smithjohn: LMS user 1001's files are imported as "
                               "smithjohn-1001 (theirs in an earlier import)"]


def test_a_student_id_an_earlier_import_kept_for_one_user_stays_theirs(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {"smithjohn_1001_5550_a.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01)
    build(archive, {"smithjohn_1002_5560_b.ipynb": b"1002's", "smithjohn_1001_5561_b.ipynb": b"1001's"})
    collected = collect_zip(course, archive, "02-views")
    assert sorted(collected.placed) == [("smithjohn", "b.ipynb"), ("smithjohn-1002", "b.ipynb")]
    assert collected.notes == [
        "LMS users 1001, 1002 all have the student id smithjohn: LMS user 1001's files are imported as smithjohn "
        "(theirs in an earlier import)",
        "LMS users 1001, 1002 all have the student id smithjohn: LMS user 1002's files are imported as smithjohn-1002"]
    assert (course / "submitted" / "smithjohn" / "02-views" / "b.ipynb").read_bytes() == b"1001's"
    assert (course / "submitted" / "smithjohn-1002" / "02-views" / "b.ipynb").read_bytes() == b"1002's"
    build(archive, {"smithjohn_1002_5570_c.ipynb": NOTEBOOK})
    collected = collect_zip(course, archive, "03-more")
    assert collected.placed == [("smithjohn-1002", "c.ipynb")]
    assert collected.notes == ["the student id smithjohn was LMS user 1001's in an earlier import: LMS user 1002's "
                               "files are imported as smithjohn-1002 (theirs in an earlier import)"]
    kept = LmsRecords.of(course)
    assert (kept.user_id("smithjohn"), kept.user_id("smithjohn-1002")) == ("1001", "1002")


def test_a_user_id_that_is_not_plain_is_refused(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_=1+1_{A01}.ipynb": NOTEBOOK})
    pattern = r"(?P<student_id>[^_]+)_(?P<lms_user_id>[^_]+)_(?P<file_id>.+)"
    collected = collect_zip(course, archive, A01, Canvas(pattern))
    assert collected.left_out == [f"ada_=1+1_{A01}.ipynb: the LMS user id in its name is not plain "
                                  "(letters, digits, . _ @ - only)"]


def test_a_pattern_without_platform_ids_keeps_none(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada--{A01}.ipynb": NOTEBOOK})
    collect_zip(course, archive, A01, Canvas(r"(?P<student_id>[^-]+)--(?P<file_id>.+)"))
    assert LmsRecords.of(course).get("ada", A01) == LmsSubmission("ada", A01, "", False, {f"{A01}.ipynb": "ada--"})


def folder_of(course, student: str, assignment: str = A01) -> dict[str, bytes]:
    folder = course / "submitted" / student / assignment
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_file_name_too_long_for_the_filesystem_is_named_and_the_rest_imported(course, tmp_path):
    long = "n" * 600 + ".ipynb"
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"ada", f"bo_3_4_{A01}.ipynb": b"bo", f"bo_3_5_{long}": NOTEBOOK,
                    f"cy_5_6_{A01}.ipynb": b"cy"})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb"), ("bo", f"{A01}.ipynb"), ("cy", f"{A01}.ipynb")]
    assert len(collected.left_out) == 1
    assert re.fullmatch(rf"bo_3_5_{long}: the file name in it is longer than the \d+ bytes the filesystem takes",
                        collected.left_out[0])
    assert [folder_of(course, student) for student in ("ada", "bo", "cy")] == [
        {f"{A01}.ipynb": b"ada"}, {f"{A01}.ipynb": b"bo"}, {f"{A01}.ipynb": b"cy"}]


def test_a_student_over_their_cap_keeps_their_folder_and_those_after_them_are_imported(course, tmp_path,
                                                                                        monkeypatch):
    """One student's upload used to exhaust the class's cap: every student after them was
    left with an empty folder (a final 0 that export uploads)."""
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"ada's earlier"})
    collect_zip(course, archive, A01)
    part = bytes(range(256)) * 16
    build(archive, {**{f"ada_1_{index}_part{index}.ipynb": part for index in range(5)},
                    f"bo_3_4_{A01}.ipynb": b"bo", f"cy_5_6_{A01}.ipynb": b"cy"})
    monkeypatch.setattr(lms, "MAX_STUDENT_BYTES", 10_000, raising=False)
    monkeypatch.setattr(lms, "MAX_TOTAL_BYTES", 20_000)  # a sanity limit, above what any one student may send
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("bo", f"{A01}.ipynb"), ("cy", f"{A01}.ipynb")]
    assert collected.left_out == [f"ada: their files hold 20480 bytes, more than the 0 MiB grading reads from one "
                                  f"submission: none of ada's files is imported, and submitted/ada/{A01} is left as "
                                  "it was"]
    assert folder_of(course, "ada") == {f"{A01}.ipynb": b"ada's earlier"}
    assert (folder_of(course, "bo"), folder_of(course, "cy")) == ({f"{A01}.ipynb": b"bo"}, {f"{A01}.ipynb": b"cy"})
    assert LmsRecords.of(course).get("ada", A01).prefixes == {f"{A01}.ipynb": "ada_1_2_"}


def test_a_failure_writing_one_students_file_leaves_their_folder_as_it_was(course, tmp_path, monkeypatch):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"ada 1", "ada_1_3_old.ipynb": b"ada's old", f"bo_3_4_{A01}.ipynb": b"bo 1",
                    "bo_3_5_notes.ipynb": b"bo's notes", f"cy_5_6_{A01}.ipynb": b"cy 1"})
    collect_zip(course, archive, A01)
    before = folder_of(course, "bo")
    build(archive, {f"ada_1_7_{A01}.ipynb": b"ada 2", f"bo_3_8_{A01}.ipynb": b"bo 2", "bo_3_9_scratch.ipynb": b"x",
                    f"cy_5_10_{A01}.ipynb": b"cy 2"})
    copy = lms._copy_capped

    def full_disk(bundle, entry, target, limit):
        if target.name == "scratch.ipynb":  # bo's second file, after their first is written
            raise OSError(errno.ENOSPC, "No space left on device")
        return copy(bundle, entry, target, limit)

    monkeypatch.setattr(lms, "_copy_capped", full_disk)
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb"), ("cy", f"{A01}.ipynb")]
    assert collected.left_out == ["bo_3_9_scratch.ipynb: could not be written (No space left on device): none of "
                                  f"bo's files is imported, and submitted/bo/{A01} is left as it was"]
    assert folder_of(course, "bo") == before == {f"{A01}.ipynb": b"bo 1", "notes.ipynb": b"bo's notes"}
    assert folder_of(course, "ada") == {f"{A01}.ipynb": b"ada 2"}
    assert folder_of(course, "cy") == {f"{A01}.ipynb": b"cy 2"}
    assert LmsRecords.of(course).get("bo", A01).prefixes == {f"{A01}.ipynb": "bo_3_4_", "notes.ipynb": "bo_3_5_"}
    assert list((course / "grading" / "scratch").iterdir()) == []  # nothing staged is left behind


def set_encrypted(data: bytearray, name: str) -> None:
    """Mark ``name`` encrypted in the archive's central directory, as a password-protected
    upload would be."""
    at = data.find(b"PK\x01\x02")
    while at != -1:
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + length] == name.encode():
            data[at + 8] |= 1
            return
        at = data.find(b"PK\x01\x02", at + 1)
    raise AssertionError(f"{name} is not in the archive")


def test_a_damaged_or_unreadable_entry_leaves_its_students_folder_as_it_was(course, tmp_path):
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"ada's earlier", f"cy_5_6_{A01}.ipynb": b"cy's earlier"})
    collect_zip(course, archive, A01)
    build(archive, {f"ada_1_3_{A01}.ipynb": b"x" * 5000, f"bo_3_4_{A01}.ipynb": b"bo", f"cy_5_7_{A01}.ipynb": b"cy"})
    data = bytearray(archive.read_bytes())
    data[64:70] = b"\xff" * 6  # inside the first entry's compressed bytes
    set_encrypted(data, f"cy_5_7_{A01}.ipynb")
    archive.write_bytes(bytes(data))
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("bo", f"{A01}.ipynb")]
    why = "damaged in the archive, or stored in a way it cannot be read ("
    ada, cy = collected.left_out
    assert ada.startswith(f"ada_1_3_{A01}.ipynb: {why}") and cy.startswith(f"cy_5_7_{A01}.ipynb: {why}")
    assert "encrypted" in cy
    assert ada.endswith(f"none of ada's files is imported, and submitted/ada/{A01} is left as it was")
    assert cy.endswith(f"none of cy's files is imported, and submitted/cy/{A01} is left as it was")
    assert folder_of(course, "ada") == {f"{A01}.ipynb": b"ada's earlier"}
    assert folder_of(course, "cy") == {f"{A01}.ipynb": b"cy's earlier"}
    assert folder_of(course, "bo") == {f"{A01}.ipynb": b"bo"}


def test_a_linked_student_folder_is_never_written_through(course, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (course / "submitted").mkdir()
    (course / "submitted" / "eve").symlink_to(elsewhere)
    archive = tmp_path / "download.zip"
    build(archive, {f"ada_1_2_{A01}.ipynb": b"ada", f"eve_7_8_{A01}.ipynb": b"eve"})
    collected = collect_zip(course, archive, A01)
    assert collected.placed == [("ada", f"{A01}.ipynb")]
    assert collected.left_out[0].startswith("eve: submitted/eve, which would hold their submission, is a symbolic link")
    assert list(elsewhere.iterdir()) == []
