"""Importing an LMS download: only the archive's top level, student ids only from the
platform's file names and only plain ones, duplicates resolved newest-first, and caps
that stop a zip bomb; nothing in the archive can stop the import or forge a row."""

from __future__ import annotations

import re
import zipfile

import pytest

from autograder.grading import lms
from autograder.grading.lms import collect_zip
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
