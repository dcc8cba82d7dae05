"""Look at a submission folder before any code runs: which notebook to grade, and why not.

Students rename notebooks ("01-inplace-basics (1).ipynb"), submit the wrong one, leave
scratch notebooks beside it, or upload a file that is not a notebook at all. Triage finds
the notebook by name, or else by content (the nbgrader grade cells it carries), and names
every problem so that nothing is skipped in silence. It sees the folder only through
``submission_files``: links and special files are named, never followed or opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import grade_ids
from autograder.grading.status import Status
from autograder.grading.submission_files import Listing, read_file


@dataclass
class Triage:
    """The verdict on one folder: a notebook to grade (``status`` None) or a final status.

    ``notebook`` is the chosen notebook's name in the folder and ``notebook_bytes`` its
    content, read once."""

    student: str
    assignment: str
    folder: Path
    notebook: str | None = None
    notebook_bytes: bytes = b""
    status: Status | None = None
    detail: str = ""
    problems: list[str] = field(default_factory=list)


def triage(folder: Path, listing: Listing, assignment: str, cells_by_assignment: dict[str, set[str]],
           expected: str) -> Triage:
    """Decide what to grade in ``folder`` (submitted/STUDENT/ASSIGNMENT), listed as
    ``listing``, where the assignment's notebook is named ``expected``."""
    verdict = Triage(student=folder.parent.name, assignment=assignment, folder=folder)
    verdict.problems.extend(listing.refused)
    notebooks = [name for name in listing.files if "/" not in name and name.endswith(".ipynb")]
    contents = {name: _read(folder, name) for name in notebooks}
    others = [name for name in notebooks if name != expected]
    distinct = _distinct_cells(cells_by_assignment)
    ours = distinct[assignment]

    if expected in notebooks:
        candidate = expected
    else:
        overlap = {name: len((grade_ids(contents[name]) or set()) & ours) for name in others}
        matching = [name for name, shared in overlap.items() if shared]
        if not matching:
            found = ", ".join(others) or "no notebook at all"
            verdict.status = Status.MISSING
            verdict.detail = f"expected {expected}; found {found}"
            return verdict
        candidate = max(matching, key=overlap.get)
        verdict.problems.append(f"renamed notebook: {candidate} graded as {expected}")
    verdict.problems.extend(f"extra notebook ignored: {name}" for name in others if name != candidate)

    data = contents[candidate]
    ids = grade_ids(data)
    if ids is None:
        verdict.status = Status.UNREADABLE
        verdict.detail = f"{candidate} is not valid notebook JSON"
        return verdict
    if not json.loads(data)["cells"]:
        verdict.status = Status.EMPTY
        verdict.detail = f"{candidate} has no cells"
        return verdict
    if not ids & ours:
        owners = sorted(name for name, cells in distinct.items() if ids & cells)
        if owners:
            verdict.status = Status.WRONG_ASSIGNMENT
            verdict.detail = f"{candidate} holds the exercises of {', '.join(owners)}"
            return verdict
    verdict.notebook, verdict.notebook_bytes = candidate, data
    return verdict


def _read(folder: Path, name: str) -> bytes:
    """A notebook's bytes; one that cannot be read counts as unreadable (empty bytes)."""
    try:
        return read_file(folder, name)
    except OSError:
        return b""


def _distinct_cells(cells_by_assignment: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each assignment's grade_ids that no other assignment uses ("intro" is everywhere)."""
    return {
        name: cells - set().union(*(other for key, other in cells_by_assignment.items() if key != name))
        for name, cells in cells_by_assignment.items()
    }
