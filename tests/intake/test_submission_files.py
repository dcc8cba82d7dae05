"""Reading a submission folder follows no link and opens no special file, whatever the
student left in it; what is not taken is named, and only a folder past a cap is refused."""

from __future__ import annotations

import os
import socket

import pytest

from autograder.intake import submission_files
from autograder.intake.folders import submission_folders
from autograder.intake.submission_files import FolderRefused, copy_file, list_folder, read_file


@pytest.fixture
def folder(tmp_path):
    submission = tmp_path / "alice" / "01"
    (submission / "data").mkdir(parents=True)
    (submission / "01.ipynb").write_text("{}")
    (submission / "data" / "points.csv").write_text("1,2\n")
    return submission


def test_regular_files_are_listed_and_read(folder):
    listing = list_folder(folder)
    assert listing.files == ("01.ipynb", "data/points.csv") and listing.refused == ()
    assert read_file(folder, "data/points.csv") == b"1,2\n"


def test_links_and_special_files_are_named_never_opened(folder, tmp_path):
    secret = tmp_path / "instructor.ipynb"
    secret.write_text("solutions")
    (folder / "mem").symlink_to("/proc/self/mem")
    (folder / "copy.ipynb").symlink_to(secret)
    (folder / "data" / "up").symlink_to(tmp_path)
    os.mkfifo(folder / "blocks.ipynb")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "listener"))
        listing = list_folder(folder)
    assert listing.files == ("01.ipynb", "data/points.csv")
    assert sorted(listing.refused) == [
        "blocks.ipynb: named pipe ignored",
        f"copy.ipynb: symbolic link ignored (points to {secret})",
        f"data/up: symbolic link ignored (points to {tmp_path})",
        "listener: socket ignored",
        "mem: symbolic link ignored (points to /proc/self/mem)",
    ]
    for name in ("mem", "copy.ipynb", "blocks.ipynb", "data/up/instructor.ipynb"):
        with pytest.raises(OSError):
            read_file(folder, name)


def test_a_linked_folder_is_refused_as_a_whole(folder, tmp_path):
    link = tmp_path / "bob"
    link.symlink_to(folder)
    with pytest.raises(FolderRefused):
        list_folder(link)


def test_the_fingerprint_sees_every_change_links_included(folder):
    first = list_folder(folder).fingerprint
    (folder / "data" / "points.csv").write_text("1,3\n")
    second = list_folder(folder).fingerprint
    (folder / "link").symlink_to("a")
    third = list_folder(folder).fingerprint
    (folder / "link").unlink()
    (folder / "link").symlink_to("b")
    assert len({first, second, third, list_folder(folder).fingerprint}) == 4


def test_caps_on_entries_depth_and_size(folder, monkeypatch):
    monkeypatch.setattr(submission_files, "MAX_ENTRIES", 5)
    for index in range(5):
        (folder / f"note-{index}.txt").write_text("x")
    with pytest.raises(FolderRefused, match="more than 5 entries"):
        list_folder(folder)
    monkeypatch.setattr(submission_files, "MAX_ENTRIES", 500)
    deep = folder.joinpath(*["d"] * (submission_files.MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    assert any("nested more than" in reason for reason in list_folder(folder).refused)
    monkeypatch.setattr(submission_files, "MAX_FILE_BYTES", 3)
    listing = list_folder(folder)
    assert "01.ipynb" in listing.files and "data/points.csv" not in listing.files
    assert "data/points.csv: larger than 0 MiB" in listing.refused


def test_a_copy_never_writes_through_a_link(folder, tmp_path):
    victim = tmp_path / "gradebook.db"
    victim.write_text("grades")
    destination = tmp_path / "job" / "points.csv"
    destination.parent.mkdir()
    destination.symlink_to(victim)
    with pytest.raises(FileExistsError):
        copy_file(folder, "data/points.csv", destination)
    assert victim.read_text() == "grades"
    copy_file(folder, "data/points.csv", tmp_path / "job" / "fresh.csv")
    assert (tmp_path / "job" / "fresh.csv").read_text() == "1,2\n"


def test_only_the_folders_of_the_students_and_assignments_asked_for(tmp_path):
    for student, assignment in (("ada", "a01"), ("ada", "a02"), ("bo", "a01")):
        (tmp_path / student / assignment).mkdir(parents=True)

    def chosen(**only):
        return [(folder.student, folder.assignment) for folder in submission_folders(tmp_path, **only)]
    assert chosen(assignments=("a01",)) == [("ada", "a01"), ("bo", "a01")]
    assert chosen(students=("ada",), assignments=("a02",)) == [("ada", "a02")]
    assert len(chosen()) == 3
