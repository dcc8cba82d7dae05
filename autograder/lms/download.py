"""Import a learning platform's download (one zip of every student's files) into
``submitted/STUDENT/ASSIGNMENT/``.

Who each file is comes from the course's LMS format (``formats``: Canvas by default,
Moodle; ``c.Lms.format``, ``--lms``), which reads the platform's names. Everything else
is the same for every platform, and no format can weaken it: the archive is the
students' as much as the platform's, so it is read defensively:

- only where the format says students' files are: the archive's **top level** (Canvas),
  or directly inside one folder per student (Moodle, ``folder_depth``). Anything deeper,
  or an archive inside the archive, is named and left alone (unpacking a nested zip let
  one student submit as another);
- the student id comes from the platform's **names** alone, and must be plain: letters,
  digits, ``.``, ``_``, ``@``, ``-``, starting with a letter or digit, as must the
  platform's user id. Anything else (control characters, commas, newlines, a leading
  ``=``) is refused and named;
- two of the platform's users whose names give one student id (Canvas and Moodle build
  it from the name: two John Smiths) are both imported, each under that id with their
  user id added (``smithjohn-1001``, ``smithjohn-1002``), and named in ``Collected.notes``.
  An id stays with the user an earlier import kept it for (``lms_records``; of the same
  assignment, where the platform's user ids are the assignment's own): a student id that
  was user 1001's is still 1001's, and user 1002 of the same name gets ``smithjohn-1002``;
- only what can be graded is taken: notebooks and the files the assignment declares for
  students (nbgrader's ``Autograde.exclude_overwriting``); any other file is named, and so
  is a file whose name the filesystem cannot hold (too long) or would misread;
- two files of one student with one name: the **newest** (the entry's date) wins, and the
  other is named, never a reason to stop;
- caps on the number of entries, on each file's size, on each student's files (as many
  and as large as grading reads from one submission folder: ``submission_files``), and on
  the ratio of size to compressed size; sizes are counted as the bytes are read, never
  taken from the archive's own header. The archive as a whole has a cap too, as a sanity
  limit: reaching it stops the reading, the students read by then are imported, and every
  other one is named.

Each student is imported whole or not at all. Their files are written into a scratch
folder of the course (``grading/scratch/``; never through a link), and only once all of
them are there does it replace their ``submitted/STUDENT/ASSIGNMENT`` (the old folder
renamed aside, the new one renamed in, the old one removed). A student whose files cannot
all be written (a damaged entry, a cap, any error of the filesystem) is named with why and
keeps the folder they had; one student's problem never stops or touches another's. What the
platform's names say besides (user id, late flag, its name for each file) is kept in
``lms_records`` for the exports, for every student imported.
"""

from __future__ import annotations

import errno
import lzma
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.course import TIMESTAMP_FILE, Course, GraderFolder
from autograder.intake.folders import name_problem
from autograder.intake.submission_files import MAX_ENTRIES as MAX_STUDENT_FILES
from autograder.intake.submission_files import MAX_FILE_BYTES
from autograder.intake.submission_files import MAX_TOTAL_BYTES as MAX_STUDENT_BYTES
from autograder.lms.formats import Entry, LmsFormat, chosen_format
from autograder.results.lms_records import LmsRecords, LmsSubmission, save_left_out

PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")
ARCHIVES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar")
MAX_ENTRIES = 10_000
MAX_TOTAL_BYTES = 2 * 2**30  # the whole archive: a sanity limit, each student has their own cap
MAX_RATIO = 200
# What reading an entry raises when the archive is damaged or uses what zipfile cannot read
# (an unknown compression, a password): that entry's student is left out, no traceback.
DAMAGED = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, NotImplementedError, RuntimeError)
_WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ASIDE = ".before"  # a student's old folder, in the scratch folder (no plain id starts with a dot)


@dataclass
class Collected:
    """What an import did: (student, file) pairs placed, every entry or student left out,
    with why, and what a TA should know of those imported (namesakes given a new id)."""

    placed: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Upload:
    """One file of the archive, as the platform's name for it reads."""

    entry: zipfile.ZipInfo
    student: str  # the id it is imported under
    file: str
    user_id: str
    late: bool
    prefix: str  # the platform's name before the file's own name


class _NotImported(Exception):
    """Why one student's files cannot all be written: they keep the folder they had."""


class _ArchiveFull(Exception):
    """The archive's cap is reached: nothing more is read."""


class _Damaged(Exception):
    """An entry that cannot be read from the archive."""


def collect_zip(course: Path, archive: Path, assignment: str, platform: LmsFormat | None = None) -> Collected:
    """Import ``archive``, a download of ``platform`` (default: the course's format), into
    ``course/submitted/*/assignment``."""
    if not archive.is_file():
        raise SystemExit(f"no such archive: {archive}")
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as error:
        raise SystemExit(f"{archive} is not a zip archive: {error}") from None
    course = Course(course)
    platform = platform or chosen_format(course.config)
    declared = tuple(course.config.Autograde.get("exclude_overwriting", {}).get(assignment, []))
    kept = LmsRecords.of(course.root)
    collected = Collected()
    longest = _longest_name(course.folder("submitted"))
    with bundle:
        entries = bundle.infolist()
        if len(entries) > MAX_ENTRIES:
            raise SystemExit(f"{archive} holds {len(entries)} entries, more than the {MAX_ENTRIES} an import takes")
        uploads = []
        for entry in entries:
            if entry.is_dir() and _depth(entry) < platform.folder_depth:
                continue  # one of the folders the platform keeps students' files in
            said = _read(entry, platform, assignment, declared, longest)
            if isinstance(said, str):
                collected.left_out.append(f"{entry.filename}: {said}")
            else:
                uploads.append(Upload(entry, said.student, said.file, said.user_id, said.late, said.prefix))
        scope = assignment if platform.ids_per_assignment else None
        chosen = _newest(_one_id_per_user(uploads, kept, scope, platform, collected), collected)
        imported: set[str] = set()
        try:
            _import(bundle, chosen, course, assignment, collected, imported)
        finally:  # even when interrupted: the records follow the folders that were replaced
            if imported:
                kept.save(_what_the_platform_said(chosen, imported, assignment))
            save_left_out(course.root, assignment, collected.left_out)
    return collected


def _depth(entry: zipfile.ZipInfo) -> int:
    """How many folders deep an entry of the archive is."""
    return entry.filename.rstrip("/").count("/")


def _read(entry: zipfile.ZipInfo, platform: LmsFormat, assignment: str, declared: tuple[str, ...],
          longest: int) -> Entry | str:
    """Who an entry of the archive is, as ``platform`` reads its name, or why it is not imported."""
    name = entry.filename
    if entry.is_dir() or _depth(entry) > platform.folder_depth or "\\" in name:
        return f"in a folder: only {platform.layout} is read"
    if name.lower().endswith(ARCHIVES):
        return "an archive inside the archive is not unpacked"
    said = platform.read(name)
    if isinstance(said, str):
        return said
    student, file, user_id = said.student, said.file, said.user_id
    if not PLAIN_ID.fullmatch(student):
        return "the student id in its name is not plain (letters, digits, . _ @ - only)"
    if user_id and not PLAIN_ID.fullmatch(user_id):
        return "the LMS user id in its name is not plain (letters, digits, . _ @ - only)"
    if file in (".", "..") or name_problem(file):
        return "the file name in it is not usable"
    if len(os.fsencode(file)) > longest:
        return f"the file name in it is longer than the {longest} bytes the filesystem takes"
    prefix_problem = name_problem(said.prefix)
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
    return said


def _longest_name(folder: Path) -> int:
    """The longest file name, in bytes, that the filesystem of ``folder`` (or of the
    nearest folder above it that exists) takes."""
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            try:
                return os.pathconf(candidate, "PC_NAME_MAX")
            except (OSError, ValueError):
                break
    return 255


def _one_id_per_user(uploads: list[Upload], kept: LmsRecords, scope: str | None, platform: LmsFormat,
                     collected: Collected) -> list[Upload]:
    """The uploads, each under the student id it is imported as: one id per user of the
    platform, in this archive and in earlier imports (of the assignment ``scope`` alone,
    when it is not None). Users whose names give one id (namesakes) get it with their user
    id added, except the user an earlier import kept it for; each of them is noted. An
    upload that cannot be given an id is named instead."""
    users: dict[str, set[str]] = defaultdict(set)
    for upload in uploads:
        if upload.user_id:
            users[upload.student].add(upload.user_id)
    ids: dict[tuple[str, str], str] = {}  # (the id the platform's name gives, user id) -> the id imported as
    for student, named in sorted(users.items()):
        for user in sorted(named):
            ids[(student, user)], note = _id_of(student, user, named, kept, scope)
            if note:
                collected.notes.append(note)
    placed: list[Upload] = []
    for upload in uploads:
        named = users.get(upload.student, set())
        user = upload.user_id or (min(named) if len(named) == 1 else "")
        if not user:
            if named:
                collected.left_out.append(f"{upload.entry.filename}: its name gives no LMS user id, and LMS users "
                                          f"{', '.join(sorted(named))} all have the student id {upload.student}: "
                                          "whose it is cannot be told")
                continue
            placed.append(upload)
        else:
            placed.append(replace(upload, student=ids[(upload.student, user)]))
    return _unclaimed(placed, kept, scope, platform, collected)


def _id_of(student: str, user: str, named: set[str], kept: LmsRecords, scope: str | None) -> tuple[str, str]:
    """The id ``user`` is imported as, whose platform name gives ``student`` as do those of
    ``named``, and a note for the TA ("" when there is nothing to know)."""
    earlier, own = kept.user_id(student, scope), f"{student}-{user}"
    theirs_before = earlier == user or own in kept.students_of(user, scope)
    namesakes = _namesakes_elsewhere(student, kept, scope)
    alone = not earlier and len(named) == 1 and not theirs_before and not namesakes
    given = student if earlier == user or alone else own
    if given == student and len(named) == 1:
        return given, ""
    if len(named) > 1:
        sharing = f"LMS users {', '.join(sorted(named))} all have the student id {student}"
    elif earlier and earlier != user:
        sharing = f"the student id {student} was LMS user {earlier}'s in an earlier import"
    elif namesakes and not theirs_before:
        sharing = (f"imports of other assignments gave namesakes of the student id {student} the ids "
                   f"{', '.join(namesakes)}, and the platform's user ids are each assignment's own: which of them "
                   f"LMS user {user} is cannot be told")
    else:
        sharing = f"LMS user {user} has the student id {student}"
    why = " (theirs in an earlier import)" if theirs_before else ""
    return given, f"{sharing}: LMS user {user}'s files are imported as {given}{why}"


def _namesakes_elsewhere(student: str, kept: LmsRecords, scope: str | None) -> list[str]:
    """The ids earlier imports of assignments other than ``scope`` gave namesakes whose
    names give ``student`` (``student-USER``); none when ``scope`` is None (user ids are
    the course's own, and tell namesakes apart across assignments)."""
    if scope is None:
        return []
    return sorted({owner for (owner, assignment), submission in kept.by_key.items()
                   if assignment != scope and owner == f"{student}-{submission.user_id}"})


def _unclaimed(uploads: list[Upload], kept: LmsRecords, scope: str | None, platform: LmsFormat,
               collected: Collected) -> list[Upload]:
    """The uploads whose id stands for no other user, here or in an earlier import, and is
    plain; every file of any other is named."""
    users: dict[str, set[str]] = defaultdict(set)
    for upload in uploads:
        if upload.user_id:
            users[upload.student].add(upload.user_id)
    refused = {}
    for student, ids in users.items():
        earlier = kept.user_id(student, scope)
        if not PLAIN_ID.fullmatch(student):
            refused[student] = f"the student id {student} is longer than the 100 characters an id may have"
        elif len(ids) > 1 or (earlier and earlier not in ids):
            owners = ", ".join(sorted(ids | ({earlier} if earlier else set())))
            refused[student] = f"the student id {student} would stand for LMS users {owners}"
    for upload in uploads:
        if upload.student in refused:
            collected.left_out.append(f"{upload.entry.filename}: {refused[upload.student]}: none of their files is "
                                      f"imported ({platform.apart_hint})")
    return [upload for upload in uploads if upload.student not in refused]


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


def _import(bundle: zipfile.ZipFile, chosen: dict[tuple[str, str], Upload], course: Course, assignment: str,
            collected: Collected, imported: set[str]) -> None:
    """Each student's chosen files written into a scratch folder, then put in place of their
    folder, one student at a time; ``imported`` gathers those put in place."""
    by_student: dict[str, list[Upload]] = defaultdict(list)
    for (student, _), upload in sorted(chosen.items()):
        by_student[student].append(upload)
    if not by_student:
        return
    submitted = course.folder("submitted")
    submitted.mkdir(parents=True, exist_ok=True)
    scratch = _scratch_folder(course.root, submitted)
    total = 0
    try:
        students = sorted(by_student)
        for index, student in enumerate(students):
            folder = course.folder("submitted", student, assignment)
            staged = scratch / student
            try:
                total += _stage(bundle, student, by_student[student], staged, MAX_TOTAL_BYTES - total)
                _put_in_place(staged, folder, scratch / _ASIDE, course.root)
            except _ArchiveFull:
                _remove(staged)
                for left in students[index:]:
                    collected.left_out.append(_kept(f"{left}: the archive's files hold more than "
                                                    f"{MAX_TOTAL_BYTES // 2**30} GiB in all, and the import stopped "
                                                    "before theirs", left, course, assignment))
                return
            except _NotImported as why:
                _remove(staged)
                collected.left_out.append(_kept(str(why), student, course, assignment))
                continue
            imported.add(student)
            collected.placed.extend((student, upload.file) for upload in by_student[student])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)



def _scratch_folder(root: Path, submitted: Path) -> Path:
    """A new folder on the filesystem of ``submitted`` (so that a rename moves a folder
    whole): in the course's scratch folder, or else a hidden one in ``submitted``."""
    scratch = GraderFolder.of(root).scratch
    scratch.mkdir(parents=True, exist_ok=True)
    if os.stat(scratch).st_dev == os.stat(submitted).st_dev:
        return Path(tempfile.mkdtemp(prefix="lms-import-", dir=scratch))
    return Path(tempfile.mkdtemp(prefix=".lms-import-", dir=submitted))


def _stage(bundle: zipfile.ZipFile, student: str, uploads: list[Upload], into: Path, archive_room: int) -> int:
    """The bytes of ``uploads`` written into the new folder ``into``, each file, the
    student's and the archive's counted as the bytes come out of the archive."""
    if len(uploads) > MAX_STUDENT_FILES:
        raise _NotImported(f"{student}: {len(uploads)} files, more than the {MAX_STUDENT_FILES} grading reads "
                           "from one submission")
    said = sum(upload.entry.file_size for upload in uploads)
    if said > MAX_STUDENT_BYTES:
        raise _NotImported(f"{student}: their files hold {said} bytes, more than the "
                           f"{MAX_STUDENT_BYTES // 2**20} MiB grading reads from one submission")
    if said > archive_room:
        raise _ArchiveFull
    written = 0
    try:
        into.mkdir()
    except OSError as error:
        raise _NotImported(f"{student}: their folder could not be made ({error.strerror or error})") from None
    for upload in uploads:
        entry = upload.entry
        own = min(MAX_FILE_BYTES, MAX_RATIO * max(entry.compress_size, 1) + 2**20)
        student_room, room = MAX_STUDENT_BYTES - written, archive_room - written
        limit = min(own, student_room, room)
        try:
            size = _copy_capped(bundle, entry, into / upload.file, limit)
        except _Damaged as error:
            raise _NotImported(f"{entry.filename}: damaged in the archive, or stored in a way it cannot be read "
                               f"({error})") from None
        except OSError as error:
            too_long = " (its name is too long)" if error.errno == errno.ENAMETOOLONG else ""
            raise _NotImported(f"{entry.filename}: could not be written{too_long} "
                               f"({error.strerror or error})") from None
        if size is None:
            if limit == room:
                raise _ArchiveFull
            if limit == student_room:
                raise _NotImported(f"{student}: their files hold more than the {MAX_STUDENT_BYTES // 2**20} MiB "
                                   f"grading reads from one submission ({entry.filename} went past it)")
            raise _NotImported(f"{entry.filename}: holds more than its header says (a zip bomb?)")
        written += size
    return written


def _copy_capped(bundle: zipfile.ZipFile, entry: zipfile.ZipInfo, target: Path, limit: int) -> int | None:
    """Bytes copied from ``entry`` to the new file ``target`` (never through a link), or
    None past ``limit``; ``_Damaged`` when the archive cannot give them."""
    written = 0
    try:
        source = bundle.open(entry)
    except DAMAGED as error:
        raise _Damaged(error) from None
    with source, os.fdopen(os.open(target, _WRITE_NEW, 0o666), "wb") as destination:
        while True:
            try:
                chunk = source.read(2**20)
            except (*DAMAGED, OSError) as error:
                raise _Damaged(error) from None
            if not chunk:
                return written
            written += len(chunk)
            if written > limit:
                return None
            destination.write(chunk)


def _put_in_place(staged: Path, folder: Path, aside: Path, root: Path) -> None:
    """``staged`` renamed to ``folder``, the folder there before (if any) renamed to
    ``aside`` first and removed after; no link is followed, and a failure puts the old
    folder back."""
    holder = folder.parent
    try:
        holder_status = os.lstat(holder)
    except FileNotFoundError:
        holder_status = None
    except OSError as error:
        raise _NotImported(f"{_shown(holder, root)} cannot be read ({error.strerror or error})") from None
    student = staged.name
    if holder_status is not None and not stat.S_ISDIR(holder_status.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(holder_status.st_mode) else "not a folder"
        raise _NotImported(f"{student}: {_shown(holder, root)}, which would hold their submission, is {kind}")
    try:
        holder.mkdir(exist_ok=True)
        had = os.path.lexists(folder)
        if had:
            os.rename(folder, aside)
        try:
            os.rename(staged, folder)
        except OSError:
            if had:
                os.rename(aside, folder)
            raise
    except OSError as error:
        raise _NotImported(f"{student}: their new folder could not be put in place "
                           f"({error.strerror or error})") from None
    _remove(aside)


def _remove(path: Path) -> None:
    """``path`` gone, whatever it is, never following a link; what cannot be removed stays
    (the scratch folder goes at the end)."""
    try:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        elif path.exists():
            shutil.rmtree(path)
    except OSError:
        pass


def _kept(why: str, student: str, course: Course, assignment: str) -> str:
    """``why``, and what became of the student's folder: it is left as it was."""
    folder = course.folder("submitted", student, assignment)
    shown = _shown(folder, course.root)
    if os.path.lexists(folder):
        return f"{why}: none of {student}'s files is imported, and {shown} is left as it was"
    return f"{why}: none of {student}'s files is imported (they have no {shown})"


def _shown(path: Path, root: Path) -> Path:
    """``path`` as a TA reads it: from the course folder, when it is inside."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def _what_the_platform_said(chosen: dict[tuple[str, str], Upload], imported: set[str],
                            assignment: str) -> list[LmsSubmission]:
    """One record per student whose folder the import replaced: the platform's user id,
    its late flag, and its name for each file placed."""
    by_student: dict[str, list[Upload]] = defaultdict(list)
    for upload in chosen.values():
        if upload.student in imported:
            by_student[upload.student].append(upload)
    return [LmsSubmission(student, assignment, user_id=next((u.user_id for u in uploads if u.user_id), ""),
                          late=any(u.late for u in uploads), prefixes={u.file: u.prefix for u in uploads})
            for student, uploads in sorted(by_student.items())]
