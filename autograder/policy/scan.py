"""The policy scan: what a student's code may use, by allowlist, and every line that goes beyond.

A student's functions run inside the hidden tests, in the same interpreter, so no guard
inside the kernel can stop a determined forgery: one that reaches IPython, the kernel,
the interpreter or the tests' own objects. Reaching them needs constructs an honest
answer in this course never uses, and that a scan of the code can see, however the
names are spelled: a name built from strings is reached only through ``getattr``,
``vars``, ``__dict__``, ``exec`` and the like, which are not allowed either; nor are the
functions of allowed modules that turn text into code (``functools.singledispatch``,
``torch.utils.model_zoo.load_url``...), because the scan denies by default, name by name.
A notebook that breaks the policy is *held for review* (its autograde score stands but is
not final, and nbgrader marks it for manual grading), with every finding by cell and line.

Not scanned: a cell with the very text of one of the instructor's unmarked cells (it runs
the instructor's code, however the student moved or copied it). Allowed, and nothing
else of what follows:

- what the instructor's own notebooks use in their cells that are not tests, read from
  ``source/`` (``course``: their imports, with every name of a module the lists
  below do not name, their built-ins, private attributes and readable magics), unless
  the course sets ``c.PolicyScan.from_course = False``;
- the magics the course allows (``c.PolicyScan.allowed_magics``), their code scanned as
  the cell's (``magics``);

- imports of the modules the course declares (``c.PolicyScan.allowed_imports`` in its
  ``nbgrader_config.py``; the assignment's declared student files count as well);
- of those modules, the names the course allows (``c.PolicyScan.allowed_names``, glob
  patterns such as ``torch.nn.*`` or ``functools.partial``, ``!`` taking one back; a
  ``*`` never reaches into a submodule): every name a student's code reads from a module,
  through an import's name (``F.relu``, ``torch.utils.model_zoo.load_url``), by ``from m
  import name`` or under an alias, must be on it, and a module is never a value
  (``u = torch.utils``); what is read on a value (``x.add_``, ``p.grad``) is held to the
  attribute rules below (``names``);
- the built-ins the course allows (``c.PolicyScan.allowed_builtins``: no ``open``,
  ``input``, ``help``, ``dir``, ``hasattr``, ``memoryview``, ...);
- private attributes (``_name``) only to read, and only those the course declares
  (``c.PolicyScan.allowed_private``, e.g. ``_version``, ``torch._foreach_lerp_``);
- dunder names only ``__init__`` (as in ``super().__init__()``) and ``__name__``, and
  dunder methods only ``__init__``, ``__repr__`` and ``__str__``;
- annotations that name types (``int``, ``torch.Tensor``, ``Optional[nn.Module]``, a class
  of the student's, ``None``, ``|`` of those): typing and torch evaluate annotations, so a
  string, a call or a name bound to anything but a class is code they would run.

Never allowed: ``getattr``, ``setattr``, ``delattr``, ``vars``, ``globals``, ``locals``,
``exec``, ``eval``, ``compile``, ``__import__``, ``type`` with more than one argument,
``get_ipython`` (``!`` commands and other magics are calls to it), a text evaluated as
an expression unless it is a constant the scan reads (pandas' ``query``, ``eval``), IPython's history (``In``,
``Out``, ``_ih``, ``_i1``, ...); attributes named after modules that reach the
interpreter (``torch.sys``, ``x.os``, ``inspect``, ``gc``, ``ctypes``, ...), the kernel or
frames (``kernel``, ``events``, ``f_back``, ...), or hooks (anything with ``hook``: a
gradient or module hook runs inside the tests' own computations); deserialising
(``load``, unless the course names a function outright, as ``json.loads``), tensor
subclasses, ``as_subclass`` and ``.type(...)`` with a string; and rebinding, anywhere
in the notebook's namespace (by Python's scoping rules: a ``for`` target at a cell's
top level, ``:=`` in a comprehension there, ``global``...; ``scopes``), a name the
tests use: the instructor's imports, ``checks``, ``cases``, or a built-in such as
``isinstance`` that a test cell calls.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import json
import tokenize
from collections.abc import Mapping

import nbformat
from nbgrader import utils
from nbformat import NotebookNode
from traitlets import Bool, Instance, List, Unicode
from traitlets.config import Configurable

from autograder import course
from autograder.policy.course_use import CourseUse, unmarked_sources
from autograder.policy.magics import allowed_magics, cell_tree, magic_trees
from autograder.policy.names import (
    ALLOWED_BUILTINS,
    ALLOWED_NAMES,
    CURATED_MODULES,
    LIBRARY_TAKE_BACKS,
    Names,
)
from autograder.policy.rules import Context, findings, imported_names
from autograder.policy.vocabulary import binding_kind
from autograder.policy.scopes import Scopes, bindings


class PolicyScan(Configurable):
    """The course's policy, configured in ``nbgrader_config.py`` (``c.PolicyScan...``)."""

    allowed_imports = List(Unicode(), list(CURATED_MODULES), help=(
        "Modules (with their submodules) a student's code may import (default: torch and the standard "
        "library modules whose functions allowed_names lists one by one).")).tag(config=True)
    allowed_private = List(Unicode(), ["_version"],
                           help="Private attributes a student's code may read (glob patterns).").tag(config=True)
    allowed_names = List(Unicode(), list(ALLOWED_NAMES), help=(
        "Names of modules a student's code may use: glob patterns of dotted names, '*' for one part "
        "(never a submodule), '!' to take back what a pattern before allowed.")).tag(config=True)
    allowed_builtins = List(Unicode(), list(ALLOWED_BUILTINS),
                            help="Built-in names a student's code may use.").tag(config=True)
    allowed_magics = List(Unicode(), [], help=(
        "IPython magics a student's cell may use, by name (time, timeit, capture, matplotlib: the scan reads "
        "their code; any other is the course's risk to take).")).tag(config=True)
    from_course = Bool(True, help=(
        "Allow besides these lists what the instructor's notebooks in source/ use in their cells that are "
        "not tests: their imports (every name of a module the lists do not name), built-ins, private "
        "attributes and readable magics.")).tag(config=True)
    # What the course's source/ uses (``course``), given by whoever read the course.
    course_use = Instance(CourseUse, allow_none=True)

    def findings(self, notebook: NotebookNode, assignment: Assignment, own_modules=frozenset()) -> list[str]:
        """One line per finding in the student's own cells: where, what, and the line.
        ``own_modules`` names the modules the assignment's declared student files make
        importable; given as {module: its source}, what each imports is known, and a name
        read through it (``helpers.torch.utils``) is read as the name it is.

        Cells whose id is one of the instructor's are skipped (nbgrader overwrites them with
        the instructor's; an id, not a mark in the cell, which a student could forge)."""
        cells = []
        for number, cell in enumerate(notebook.cells, start=1):
            grade_id = course.grade_id(cell)
            if (cell.cell_type != "code" or grade_id in assignment.instructor_ids
                    or cell.source.strip() in assignment.unmarked):
                continue
            tree = cell_tree(cell.source)
            if tree is None:
                continue  # IPython cannot run it either
            cells.append((f"cell {number}" + (f" ({grade_id})" if grade_id else ""), tree, cell.source, Scopes(tree)))
        # what the magics' code binds counts with the cells' (``%time f = ...`` rebinds f)
        bound = [(tree, scopes) for _, tree, _, scopes in cells] + [(inner, Scopes(inner)) for _, tree, _, _ in cells
                                                                    for inner in magic_trees(tree)]
        context = self._context(assignment, own_modules, bound)
        return [finding for where, tree, source, scopes in cells
                for finding in _described(tree, scopes, source, where, context)]

    def file_findings(self, name: str, content: bytes, assignment: Assignment, own_modules=frozenset()) -> list[str]:
        """The findings in a Python file the student submitted beside the notebook, read
        as Python reads it: a file in another encoding than UTF-8 (its ``coding:`` line
        could make Python read other code than the scan), or one that does not parse
        (Python could not import it, nor could the scan read it), is a finding itself."""
        try:
            encoding = tokenize.detect_encoding(io.BytesIO(content).readline)[0]
        except SyntaxError:
            encoding = "unknown"
        if encoding not in ("utf-8", "utf-8-sig"):
            return [f"{name}, line 1: is written in the {encoding} encoding, which the scan does not read"]
        try:
            source = content.decode(encoding)
            tree = ast.parse(source)
        except (SyntaxError, ValueError) as error:
            return [f"{name}, line {getattr(error, 'lineno', None) or 1}: does not parse, so the scan cannot read it"]
        scopes = Scopes(tree)
        return _described(tree, scopes, source, name, self._context(assignment, own_modules, [(tree, scopes)]))

    def _context(self, assignment: Assignment, own_modules, cells: list[tuple[ast.AST, Scopes]]) -> Context:
        """What the rules need of the course, the assignment, and every cell at once (a
        name one cell imports or defines is read in the others)."""
        imports: dict[str, set[str]] = {name: {target} for name, target in assignment.protected.items() if target}
        kinds: dict[str, set[str]] = {name: {"class"} for name in assignment.classes}
        for _, scopes in cells:
            for name, nodes in scopes.module.bound.items():
                for node in nodes:
                    kinds.setdefault(name, set()).add(binding_kind(node))
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        imports.setdefault(name, set()).add(bindings(node)[name])
        use = self.course_use if self.from_course and self.course_use else CourseUse()
        # the instructor's modules, whose imports are followed as a student module's are
        own_sources = {**use.own_modules, **(own_modules if isinstance(own_modules, Mapping) else {})}
        own = frozenset(own_modules) | use.own_modules.keys()
        own_imports = {module: _module_imports(source) for module, source in own_sources.items()}
        # a library the course's lists do not name gets the names its notebooks reach, one level each, but
        # what runs text; the lists' own patterns come after, so that their '!' patterns take names back
        added = use.modules - {module.split(".")[0] for module in self.allowed_imports}
        derived = tuple(name for name in use.names if name.split(".")[0] in added)
        allowed_imports = frozenset(self.allowed_imports) | added
        # names may be read through the modules a student may import and those the instructor's cells did
        importable = allowed_imports | {target.split(".")[0] for target in assignment.protected.values() if target}
        return Context(allowed_imports, (*self.allowed_private, *sorted(use.private)), assignment.protected,
                       assignment.test_names, own, frozenset(set().union(*(imported_names(tree) for tree, _ in cells))),
                       Names((*derived, *LIBRARY_TAKE_BACKS, *self.allowed_names), importable, own),
                       frozenset(self.allowed_builtins) | use.builtins,
                       {name: frozenset(targets) for name, targets in imports.items()},
                       {name: frozenset(kind) for name, kind in kinds.items()}, own_imports,
                       frozenset(self.allowed_magics) | allowed_magics(use.magics))


# The course's own modules, which the tests find under these names in every notebook.
ALWAYS_PROTECTED = {"checks": "autograder.checks", "cases": "autograder.cases"}


class Assignment:
    """What the policy needs of an assignment's instructor notebook (``source/``)."""

    def __init__(self, source: NotebookNode):
        self.instructor_ids = instructor_cells(source)
        self.unmarked = unmarked_sources(source)
        self.protected: dict[str, str | None] = dict(ALWAYS_PROTECTED)
        names: set[str] = set()
        answers: set[str] = set()  # functions students are asked to write (a test may rebind one, to check its use)
        self.classes: set[str] = set()  # classes the instructor's cells define, which an annotation may name
        for cell in source.cells:
            # the instructor's: a locked cell, and an unmarked one students keep as it is (not scanned)
            instructors = course.grade_id(cell) in self.instructor_ids or cell.source.strip() in self.unmarked
            if cell.cell_type != "code" or not (instructors or utils.is_solution(cell)):
                continue
            tree = cell_tree(cell.source) or ast.Module(body=[], type_ignores=[])  # unparsable: adds nothing
            if utils.is_solution(cell):
                answers |= {node.name for node in tree.body
                            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
                continue
            graded = utils.is_grade(cell)
            bound = Scopes(tree).module.bound
            self.classes |= {name for name, nodes in bound.items() if all(isinstance(n, ast.ClassDef) for n in nodes)}
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    self.protected.update(bindings(node))
                elif graded and isinstance(node, ast.Name) and node.id in vars(builtins):
                    self.protected.setdefault(node.id, None)
            if graded:
                names |= set(bound)
        for answer in answers - ALWAYS_PROTECTED.keys():  # theirs to define, whatever a test imports
            self.protected.pop(answer, None)
        self.test_names = frozenset(names - set(self.protected) - answers)


def instructor_facts(source: NotebookNode) -> Assignment:
    """``Assignment(source)``, made once per process for the same instructor notebook: a
    second run in a process that graded the course before (a TA's lab, the benchmark, the
    test suite) does not walk its cells' syntax trees again (a second per assignment)."""
    return _instructor_facts(json.dumps(source, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _instructor_facts(serialised: str) -> Assignment:
    return Assignment(nbformat.from_dict(json.loads(serialised)))


def _module_imports(source: str) -> dict[str, str]:
    """name -> what a student's module binds it to by its imports at its top level."""
    try:
        scopes = Scopes(ast.parse(source))
    except (SyntaxError, ValueError):
        return {}
    return {name: bindings(node)[name] for name, nodes in scopes.module.bound.items()
            for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))}


def instructor_cells(source: NotebookNode) -> set[str]:
    """The ids of the cells nbgrader overwrites with the instructor's version (its own
    ``is_locked``)."""
    return {course.grade_id(cell) for cell in source.cells if course.grade_id(cell) and utils.is_locked(cell)}


def _described(tree: ast.AST, scopes: Scopes, shown: str, where: str, context: Context) -> list[str]:
    lines = shown.splitlines()
    return [f"{where}, line {line}: {reason}: {(lines[line - 1].strip() if 0 < line <= len(lines) else '')[:120]}"
            for line, reason in findings(tree, context, scopes)]
