"""The record of every submission folder's grading, kept beside the gradebook.

It makes re-runs idempotent (a folder whose files have not changed since it was graded is
skipped; its ``fingerprint`` comes from ``submission_files.Listing``) and lets every report
list every folder with its status, even those nbgrader never saw. It is rewritten
atomically after each submission, so an interrupted run loses at most the submissions that
were still being graded.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.course import Course
from autograder.status import Status
from autograder.intake.submission_files import Listing
from autograder.json_files import write_json



def fingerprint(course: Course, assignment: str, listing: Listing) -> str:
    """What a folder's record was graded from: the submission's files and the instructor's
    (a fixed test regrades the assignment)."""
    return f"{listing.fingerprint} {course.source_digests.get(assignment, '')}"


@dataclass
class Record:
    student: str
    assignment: str
    status: Status
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    # Lines for a TA to read before the score counts: what the policy scan found, where the
    # second witness disagreed.
    flags: list[str] = field(default_factory=list)
    # The notebooks whose code the policy scan flagged (every one, for a flagged declared file).
    held_notebooks: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # Of ``seconds``, what confirming its passing tests in a second kernel took.
    witness_seconds: float = 0.0
    worker: str = ""  # the worker that graded it (a cluster's worker address, or this machine's process)
    why_graded: str = ""  # why the run that graded it did (a fix in source/, a new submission...)
    score: float = 0.0
    max_score: float = 0.0
    fingerprint: str = ""

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}"


class Records:
    """All records of one course, in ``GraderFolder.records``."""

    def __init__(self, path: Path):
        self.path = path
        self.by_key: dict[str, Record] = {}
        if path.exists():
            for raw in json.loads(path.read_text()):
                record = Record(**{**raw, "status": Status(raw["status"])})
                self.by_key[record.key] = record

    def get(self, student: str, assignment: str) -> Record | None:
        return self.by_key.get(f"{student}/{assignment}")

    def save(self, record: Record) -> None:
        self.by_key[record.key] = record
        write_json(self.path, [asdict(r) | {"status": r.status.value} for r in self.all()])

    def all(self) -> list[Record]:
        return sorted(self.by_key.values(), key=lambda r: r.key)
