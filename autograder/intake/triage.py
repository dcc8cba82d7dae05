"""Look at a submission folder before any code runs: which notebook to grade, and why not.

Students rename notebooks ("01-inplace-basics (1).ipynb"), submit the wrong one, leave
scratch notebooks beside it, or upload a file that is not a notebook at all. Triage finds
each of the assignment's notebooks by name, or else by content (the nbgrader grade cells
it carries), and names every problem so that nothing is skipped in silence. A notebook
that cannot be graded scores zero and is named; the folder's status says why only when
none of its notebooks can be graded. It sees the folder only through
``submission_files``: links and special files are named, never followed or opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import grade_ids
from autograder.status import Status
from autograder.intake.submission_files import Listing, read_file


@dataclass
class Triage:
    """The verdict on one folder: the notebooks to grade (``status`` None) or a final status.

    ``notebooks`` maps each assignment notebook found to the submitted file graded as it
    and that file's content, read once; an assignment notebook not in it scores zero."""

    student: str
    assignment: str
    folder: Path
    notebooks: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    status: Status | None = None
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    # Submitted notebooks that cannot be graded while others can: (status, detail) each.
    unusable: list[tuple[Status, str]] = field(default_factory=list)


def missing_notebook(name: str) -> str:
    """The note on a notebook of the assignment the folder lacks (the report names it as
    the reason that notebook has no feedback page)."""
    return f"{name} is missing: scored zero"


def triage(folder: Path, listing: Listing, assignment: str, cells: dict[str, dict[str, set[str]]]) -> Triage:
    """Decide what to grade in ``folder`` (submitted/STUDENT/ASSIGNMENT), listed as
    ``listing``; ``cells`` holds the grade_ids of every notebook of every assignment
    (assignment -> notebook name -> grade_ids)."""
    verdict = Triage(student=folder.parent.name, assignment=assignment, folder=folder)
    verdict.problems.extend(listing.refused)
    present = [name for name in listing.files if "/" not in name and name.endswith(".ipynb")]
    contents = {name: _read(folder, name) for name in present}
    chosen = _match(present, contents, assignment, cells, verdict.problems)
    if not chosen:
        found = ", ".join(present) or "no notebook at all"
        verdict.status, verdict.detail = Status.MISSING, f"expected {', '.join(cells[assignment])}; found {found}"
        return verdict
    verdict.problems.extend(f"extra notebook ignored: {name}" for name in present if name not in chosen.values())
    verdict.problems.extend(missing_notebook(name) for name in cells[assignment] if name not in chosen)
    distinct = _distinct({name: set().union(*notebooks.values()) for name, notebooks in cells.items()})
    theirs = {other: ids for other, ids in distinct.items() if other != assignment}
    for expected, submitted in chosen.items():
        status, detail = _unusable(submitted, contents[submitted], bool(cells[assignment][expected]),
                                   distinct[assignment], theirs)
        if status is None:
            verdict.notebooks[expected] = (submitted, contents[submitted])
        else:
            verdict.unusable.append((status, detail))
    if not verdict.notebooks:
        verdict.status, verdict.detail = verdict.unusable[0]
        verdict.unusable = []
    return verdict


def _match(present: list[str], contents: dict[str, bytes], assignment: str, cells: dict[str, dict[str, set[str]]],
           problems: list[str]) -> dict[str, str]:
    """Each assignment notebook found in the folder -> the submitted file graded as it: the
    file of its name, else the unclaimed notebook that shares most of its own grade_ids."""
    distinct = _distinct({(owner, name): ids for owner, notebooks in cells.items() for name, ids in notebooks.items()})
    own = {name: distinct[(assignment, name)] for name in cells[assignment]}
    chosen = {name: name for name in cells[assignment] if name in present}
    for expected in cells[assignment]:
        if expected in chosen:
            continue
        unclaimed = [name for name in present if name not in chosen.values() and name not in cells[assignment]]
        overlap = {name: len((grade_ids(contents[name]) or set()) & own[expected]) for name in unclaimed}
        matching = [name for name, shared in overlap.items() if shared]
        if matching:
            chosen[expected] = max(matching, key=overlap.get)
            problems.append(f"renamed notebook: {chosen[expected]} graded as {expected}")
    return chosen


def _unusable(name: str, data: bytes, graded: bool, mine: set[str],
              theirs: dict[str, set[str]]) -> tuple[Status | None, str]:
    """Why a submitted notebook cannot be graded, as (status, detail), or (None, ""); an
    empty one can, where the assignment's notebook has nothing to grade either."""
    ids = grade_ids(data)
    if ids is None:
        return Status.UNREADABLE, f"{name} is not valid notebook JSON"
    if graded and not json.loads(data)["cells"]:
        return Status.EMPTY, f"{name} has no cells"
    owners = sorted(other for other, cells in theirs.items() if ids & cells)
    if not ids & mine and owners:
        return Status.WRONG_ASSIGNMENT, f"{name} holds the exercises of {', '.join(owners)}"
    return None, ""


def _read(folder: Path, name: str) -> bytes:
    """A notebook's bytes; one that cannot be read counts as unreadable (empty bytes)."""
    try:
        return read_file(folder, name)
    except OSError:
        return b""


def _distinct(ids_by_key: dict) -> dict:
    """Each key's grade_ids that no other key has (an assignment's, a notebook's: "intro"
    is everywhere)."""
    return {key: ids - set().union(*(other for name, other in ids_by_key.items() if name != key))
            for key, ids in ids_by_key.items()}
