"""What the instructor's own notebooks use, read from ``source/``: the part of the policy
(``policy``) a course gets without writing it down.

A course written for numpy, matplotlib or pandas imports them in the cells students read
and in its solutions; its students' honest answers use what those cells use. So, unless
the course says otherwise (``c.PolicyScan.from_course = False``), the scan allows in a
student's cells what the instructor's *shown* cells use: every code cell of ``source/``
but the tests (the cells students read, the solutions, hand-graded answers). A test
cell's imports are the tests' tools, not the students'. The instructor's own Python
files beside the notebooks are modules a student's cell may import.

Read from those cells: the modules they import (a module the course's list does not
name gets every name under it, ``numpy.**``, but the text-to-code functions that the
attribute rules refuse anywhere), the built-ins they call (never ``getattr``, ``exec``
and their kind), the private attributes they read, and the IPython magics they use, of
those the scan can read (``policy_magics``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode
from nbgrader import utils

from autograder.grading.policy_magics import magic_call
from autograder.grading.policy_rules import FORBIDDEN_NAMES

# This package: the tests' own tools, never a student's to reach through the course.
GRADER_PACKAGE = "autograder"


@dataclass(frozen=True)
class CourseUse:
    """What the instructor's shown cells and files use, course-wide."""

    modules: frozenset[str] = frozenset()  # top-level modules imported, and the instructor's own modules
    builtins: frozenset[str] = frozenset()
    private: frozenset[str] = frozenset()  # private attribute names read
    magics: frozenset[str] = frozenset()

    @classmethod
    def read(cls, sources: Iterable[NotebookNode], files: Iterable[Path] = ()) -> CourseUse:
        modules, used_builtins, private, magics = set(), set(), set(), set()
        for tree in (_parsed(cell.source) for source in sources for cell in shown_cells(source)):
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    modules.add(node.module.split(".")[0])
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in vars(builtins):
                    used_builtins.add(node.id)
                elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.endswith("__"):
                    private.add(node.attr)
                elif isinstance(node, ast.Call) and (magic := magic_call(node)):
                    magics.add(magic.name)
        modules |= {path.stem for path in files if path.suffix == ".py" and path.stem.isidentifier()}
        return cls(frozenset(modules - {GRADER_PACKAGE}), frozenset(used_builtins - FORBIDDEN_NAMES.keys()),
                   frozenset(private), frozenset(magics))


def shown_cells(source: NotebookNode) -> list[NotebookNode]:
    """The instructor's code cells that are not tests: those students read, and the
    solutions (a hand-graded answer among them)."""
    return [cell for cell in source.cells
            if cell.cell_type == "code" and (utils.is_solution(cell) or not utils.is_grade(cell))]


def unmarked_sources(source: NotebookNode) -> frozenset[str]:
    """The text of the instructor's code cells that nbgrader leaves to students (neither
    locked nor a solution): a student's cell with that very text runs the instructor's
    code, not theirs, and is not scanned."""
    return frozenset(cell.source.strip() for cell in source.cells
                     if cell.cell_type == "code" and not utils.is_locked(cell) and not utils.is_solution(cell)
                     and cell.source.strip())


def _parsed(source: str) -> ast.Module:
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])
