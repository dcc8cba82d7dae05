"""Read a student's submission folder without trusting what is in it.

A submission folder is the student's: it may hold a symbolic link (to the instructor's
notebook, to ``/proc/self/mem``), a FIFO that blocks whoever opens it, a device, thousands
of files or one enormous one. Everything the grader does with a submission before the
sandbox (fingerprinting, triage, copying into a grading job) reads it through here:

- entries are listed without following links, and only regular files are ever opened,
  with ``O_NOFOLLOW | O_NONBLOCK`` and checked again (``fstat``) once open;
- subfolders are entered through the descriptor of their parent, never by path, so a
  link anywhere in the tree leads nowhere;
- the number of entries, their depth and every file's size are capped.

What is not taken is named (``Listing.refused``) so that the report says why; only a
folder that breaks a cap as a whole raises ``FolderRefused``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 500
MAX_DEPTH = 6
MAX_FILE_BYTES = 64 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class FolderRefused(Exception):
    """The folder as a whole cannot be taken (too many entries, too large, not a folder)."""


@dataclass(frozen=True)
class Listing:
    """A submission folder as the grader may use it.

    ``files`` are the regular files (paths relative to the folder, ``/``-separated,
    sorted); ``refused`` names every other entry and why; ``fingerprint`` hashes all of
    it (names, kinds, contents, link targets), so that any change shows.
    """

    files: tuple[str, ...]
    refused: tuple[str, ...]
    fingerprint: str


def list_folder(folder: Path) -> Listing:
    """List ``folder`` (which must not itself be a link) without following any link in it."""
    digest = hashlib.sha256()
    files: list[str] = []
    refused: list[str] = []
    budget = _Budget()
    try:
        top = os.open(folder, _FOLDER)
    except OSError as error:
        raise FolderRefused(f"not a folder that can be opened ({error.strerror})") from None
    try:
        _walk(top, "", 0, digest, files, refused, budget)
    finally:
        os.close(top)
    return Listing(tuple(files), tuple(refused), digest.hexdigest())


def read_file(folder: Path, relative: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of ``folder``; ``OSError`` for anything else."""
    parts = relative.split("/")
    descriptor = os.open(folder, _FOLDER)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        return _read_regular(descriptor, parts[-1], max_bytes)
    finally:
        os.close(descriptor)


def copy_file(folder: Path, relative: str, destination: Path) -> None:
    """Copy a regular file of ``folder`` to ``destination`` (a new file the grader owns)."""
    data = read_file(folder, relative)
    destination.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)


class _Budget:
    """Entries and bytes seen so far in one folder, against the caps."""

    def __init__(self):
        self.entries = 0
        self.bytes = 0

    def entry(self) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise FolderRefused(f"it holds more than {MAX_ENTRIES} entries")

    def read(self, size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_TOTAL_BYTES:
            raise FolderRefused(f"its files hold more than {MAX_TOTAL_BYTES // 2**20} MiB")


def _walk(descriptor: int, prefix: str, depth: int, digest, files: list[str], refused: list[str],
          budget: _Budget) -> None:
    with os.scandir(descriptor) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        relative = prefix + entry.name
        budget.entry()
        kind, detail = _kind(entry, descriptor)
        digest.update(f"{relative}\0{kind}\0".encode("utf-8", "surrogateescape"))
        if kind == "folder":
            if depth + 1 > MAX_DEPTH:
                refused.append(f"{relative}/: folders nested more than {MAX_DEPTH} deep are not read")
                continue
            try:
                inner = os.open(entry.name, _FOLDER, dir_fd=descriptor)
            except OSError as error:
                refused.append(f"{relative}/: cannot be opened ({error.strerror})")
                continue
            try:
                _walk(inner, relative + "/", depth + 1, digest, files, refused, budget)
            finally:
                os.close(inner)
        elif kind == "file":
            try:
                data = _read_regular(descriptor, entry.name, MAX_FILE_BYTES)
            except OSError as error:
                refused.append(f"{relative}: {error.strerror}")
                continue
            budget.read(len(data))
            digest.update(hashlib.sha256(data).digest())
            files.append(relative)
        else:
            digest.update(detail.encode("utf-8", "surrogateescape"))
            target = f" (points to {detail})" if kind == "symbolic link" else ""
            refused.append(f"{relative}: {kind} ignored{target}")


def _kind(entry: os.DirEntry, folder_descriptor: int) -> tuple[str, str]:
    """What an entry is, never following a link: (kind, what identifies its content)."""
    if entry.is_symlink():
        try:
            return "symbolic link", os.readlink(entry.name, dir_fd=folder_descriptor)
        except OSError:
            return "symbolic link", ""
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISDIR(mode):
        return "folder", ""
    if stat.S_ISREG(mode):
        return "file", ""
    names = {stat.S_ISFIFO: "named pipe", stat.S_ISSOCK: "socket", stat.S_ISCHR: "device", stat.S_ISBLK: "device"}
    return next((name for test, name in names.items() if test(mode)), "special file"), ""


def _read_regular(folder_descriptor: int, name: str, max_bytes: int) -> bytes:
    descriptor = os.open(name, _READ, dir_fd=folder_descriptor)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(0, "not a regular file")
        if status.st_size > max_bytes:
            raise OSError(0, f"larger than {max_bytes // 2**20} MiB")
        with os.fdopen(os.dup(descriptor), "rb") as stream:
            data = stream.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise OSError(0, f"larger than {max_bytes // 2**20} MiB")
        return data
    finally:
        os.close(descriptor)
