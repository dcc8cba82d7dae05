"""Import a learning platform's download (one zip of every student's file) with nbgrader's
``zip_collect``, into ``submitted/STUDENT/ASSIGNMENT/``.

The student and file are read from each file's name by a regular expression with
``student_id`` and ``file_id`` groups, matched against the extracted file's full path.
The default fits Canvas' ``name_12345_67890_file.ipynb`` (and ``name_late_...``); a TA sets
another with ``--zip-pattern``. Files the pattern does not match are named, not dropped
in silence.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from autograder.nbgrader_cli import run_nbgrader

DEFAULT_PATTERN = r".*/(?P<student_id>[^/_]+)_(?:late_)?\d+_\d+_(?P<file_id>[^/]+)$"


def collect_zip(course: Path, archive: Path, assignment: str, pattern: str = DEFAULT_PATTERN) -> list[str]:
    """Collect ``archive`` into the course's submissions; return the files left out."""
    if not archive.is_file():
        raise SystemExit(f"no such archive: {archive}")
    downloaded = course / "downloaded" / assignment / "archive"
    if downloaded.exists():
        shutil.rmtree(downloaded)
    downloaded.mkdir(parents=True)
    shutil.copy(archive, downloaded)
    done = run_nbgrader(
        ["zip_collect", assignment, "--force", "--log-level=WARN",
         f"--FileNameCollectorPlugin.named_regexp={pattern}"],
        course, capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"nbgrader zip_collect failed:\n{done.stderr.strip()[-2000:]}")
    return [Path(name).name for name in re.findall(r"did not match anything in: (\S+)", done.stderr)]
