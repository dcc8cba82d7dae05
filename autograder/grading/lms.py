"""Import a learning platform's download (one zip of every student's file) into
``submitted/STUDENT/ASSIGNMENT/``.

The archive is the students' as much as the platform's, so it is read defensively:

- only its **top level**: an entry inside a folder, or an archive inside the archive, is
  named and left alone (unpacking a nested zip let one student submit as another);
- the student id comes from the platform's **file name** alone, through ``pattern`` (a
  regular expression with ``student_id`` and ``file_id`` groups, and optionally
  ``lms_user_id`` and ``late``; the default fits Canvas' ``name_1001_5550_file.ipynb`` and
  ``name_LATE_1001_5550_file.ipynb``: name, user id, file id, file), and must be plain:
  letters, digits, ``.``, ``_``, ``@``, ``-``, starting with a letter or digit, as must the
  user id. Anything else (control characters, commas, newlines, a leading ``=``) is
  refused and named;
- a student id that two of the platform's users share (Canvas builds it from the name:
  two John Smiths) imports neither, rather than one student's work under the other's id;
- only what can be graded is taken: notebooks and the files the assignment declares for
  students (nbgrader's ``Autograde.exclude_overwriting``); any other file is named;
- two files of one student with one name: the **newest** (the entry's date) wins, and the
  other is named, never a reason to stop;
- caps on the number of entries, on each file's size and the total, and on the ratio of
  size to compressed size; sizes are counted as the bytes are read, never taken from the
  archive's own header.

Each student's folder for the assignment is replaced by what the archive holds for them,
and what the platform's names say besides (user id, late flag, its name for each file) is
kept in ``lms_records`` for the exports.
"""

from __future__ import annotations

import re
import shutil
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import TIMESTAMP_FILE, Course
from autograder.grading.folders import name_problem
from autograder.grading.lms_records import LmsRecords, LmsSubmission

DEFAULT_PATTERN = r"(?P<student_id>[^_]+)_(?:(?P<late>(?i:late))_)?(?P<lms_user_id>\d+)_\d+_(?P<file_id>.+)"
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


@dataclass(frozen=True)
class Upload:
    """One file of the archive, as the platform's name for it reads."""

    entry: zipfile.ZipInfo
    student: str
    file: str
    user_id: str
    late: bool
    prefix: str  # the platform's name before the file's own name


def collect_zip(course: Path, archive: Path, assignment: str, pattern: str = DEFAULT_PATTERN) -> Collected:
    """Import ``archive`` into ``course/submitted/*/assignment``."""
    if not archive.is_file():
        raise SystemExit(f"no such archive: {archive}")
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as error:
        raise SystemExit(f"{archive} is not a zip archive: {error}") from None
    matcher = re.compile(pattern)
    course = Course(course)
    declared = tuple(course.config.Autograde.get("exclude_overwriting", {}).get(assignment, []))
    kept = LmsRecords.of(course.root)
    collected = Collected()
    with bundle:
        entries = bundle.infolist()
        if len(entries) > MAX_ENTRIES:
            raise SystemExit(f"{archive} holds {len(entries)} entries, more than the {MAX_ENTRIES} an import takes")
        uploads = []
        for entry in entries:
            match = matcher.fullmatch(entry.filename)
            why = _why_not(entry, match, assignment, declared)
            if why:
                collected.left_out.append(f"{entry.filename}: {why}")
            else:
                uploads.append(_upload(entry, match))
        chosen = _newest(_one_user_each(uploads, kept, collected), collected)
        _extract(bundle, chosen, course, assignment, collected)
    if chosen:
        kept.save(_what_the_platform_said(chosen, set(collected.placed), assignment))
    return collected


def _why_not(entry: zipfile.ZipInfo, match: re.Match | None, assignment: str, declared: tuple[str, ...]) -> str | None:
    """Why an entry of the archive is not imported, or None."""
    name = entry.filename
    if entry.is_dir() or "/" in name.rstrip("/") or "\\" in name:
        return "in a folder: only the archive's top level is read"
    if name.lower().endswith(ARCHIVES):
        return "an archive inside the archive is not unpacked"
    if match is None:
        return "its name does not fit --zip-pattern"
    student, file, user_id = match["student_id"], match["file_id"], match.groupdict().get("lms_user_id") or ""
    if not PLAIN_ID.fullmatch(student):
        return "the student id in its name is not plain (letters, digits, . _ @ - only)"
    if user_id and not PLAIN_ID.fullmatch(user_id):
        return "the LMS user id in its name is not plain (letters, digits, . _ @ - only)"
    if file in (".", "..") or name_problem(file):
        return "the file name in it is not usable"
    prefix_problem = name_problem(name[:match.start("file_id")])
    if prefix_problem:
        return f"the platform's part of its name {prefix_problem}"
    if file == TIMESTAMP_FILE:
        return f"{file} records when a submission was collected (nbgrader reads its lateness there): not a student's"
    if not file.endswith(".ipynb") and file not in declared:
        files = ", ".join(declared) or "none"
        return (f"not a notebook, nor a file {assignment} declares for students (c.Autograde.exclude_overwriting: "
                f"{files}): it would not be graded")
    if entry.file_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 2**20} MiB"
    if entry.file_size > MAX_RATIO * max(entry.compress_size, 1) and entry.file_size > 2**20:
        return f"compressed more than {MAX_RATIO}:1 (a zip bomb?)"
    return None


def _upload(entry: zipfile.ZipInfo, match: re.Match) -> Upload:
    said = match.groupdict()
    return Upload(entry, said["student_id"], said["file_id"], said.get("lms_user_id") or "", bool(said.get("late")),
                  entry.filename[:match.start("file_id")])


def _one_user_each(uploads: list[Upload], kept: LmsRecords, collected: Collected) -> list[Upload]:
    """The uploads whose student id stands for one user of the platform, in this archive
    and in earlier imports; every file of a shared id is named instead."""
    users: dict[str, set[str]] = defaultdict(set)
    for upload in uploads:
        if upload.user_id:
            users[upload.student].add(upload.user_id)
    shared = {}
    for student, ids in users.items():
        earlier = kept.user_id(student)
        if len(ids) > 1:
            shared[student] = f"LMS users {', '.join(sorted(ids))} all have the student id {student}"
        elif earlier and earlier not in ids:
            shared[student] = f"the student id {student} was LMS user {earlier} in an earlier import, here {min(ids)}"
    for upload in uploads:
        if upload.student in shared:
            collected.left_out.append(f"{upload.entry.filename}: {shared[upload.student]}: none of their files is "
                                      "imported (a --zip-pattern whose student_id is the user id tells them apart)")
    return [upload for upload in uploads if upload.student not in shared]


def _newest(uploads: list[Upload], collected: Collected) -> dict[tuple[str, str], Upload]:
    """Each (student, file name) once: the newest upload of it; the others are named."""
    chosen: dict[tuple[str, str], Upload] = {}
    for upload in uploads:
        key = (upload.student, upload.file)
        if key in chosen:
            older, newer = sorted((chosen[key], upload), key=lambda each: each.entry.date_time)
            chosen[key] = newer
            collected.left_out.append(f"{older.entry.filename}: an older file of {key[0]} named {key[1]} "
                                      f"(the newest, {newer.entry.filename}, is imported)")
        else:
            chosen[key] = upload
    return chosen


def _extract(bundle: zipfile.ZipFile, chosen: dict[tuple[str, str], Upload], course: Course,
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
    for (student, name), upload in sorted(chosen.items()):
        entry = upload.entry
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


def _what_the_platform_said(chosen: dict[tuple[str, str], Upload], placed: set[tuple[str, str]],
                            assignment: str) -> list[LmsSubmission]:
    """One record per student whose folder the import replaced: the platform's user id,
    its late flag, and its name for each file placed."""
    by_student: dict[str, list[Upload]] = defaultdict(list)
    for upload in chosen.values():
        by_student[upload.student].append(upload)
    return [LmsSubmission(student, assignment, user_id=next((u.user_id for u in uploads if u.user_id), ""),
                          late=any(u.late for u in uploads),
                          prefixes={u.file: u.prefix for u in uploads if (student, u.file) in placed})
            for student, uploads in sorted(by_student.items())]
