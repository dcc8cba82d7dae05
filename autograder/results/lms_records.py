"""What an LMS import learnt of each submission that its files do not say, kept beside the
gradebook in ``grading/lms.json`` for the exports: the platform's id of the student (the
gradebook CSV's ``ID`` column), whether the platform marked the submission late, and the
name it gave each file up to the file's own name (feedback named with it is mapped back
to the student by the platform's bulk upload). And what the last import of each
assignment left out of its archive, and why (``grading/lms-left-out.json``), for the
report: a TA who missed it on the terminal finds it there.

The file is written whole or not at all (``json_files``): an interrupted import leaves the
previous one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.course import GraderFolder
from autograder.json_files import write_json


@dataclass
class LmsSubmission:
    student: str
    assignment: str
    user_id: str = ""  # "" when the import's pattern reads none
    late: bool = False
    # Each imported file -> the platform's name for it before the file's own name
    # (Canvas: "smithjohn_LATE_1001_5550_" for "smithjohn_LATE_1001_5550_hw.ipynb").
    prefixes: dict[str, str] = field(default_factory=dict)


class LmsRecords:
    """Every submission an LMS import brought into one course, one per student and assignment."""

    def __init__(self, path: Path):
        self.path = path
        self.by_key: dict[tuple[str, str], LmsSubmission] = {}
        if path.exists():
            for raw in json.loads(path.read_text()):
                self.by_key[(raw["student"], raw["assignment"])] = LmsSubmission(**raw)

    @classmethod
    def of(cls, course_root: Path) -> LmsRecords:
        return cls(GraderFolder.of(course_root).lms)

    def get(self, student: str, assignment: str) -> LmsSubmission | None:
        return self.by_key.get((student, assignment))

    def user_id(self, student: str, assignment: str | None = None) -> str:
        """The platform's id of ``student`` from any import (of ``assignment`` alone, when
        given: a platform whose user ids are each assignment's own), "" when none recorded one."""
        return next((kept.user_id for (owner, of), kept in sorted(self.by_key.items())
                     if owner == student and kept.user_id and assignment in (None, of)), "")

    def students_of(self, user_id: str, assignment: str | None = None) -> set[str]:
        """Every student id an import (of ``assignment`` alone, when given) kept for the
        platform's user ``user_id``."""
        return {owner for (owner, of), kept in self.by_key.items()
                if user_id and kept.user_id == user_id and assignment in (None, of)}

    def students(self) -> set[str]:
        return {student for student, _ in self.by_key}

    def assignments(self) -> set[str]:
        return {assignment for _, assignment in self.by_key}

    def save(self, submissions: list[LmsSubmission]) -> None:
        """Keep ``submissions``, each in place of what an earlier import kept for its
        student and assignment."""
        for submission in submissions:
            self.by_key[(submission.student, submission.assignment)] = submission
        write_json(self.path, [asdict(kept) for _, kept in sorted(self.by_key.items())])




def save_left_out(course_root: Path, assignment: str, lines: list[str]) -> None:
    """What the import of ``assignment`` just left out, in place of what the last one did."""
    kept = left_out(course_root)
    kept[assignment] = list(lines)
    found_lines = {name: found for name, found in sorted(kept.items()) if found}
    write_json(GraderFolder.of(course_root).lms_left_out, found_lines)


def left_out(course_root: Path) -> dict[str, list[str]]:
    """assignment -> the lines its last zip import left out ({} when none left anything)."""
    path = GraderFolder.of(course_root).lms_left_out
    if not path.is_file():
        return {}
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {name: [str(line) for line in lines] for name, lines in found.items()
            if isinstance(name, str) and isinstance(lines, list)} if isinstance(found, dict) else {}
