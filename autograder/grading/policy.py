"""The policy scan: what a student's code may use, by allowlist, and every line that goes beyond.

A student's functions run inside the hidden tests, in the same interpreter, so no guard
inside the kernel can stop a determined forgery: one that reaches IPython, the kernel,
the interpreter or the tests' own objects. Reaching them needs constructs an honest
answer in this course never uses, and that a scan of the code can see, however the
names are spelled: a name built from strings is reached only through ``getattr``,
``vars``, ``__dict__``, ``exec`` and the like, which are not allowed either. A notebook
that breaks the policy is *held for review* (its autograde score stands but is not final,
and nbgrader marks it for manual grading), with every finding by cell and line.

Allowed, and nothing else of what follows:

- imports of the modules the course declares (``c.PolicyScan.allowed_imports`` in its
  ``nbgrader_config.py``; the assignment's declared student files count as well);
- private attributes (``_name``) only to read, and only those the course declares
  (``c.PolicyScan.allowed_private``, e.g. ``_version``, ``torch._foreach_lerp_``);
- dunder names only ``__init__`` (as in ``super().__init__()``) and ``__name__``, and
  dunder methods only ``__init__``, ``__repr__`` and ``__str__``.

Never allowed: ``getattr``, ``setattr``, ``delattr``, ``vars``, ``globals``, ``locals``,
``exec``, ``eval``, ``compile``, ``__import__``, ``type`` with more than one argument,
``get_ipython`` (magics and ``!`` commands are calls to it), IPython's history (``In``,
``Out``, ``_ih``, ``_i1``, ...); attributes named after modules that reach the
interpreter (``torch.sys``, ``x.os``, ``inspect``, ``gc``, ``ctypes``, ...), the kernel or
frames (``kernel``, ``events``, ``f_back``, ...), or hooks (anything with ``hook``: a
gradient or module hook runs inside the tests' own computations); deserialising
(``load``), tensor subclasses and ``as_subclass``; and, at a cell's top level, rebinding
a name the tests use: the instructor's imports, ``checks``, ``cases``, or a built-in
such as ``isinstance`` that a test cell calls.
"""

from __future__ import annotations

import ast
import builtins

from IPython.core.inputtransformer2 import TransformerManager
from nbgrader import utils
from nbformat import NotebookNode
from traitlets import List, Unicode
from traitlets.config import Configurable

from autograder import course
from autograder.grading.policy_rules import Context, bindings, findings, imported_names


class PolicyScan(Configurable):
    """The course's policy, configured in ``nbgrader_config.py`` (``c.PolicyScan...``)."""

    allowed_imports = List(Unicode(), ["torch", "math"],
                           help="Modules (with their submodules) a student's code may import.").tag(config=True)
    allowed_private = List(Unicode(), ["_version"],
                           help="Private attributes a student's code may read (glob patterns).").tag(config=True)

    def findings(self, notebook: NotebookNode, assignment: Assignment, own_modules=frozenset()) -> list[str]:
        """One line per finding in the student's own cells: where, what, and the line.

        Cells whose id is one of the instructor's are skipped (nbgrader overwrites them with
        the instructor's; an id, not a mark in the cell, which a student could forge)."""
        cells = []
        transform = TransformerManager().transform_cell
        for number, cell in enumerate(notebook.cells, start=1):
            grade_id = course.grade_id(cell)
            if cell.cell_type != "code" or grade_id in assignment.instructor_ids:
                continue
            try:
                tree = ast.parse(transform(cell.source))
            except (SyntaxError, ValueError):
                continue  # IPython cannot run it either
            cells.append((f"cell {number}" + (f" ({grade_id})" if grade_id else ""), tree, cell.source))
        context = self._context(assignment, own_modules, set().union(*(imported_names(tree) for _, tree, _ in cells)))
        return [finding for where, tree, source in cells for finding in _described(tree, source, where, context)]

    def file_findings(self, name: str, source: str, assignment: Assignment, own_modules=frozenset()) -> list[str]:
        """The findings in a Python file the student submitted beside the notebook."""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
        return _described(tree, source, name, self._context(assignment, own_modules, imported_names(tree)))

    def _context(self, assignment: Assignment, own_modules, imported: set[str]) -> Context:
        return Context(frozenset(self.allowed_imports), tuple(self.allowed_private), assignment.protected,
                       assignment.test_names, frozenset(own_modules), frozenset(imported))


class Assignment:
    """What the policy needs of an assignment's instructor notebook (``source/``)."""

    def __init__(self, source: NotebookNode):
        self.instructor_ids = instructor_cells(source)
        self.protected: dict[str, str | None] = {"checks": "autograder.checks", "cases": "autograder.cases"}
        names: set[str] = set()
        answers: set[str] = set()  # functions students are asked to write (a test may rebind one, to check its use)
        for cell in source.cells:
            instructors = course.grade_id(cell) in self.instructor_ids
            if cell.cell_type != "code" or not (instructors or utils.is_solution(cell)):
                continue
            tree = _parsed(cell.source)
            if utils.is_solution(cell):
                answers |= {node.name for node in tree.body
                            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
                continue
            graded = utils.is_grade(cell)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    self.protected.update(bindings(node))
                elif graded and isinstance(node, ast.Name) and node.id in vars(builtins):
                    self.protected.setdefault(node.id, None)
            if graded:
                names |= _top_level_names(tree)
        self.test_names = frozenset(names - set(self.protected) - answers)


def _parsed(source: str) -> ast.Module:
    """An instructor cell's syntax tree, IPython's magics turned into Python first (an
    instructor's cell that still does not parse adds nothing)."""
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def instructor_cells(source: NotebookNode) -> set[str]:
    """The ids of the cells nbgrader overwrites with the instructor's version (its own
    ``is_locked``)."""
    return {course.grade_id(cell) for cell in source.cells if course.grade_id(cell) and utils.is_locked(cell)}


def _top_level_names(tree: ast.AST) -> set[str]:
    """The names a cell binds in the notebook's namespace (not its functions' locals)."""
    names = set()
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif not isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            names |= _top_level_names(child)
    return names


def _described(tree: ast.AST, shown: str, where: str, context: Context) -> list[str]:
    lines = shown.splitlines()
    return [f"{where}, line {line}: {reason}: {(lines[line - 1].strip() if 0 < line <= len(lines) else '')[:120]}"
            for line, reason in findings(tree, context)]
