"""What the instructor's own notebooks use, read from ``source/``: the part of the policy
(``scan``) a course gets without writing it down.

A course written for numpy, matplotlib or pandas imports them in the cells students read
and in its solutions; its students' honest answers use what those cells use. So, unless
the course says otherwise (``c.PolicyScan.from_course = False``), the scan allows in a
student's cells what the instructor's *shown* cells use: every code cell of ``source/``
but the tests (the cells students read, the solutions, hand-graded answers). A test
cell's imports are the tests' tools, not the students'.

Read from those cells:

- the modules they import. Of a library (not the standard library, not IPython or the
  interpreter's machinery: ``NEVER_DERIVED``), the names one level under each module the
  cells import or read through (``numpy.*``, ``numpy.linalg.*`` for ``np.linalg.norm``,
  ``matplotlib.pyplot.*``) and under its everyday submodules
  (``names.LIBRARY_NAMES``), never another submodule's, and never the
  library functions that run text, import a module by its name or unpickle
  (``names.LIBRARY_TAKE_BACKS``). Of torch, the standard library and IPython,
  only the import: their names are the scan's own list, function by function;
- the built-ins they call (never ``getattr``, ``exec`` and their kind), the private
  attributes they read, the IPython magics they use of those the scan can read
  (``magics``);
- the instructor's Python files beside the notebooks: modules a student's cell may
  import, whose own imports the scan follows (``helpers.os`` is ``os``).
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from nbformat import NotebookNode
from nbgrader import utils

from autograder.policy.magics import cell_tree, magic_call
from autograder.policy.names import ALLOWED_NAMES, LIBRARY_NAMES
from autograder.policy.vocabulary import FORBIDDEN_ATTRIBUTES, FORBIDDEN_NAMES
from autograder.policy.scopes import Scopes, bindings

# This package (the tests' own tools), and modules that reach the interpreter, the kernel
# or the grading machinery: however the instructor's cells use them, nothing of them is
# derived. A course that wants one says so in its lists.
NEVER_DERIVED = frozenset({"autograder", "IPython", "ipykernel", "jupyter_client", "jupyter_core", "traitlets",
                           "nbformat", "nbclient", "nbconvert", "nbgrader", "pytest", "nose", "dill", "cloudpickle",
                           "joblib", "zmq", "tornado", "pexpect", "psutil", *FORBIDDEN_ATTRIBUTES})
# Modules whose names the scan's own list allows function by function (torch, the
# standard library's, IPython's display): the instructor's use adds their import only.
CURATED = frozenset(pattern.lstrip("!").split(".")[0] for pattern in ALLOWED_NAMES)
NEVER_DERIVED_NAMES = frozenset({"autograder"})  # not even the import


@dataclass(frozen=True)
class CourseUse:
    """What the instructor's shown cells and files use, course-wide."""

    modules: frozenset[str] = frozenset()  # top-level modules a student may import
    names: tuple[str, ...] = ()  # patterns of the names of libraries they use, one level each
    builtins: frozenset[str] = frozenset()
    private: frozenset[str] = frozenset()  # private attribute names read
    magics: frozenset[str] = frozenset()
    own_modules: Mapping[str, str] = field(default_factory=dict)  # the instructor's modules -> their source

    @classmethod
    def read(cls, sources: Iterable[NotebookNode], files: Mapping[str, bytes] | None = None) -> CourseUse:
        """``files``: the instructor's files beside the notebooks, by their name there."""
        own = {name.removesuffix(".py"): content.decode("utf-8", "replace") for name, content in (files or {}).items()
               if name.endswith(".py") and name.removesuffix(".py").isidentifier()}
        modules, names, used_builtins, private, magics = set(), set(), set(), set(), set()
        for source in sources:
            trees = [tree for cell in shown_cells(source) if (tree := cell_tree(cell.source))]
            imports = {name: target for tree in trees for nodes in Scopes(tree).module.bound.values()
                       for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))
                       for name, target in bindings(node).items()}  # what a name read in any cell of it is
            for node in (node for tree in trees for node in ast.walk(tree)):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found = bindings(node).values()
                    modules |= {target.split(".")[0] for target in found}
                    names |= {level for target in found for level in _levels(target.split("."), target.count(".") + 1)}
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    chain = _chain(node)
                    if chain and chain[0] in imports:
                        target = imports[chain[0]].split(".")
                        names |= set(_levels([*target, *chain[1:]], len(target)))
                    if node.attr.startswith("_") and not node.attr.endswith("__"):
                        private.add(node.attr)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in vars(builtins):
                    used_builtins.add(node.id)
                elif isinstance(node, ast.Call) and (magic := magic_call(node)):
                    magics.add(magic.name)
        libraries = {module for module in modules - NEVER_DERIVED - CURATED - own.keys()
                     if module not in sys.stdlib_module_names}
        names |= {name for library in libraries for name in LIBRARY_NAMES.get(library, ())}
        modules = libraries | (modules & CURATED - NEVER_DERIVED_NAMES)
        return cls(frozenset(modules), tuple(sorted(name for name in names if name.split(".")[0] in libraries)),
                   frozenset(used_builtins - FORBIDDEN_NAMES.keys()), frozenset(private), frozenset(magics), own)


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


def _levels(parts: list[str], start: int) -> list[str]:
    """``a.b.c`` read through an import of the first ``start`` parts: the names one level
    under ``a.b`` and ``a.b.c`` for ``start`` 2 (whichever of them are modules; a pattern
    under a function matches nothing). Never the package above what was imported:
    ``import matplotlib.pyplot`` reaches ``pyplot``'s names, not ``matplotlib``'s."""
    return [".".join([*parts[:length], "*"]) for length in range(start, len(parts) + 1)]


def _chain(node: ast.Attribute) -> list[str]:
    """``np.linalg.norm`` as ["np", "linalg", "norm"]; [] for an attribute read on a value."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else []

