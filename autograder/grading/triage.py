"""Look at a submission folder before any code runs: which notebook to grade, and why not.

Students rename notebooks ("01-inplace-basics (1).ipynb"), submit the wrong one, leave
scratch notebooks beside it, or upload a file that is not a notebook at all. Triage finds
the notebook by name, or else by content (the nbgrader grade cells it carries), and names
every problem so that nothing is skipped in silence. Symbolic links are never followed:
one could point a grader at the instructor's own notebook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.status import Status


@dataclass
class Triage:
    """The verdict on one folder: a notebook to grade (``status`` None) or a final status."""

    student: str
    assignment: str
    folder: Path
    notebook: Path | None = None
    status: Status | None = None
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


def grade_ids(path: Path) -> set[str] | None:
    """The nbgrader grade_ids in a notebook file, or None if it is not a readable notebook."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    return {
        cell["metadata"]["nbgrader"].get("grade_id")
        for cell in cells
        if isinstance(cell, dict)
        and isinstance(cell.get("metadata"), dict)
        and isinstance(cell["metadata"].get("nbgrader"), dict)
    } - {None}


def triage(folder: Path, assignment: str, cells_by_assignment: dict[str, set[str]]) -> Triage:
    """Decide what to grade in ``folder`` (submitted/STUDENT/ASSIGNMENT)."""
    verdict = Triage(student=folder.parent.name, assignment=assignment, folder=folder)
    if folder.is_symlink() or folder.parent.is_symlink():
        verdict.status = Status.MISSING
        verdict.detail = "the folder is a symbolic link; only real folders are graded"
        return verdict
    links = sorted(path for path in folder.iterdir() if path.is_symlink())
    verdict.problems.extend(f"symbolic link ignored: {path.name}" for path in links)
    expected = folder / f"{assignment}.ipynb"
    notebooks = sorted(path for path in folder.glob("*.ipynb") if path not in links)
    others = [path for path in notebooks if path != expected]
    distinct = _distinct_cells(cells_by_assignment)
    ours = distinct[assignment]

    if expected in notebooks:
        candidate = expected
    else:
        overlap = {path: len((grade_ids(path) or set()) & ours) for path in others}
        matching = [path for path, shared in overlap.items() if shared]
        if not matching:
            found = ", ".join(path.name for path in others) or "no notebook at all"
            verdict.status = Status.MISSING
            verdict.detail = f"expected {expected.name}; found {found}"
            return verdict
        candidate = max(matching, key=overlap.get)
        verdict.problems.append(f"renamed notebook: {candidate.name} graded as {expected.name}")
    verdict.problems.extend(f"extra notebook ignored: {path.name}" for path in others if path != candidate)

    ids = grade_ids(candidate)
    if ids is None:
        verdict.status = Status.UNREADABLE
        verdict.detail = f"{candidate.name} is not valid notebook JSON"
        return verdict
    if not json.loads(candidate.read_text(encoding="utf-8"))["cells"]:
        verdict.status = Status.EMPTY
        verdict.detail = f"{candidate.name} has no cells"
        return verdict
    if not ids & ours:
        owners = sorted(name for name, cells in distinct.items() if ids & cells)
        if owners:
            verdict.status = Status.WRONG_ASSIGNMENT
            verdict.detail = f"{candidate.name} holds the exercises of {', '.join(owners)}"
            return verdict
    verdict.notebook = candidate
    return verdict


def _distinct_cells(cells_by_assignment: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each assignment's grade_ids that no other assignment uses ("intro" is everywhere)."""
    return {
        name: cells - set().union(*(other for key, other in cells_by_assignment.items() if key != name))
        for name, cells in cells_by_assignment.items()
    }
