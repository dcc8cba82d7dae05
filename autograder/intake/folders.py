"""The submission folders of a course, ``submitted/STUDENT/ASSIGNMENT/``, found without
following a link, each with the reason it cannot be graded, if there is one.

A folder that is a symbolic link (to the instructor's ``source/``, to another student) is
never entered. A name that nbgrader, a CSV file or a terminal would misread (control or
invisible characters, a leading dot, brackets, which nbgrader's file search reads as a
pattern) is refused by name; every other name the filesystem allows is graded like any
other (nbgrader is handed it escaped, database URLs are escaped).
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

# nbgrader and Jupyter's own, never a submission.
IGNORED = (".ipynb_checkpoints",)
# Unicode categories a name must not contain: control, format (bidirectional overrides,
# zero-width), separators of lines and paragraphs, surrogates (undecodable bytes), unassigned.
UNPRINTABLE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


@dataclass(frozen=True)
class SubmissionFolder:
    student: str
    assignment: str
    path: Path
    refused: str | None = None  # why it cannot be graded at all


def submission_folders(submitted: Path, students: tuple[str, ...] = (),
                       assignments: tuple[str, ...] = ()) -> list[SubmissionFolder]:
    """Every ``STUDENT/ASSIGNMENT`` folder under ``submitted``, sorted (only those of
    ``students`` and ``assignments`` if given); a linked or oddly named folder comes with
    its reason."""
    found = []
    for student in _entries(submitted):
        if students and student.name not in students:
            continue
        if student.is_symlink():
            found.append(SubmissionFolder(student.name, "*", Path(student.path),
                                          f"submitted/{student.name} is a symbolic link; only real folders are graded"))
            continue
        if not student.is_dir(follow_symlinks=False):
            found.append(SubmissionFolder(student.name, "*", Path(student.path),
                                          f"submitted/{student.name} is not a folder; a submission is a folder "
                                          "submitted/STUDENT/ASSIGNMENT/"))
            continue
        problem = name_problem(student.name)
        if problem:
            found.append(SubmissionFolder(student.name, "*", Path(student.path),
                                          f"the student folder's name {problem}"))
            continue
        for assignment in _entries(Path(student.path)):
            if assignments and assignment.name not in assignments:
                continue
            path = Path(assignment.path)
            if assignment.is_symlink():
                found.append(SubmissionFolder(student.name, assignment.name, path,
                                              "the folder is a symbolic link; only real folders are graded"))
            elif assignment.is_dir(follow_symlinks=False):
                problem = name_problem(assignment.name)
                found.append(SubmissionFolder(student.name, assignment.name, path,
                                              problem and f"the assignment folder's name {problem}"))
            else:
                found.append(SubmissionFolder(student.name, assignment.name, path,
                                              "not a folder; a submission is a folder submitted/STUDENT/ASSIGNMENT/"))
    return found


def name_problem(name: str) -> str | None:
    """Why a folder name cannot be used as a student or assignment id, or None."""
    if name.startswith("."):
        return "starts with a dot (a hidden folder)"
    odd = [char for char in name if unicodedata.category(char) in UNPRINTABLE]
    if odd:
        return "holds control or invisible characters (" + ", ".join(f"U+{ord(c):04X}" for c in odd[:3]) + ")"
    if "[" in name or "]" in name:
        return "holds [ or ], which nbgrader reads as a pattern, not as a name"
    return None


def _entries(folder: Path) -> list[os.DirEntry]:
    with os.scandir(folder) as scan:
        return sorted((entry for entry in scan if entry.name not in IGNORED), key=lambda entry: entry.name)
