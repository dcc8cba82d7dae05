"""Put back the nbgrader marks that students' editing breaks, before nbgrader sees them.

nbgrader finds what to grade by the metadata on each cell. Splitting a cell copies its
marks onto both halves, copying a cell duplicates them, some tools strip them, and a
deleted test cell is simply never run. Each repair matches the submission against the
student version it started from (``release/``) and is reported by name:

- a cell whose marks are missing or malformed gets them back when its source is the
  released one (test cells, locked text) or starts with the same line (an answer cell's
  ``def`` line);
- a released cell whose marks were edited (a stray ``grade`` or ``solution`` flag, other
  points) gets the released marks back, in one note for the notebook; marks that differ
  only in nbgrader's bookkeeping (a checksum, a schema version, ``1.0`` points for ``1``:
  a notebook made from an older release) are put back without one. A cell marked with
  an id the assignment does not have loses its marks and stays an ordinary cell: a
  damaged mark costs nothing but the mark, where nbgrader would reject the whole notebook;
- of several cells with one grade_id, the one that matches keeps the marks; the others
  stay as ordinary cells, so all the student's code still runs;
- a deleted test cell is put back after the cell that preceded it, so it is graded.
"""

from __future__ import annotations

import copy

from nbformat import NotebookNode

from autograder.course import grade_id


# What nbgrader writes into a cell's marks for its own use, not what grades it.
BOOKKEEPING = ("checksum", "schema_version", "cell_type")


def _bookkeeping_only(marks: dict, released: dict) -> bool:
    """Whether two cells' marks grade alike: the same but for nbgrader's bookkeeping, and
    points equal as numbers."""
    def grading(found: dict) -> dict:
        kept = {key: value for key, value in found.items() if key not in BOOKKEEPING}
        if isinstance(kept.get("points"), (int, float)) and not isinstance(kept["points"], bool):
            kept["points"] = float(kept["points"])
        return kept
    return isinstance(marks, dict) and grading(marks) == grading(released)


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def _matches(cell: NotebookNode, released: NotebookNode) -> bool:
    if cell.cell_type != released.cell_type:
        return False
    if cell.source.strip() == released.source.strip():
        return True
    solution = released.metadata["nbgrader"].get("solution")
    return bool(solution) and _first_line(cell.source) == _first_line(released.source)


def repair(notebook: NotebookNode, release: NotebookNode) -> list[str]:
    """Repair ``notebook`` in place; return what was repaired, in words for the TA."""
    notes, restored, put_back = [], [], []
    released_marks = {grade_id(cell): cell.metadata["nbgrader"] for cell in release.cells if grade_id(cell)}
    for cell in notebook.cells:
        if "nbgrader" in cell.get("metadata", {}) and grade_id(cell) is None:
            del cell.metadata["nbgrader"]
            notes.append("removed malformed nbgrader metadata from a cell")
        elif grade_id(cell) is not None and grade_id(cell) not in released_marks:
            notes.append(f"removed the nbgrader marks of a cell the assignment does not have: {grade_id(cell)}")
            del cell.metadata["nbgrader"]
        elif grade_id(cell) is not None and cell.metadata["nbgrader"] != released_marks[grade_id(cell)]:
            if not _bookkeeping_only(cell.metadata["nbgrader"], released_marks[grade_id(cell)]):
                put_back.append(grade_id(cell))
            cell.metadata["nbgrader"] = copy.deepcopy(released_marks[grade_id(cell)])
    if put_back:  # one note: a notebook made from an older release differs in every cell at once
        notes.append(f"put back the released nbgrader marks of cell {put_back[0]}" if len(put_back) == 1 else
                     f"put back the released nbgrader marks of {len(put_back)} cells: {', '.join(put_back)}")
    previous = None
    for released in release.cells:
        name = grade_id(released)
        if name is None:
            continue
        marked = [cell for cell in notebook.cells if grade_id(cell) == name]
        if len(marked) > 1:
            keep = next((cell for cell in marked if _matches(cell, released)), marked[0])
            for cell in marked:
                if cell is not keep:
                    del cell.metadata["nbgrader"]
            notes.append(f"cell {name} appeared {len(marked)} times: graded the one that matches")
            marked = [keep]
        if not marked:
            unmarked = [c for c in notebook.cells if grade_id(c) is None and _matches(c, released)]
            if unmarked:
                unmarked[0].metadata["nbgrader"] = copy.deepcopy(released.metadata["nbgrader"])
                restored.append(name)
                marked = unmarked[:1]
            elif released.metadata["nbgrader"].get("grade") and not released.metadata["nbgrader"].get("solution"):
                put_back = copy.deepcopy(released)
                position = notebook.cells.index(previous) + 1 if previous is not None else 0
                notebook.cells.insert(position, put_back)
                notes.append(f"restored the deleted test cell {name}")
                marked = [put_back]
        if marked:
            previous = marked[0]
    if restored:
        notes.append(f"restored the nbgrader metadata of {len(restored)} cells: {', '.join(restored)}")
    return notes
