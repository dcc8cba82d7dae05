"""An assignment's bundle: everything a worker needs to grade any submission of one
assignment, as one value made once per run and shipped to each worker once.

A bundle is a tar of a course of its own: the course's configuration (its
``nbgrader_config.py`` and ``nbgrader_config.json``, the gradebook's location left out,
and the modules beside them, where a configured plugin lives; and the TA's own Jupyter
configuration files, which a worker reads in place of its host's), the assignment's
``source/`` folder, its compiled student version, and a gradebook that holds that
assignment (its due date, notebooks and cells) and the course's student ids, nothing
else: no other assignment, no submission, no name or email. Its digest (SHA-256 of the
tar) names it: a worker keeps each bundle it was given under that name
(``unpacked``), and a job refers to its bundle by the digest alone. No path of the
TA's machine is in it: a worker lays out each job's course in a folder of its own
(``job_course``) and writes the gradebook's location there.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.nbgrader_api import CONFIG_FILE, CONFIG_JSON, GRADEBOOK, gradebook_url, jupyter_config_folders

# Where a bundle keeps the TA's Jupyter configuration files, a folder each, lowest priority first.
JUPYTER_CONFIG = "jupyter-config"


@dataclass(frozen=True)
class Bundle:
    digest: str
    content: bytes  # the tar


def make_bundle(course: Course, assignment: str, scratch: Path) -> Bundle:
    """The bundle of ``assignment``; ``scratch`` is a folder for its gradebook while it is made."""
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(course.root.iterdir()):
        if path.is_file() and not path.is_symlink() and path.suffix == ".py":
            files[path.name] = (path.read_bytes(), 0o644)
    settings = json.loads((course.root / CONFIG_JSON).read_text()) if (course.root / CONFIG_JSON).is_file() else {}
    settings.get("CourseDirectory", {}).pop("db_url", None)  # the worker's own, written where the job runs
    files[CONFIG_JSON] = (json.dumps(settings, indent=1, sort_keys=True).encode(), 0o644)
    for index, folder in enumerate(jupyter_config_folders()):
        for name in (CONFIG_FILE, CONFIG_JSON):
            if (Path(folder) / name).is_file():
                files[f"{JUPYTER_CONFIG}/{index:02d}/{name}"] = ((Path(folder) / name).read_bytes(), 0o644)
    for top in (course.folder("source", assignment=assignment), course.grader_folder.graded_release / assignment):
        for path in sorted(top.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[str(path.relative_to(course.root))] = (path.read_bytes(), path.stat().st_mode & 0o755)
    files[GRADEBOOK] = (_assignment_gradebook(course, assignment, scratch), 0o600)
    content = pack(files)
    return Bundle(hashlib.sha256(content).hexdigest(), content)


class Bundles:
    """The run's bundles, made when a job first needs one (``digest``), kept by digest for
    the scheduler (``content``) and unpacked on this machine too (``template``: the
    collector scores a notebook again from it where the second witness disagreed)."""

    def __init__(self, course: Course, scratch: Path):
        self.course, self.scratch = course, scratch
        self._digests: dict[str, str] = {}
        self._contents: dict[str, bytes] = {}

    def digest(self, assignment: str) -> str:
        if assignment not in self._digests:
            bundle = make_bundle(self.course, assignment, self.scratch / "gradebooks")
            self._digests[assignment], self._contents[bundle.digest] = bundle.digest, bundle.content
        return self._digests[assignment]

    def content(self, digest: str) -> bytes:
        return self._contents[digest]

    def template(self, digest: str) -> Path:
        self.scratch.mkdir(parents=True, exist_ok=True)
        return unpacked(digest, self._contents[digest], self.scratch)


def _assignment_gradebook(course: Course, assignment: str, scratch: Path) -> bytes:
    """A copy of the course's gradebook with ``assignment`` and the students' ids only."""
    folder = scratch / assignment
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copy = folder / GRADEBOOK
    with closing(sqlite3.connect(course.gradebook_file)) as live, closing(sqlite3.connect(copy)) as into:
        live.backup(into)  # consistent even while a formgrader writes
    with Gradebook(gradebook_url(folder)) as gradebook:
        for other in [other.name for other in gradebook.assignments if other.name != assignment]:
            gradebook.remove_assignment(other)
        for submission in list(gradebook.find_assignment(assignment).submissions):
            gradebook.remove_submission(assignment, submission.student.id)
        for student in gradebook.students:
            student.first_name = student.last_name = student.email = student.lms_user_id = None
        gradebook.db.commit()
    with closing(sqlite3.connect(copy)) as database:
        database.execute("VACUUM")
    content = copy.read_bytes()
    shutil.rmtree(folder)
    return content


def pack(files: dict[str, tuple[bytes, int]]) -> bytes:
    """A tar of ``files`` (path -> content, mode) that depends on nothing else (no times, no owners)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (content, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(content), mode, 0
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def unpacked(digest: str, content: bytes, into: Path) -> Path:
    """The bundle's files in ``into/DIGEST`` (unpacked once per folder: later calls find
    them), checked against its digest."""
    folder = into / digest
    if not folder.is_dir():
        if hashlib.sha256(content).hexdigest() != digest:
            raise ValueError(f"a bundle does not match its digest {digest[:12]}")
        partial = into / f"{digest}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(fileobj=io.BytesIO(content)) as tar:
            tar.extractall(partial, filter="data")
        os.replace(partial, folder)
    return folder


def config_folders(template: Path) -> list[Path]:
    """The TA's Jupyter configuration folders in an unpacked bundle, lowest priority first."""
    folder = template / JUPYTER_CONFIG
    return sorted(folder.iterdir()) if folder.is_dir() else []


def job_course(template: Path, workdir: Path, overrides: dict | None = None) -> Course:
    """A course for one job in ``workdir``: a copy of the unpacked bundle ``template``, its
    gradebook (a fresh copy of the bundle's) named in its configuration. Its configuration
    is read as the TA's is (the process reads Jupyter's from the bundle: ``worker``)."""
    shutil.copytree(template, workdir, dirs_exist_ok=True)
    settings = json.loads((workdir / CONFIG_JSON).read_text())
    settings.setdefault("CourseDirectory", {})["db_url"] = gradebook_url(workdir)
    (workdir / CONFIG_JSON).write_text(json.dumps(settings, indent=1))
    return Course(workdir, overrides)
