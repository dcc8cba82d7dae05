"""Import a learning platform's download (one zip of every student's file) into
``submitted/STUDENT/ASSIGNMENT/``.

The archive is the students' as much as the platform's, so it is read defensively:

- only its **top level**: an entry inside a folder, or an archive inside the archive, is
  named and left alone (unpacking a nested zip let one student submit as another);
- the student id comes from the platform's **file name** alone, through ``pattern`` (a
  regular expression with ``student_id`` and ``file_id`` groups; the default fits Canvas'
  ``name_12345_67890_file.ipynb`` and ``name_late_...``), and must be plain: letters,
  digits, ``.``, ``_``, ``@``, ``-``, starting with a letter or digit. Anything else
  (control characters, commas, newlines, a leading ``=``) is refused and named;
- two files of one student with one name: the **newest** (the entry's date) wins, and the
  other is named, never a reason to stop;
- caps on the number of entries, on each file's size and the total, and on the ratio of
  size to compressed size; sizes are counted as the bytes are read, never taken from the
  archive's own header.

Each student's folder for the assignment is replaced by what the archive holds for them.
"""

from __future__ import annotations

import re
import shutil
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import TIMESTAMP_FILE, Course
from autograder.grading.folders import name_problem

DEFAULT_PATTERN = r"(?P<student_id>[^_]+)_(?:late_)?\d+_\d+_(?P<file_id>.+)"
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")
ARCHIVES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar")
MAX_ENTRIES = 10_000
MAX_FILE_BYTES = 64 * 2**20
MAX_TOTAL_BYTES = 2 * 2**30
MAX_RATIO = 200


@dataclass
class Collected:
    """What an import did: (student, file) pairs placed, and every entry left out, with why."""

    placed: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def collect_zip(course: Path, archive: Path, assignment: str, pattern: str = DEFAULT_PATTERN) -> Collected:
    """Import ``archive`` into ``course/submitted/*/assignment``."""
    if not archive.is_file():
        raise SystemExit(f"no such archive: {archive}")
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as error:
        raise SystemExit(f"{archive} is not a zip archive: {error}") from None
    matcher = re.compile(pattern)
    collected = Collected()
    with bundle:
        entries = bundle.infolist()
        if len(entries) > MAX_ENTRIES:
            raise SystemExit(f"{archive} holds {len(entries)} entries, more than the {MAX_ENTRIES} an import takes")
        chosen: dict[tuple[str, str], zipfile.ZipInfo] = {}
        for entry in entries:
            why = _why_not(entry, matcher)
            if why:
                collected.left_out.append(f"{entry.filename}: {why}")
                continue
            match = matcher.fullmatch(entry.filename)
            key = (match["student_id"], match["file_id"])
            if key in chosen:
                older, newer = sorted((chosen[key], entry), key=lambda info: info.date_time)
                chosen[key] = newer
                collected.left_out.append(f"{older.filename}: an older file of {key[0]} named {key[1]} "
                                          f"(the newest, {newer.filename}, is imported)")
            else:
                chosen[key] = entry
        _extract(bundle, chosen, Course(course), assignment, collected)
    return collected


def _why_not(entry: zipfile.ZipInfo, matcher: re.Pattern) -> str | None:
    """Why an entry of the archive is not imported, or None."""
    name = entry.filename
    if entry.is_dir() or "/" in name.rstrip("/") or "\\" in name:
        return "in a folder: only the archive's top level is read"
    if name.lower().endswith(ARCHIVES):
        return "an archive inside the archive is not unpacked"
    match = matcher.fullmatch(name)
    if match is None:
        return "its name does not fit --zip-pattern"
    student, file = match["student_id"], match["file_id"]
    if not PLAIN_ID.fullmatch(student):
        return "the student id in its name is not plain (letters, digits, . _ @ - only)"
    if file in (".", "..") or name_problem(file):
        return "the file name in it is not usable"
    if file == TIMESTAMP_FILE:
        return f"{file} records when a submission was collected (nbgrader reads its lateness there): not a student's"
    if entry.file_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 2**20} MiB"
    if entry.file_size > MAX_RATIO * max(entry.compress_size, 1) and entry.file_size > 2**20:
        return f"compressed more than {MAX_RATIO}:1 (a zip bomb?)"
    return None


def _extract(bundle: zipfile.ZipFile, chosen: dict[tuple[str, str], zipfile.ZipInfo], course: Course,
             assignment: str, collected: Collected) -> None:
    """Write the chosen entries into each student's fresh folder, each and all capped as
    the bytes come out of the archive."""
    for student in sorted({student for student, _ in chosen}):
        folder = course.folder("submitted", student, assignment)
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    total = 0
    for (student, name), entry in sorted(chosen.items()):
        target = course.folder("submitted", student, assignment) / name
        own_limit = min(MAX_FILE_BYTES, MAX_RATIO * max(entry.compress_size, 1) + 2**20)
        room = MAX_TOTAL_BYTES - total
        try:
            written = _copy_capped(bundle, entry, target, min(own_limit, room))
        except (zipfile.BadZipFile, zlib.error, EOFError) as error:
            target.unlink(missing_ok=True)
            collected.left_out.append(f"{entry.filename}: damaged in the archive ({error})")
            continue
        if written is not None:
            total += written
            collected.placed.append((student, name))
            continue
        target.unlink()
        if room < own_limit:
            collected.left_out.append(f"{entry.filename}: the archive's files hold more than "
                                      f"{MAX_TOTAL_BYTES // 2**30} GiB in all; it and the rest are not imported")
            return
        collected.left_out.append(f"{entry.filename}: holds more than its header says (a zip bomb?)")


def _copy_capped(bundle: zipfile.ZipFile, entry: zipfile.ZipInfo, target: Path, limit: int) -> int | None:
    """Bytes copied from ``entry`` to the new file ``target``, or None past ``limit``."""
    written = 0
    with bundle.open(entry) as source, target.open("xb") as destination:
        while chunk := source.read(2**20):
            written += len(chunk)
            if written > limit:
                return None
            destination.write(chunk)
    return written
