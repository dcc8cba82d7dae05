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
import fnmatch
import re

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode
from traitlets import List, Unicode
from traitlets.config import Configurable

# Dunder names a student may read: descriptive strings, and the operators (``x.__iadd__``,
# which the lectures show); not the ones that reach classes, functions or namespaces.
ALLOWED_DUNDER_NAMES = frozenset({
    "__init__", "__name__", "__qualname__", "__doc__", "__version__",
    *(f"__{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos",
                             "abs", "and", "or", "xor", "invert", "lt", "le", "gt", "ge", "len", "getitem",
                             "setitem", "contains", "iter", "bool", "float", "int", "index")),
    *(f"__i{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor")),
})
ALLOWED_DUNDER_METHODS = frozenset({"__init__", "__repr__", "__str__"})
FORBIDDEN_NAMES = {
    **dict.fromkeys(("getattr", "setattr", "delattr", "vars", "globals", "locals", "__import__"),
                    "reaches attributes or variables by a name built at run time"),
    **dict.fromkeys(("exec", "eval", "compile", "breakpoint"), "runs code built at run time"),
    "get_ipython": "reaches into IPython (magics and ! commands are calls to it)",
    **dict.fromkeys(("In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii"),
                    "reads IPython's history of cells, the tests among them"),
    **dict.fromkeys(("exit", "quit"), "stops the kernel"),
}
# IPython's numbered history (_i3, _3) and its last outputs (_, __, ___), when read.
_HISTORY = re.compile(r"_i?\d+|_{1,3}")
# Attribute names that lead out of the student's own objects, whatever they are read on.
FORBIDDEN_ATTRIBUTES = {
    **dict.fromkeys(("sys", "os", "builtins", "inspect", "gc", "ctypes", "ctypeslib", "importlib", "subprocess",
                     "types", "threading", "_thread", "signal", "atexit", "pickle", "marshal", "operator", "runpy",
                     "traceback", "dis", "weakref", "IPython", "ipykernel", "mock", "multiprocessing", "socket",
                     "pty", "faulthandler", "resource"),
                    "reaches a module that gives access to the interpreter or the machine"),
    **dict.fromkeys(("kernel", "shell", "showtraceback", "displayhook", "display_pub", "user_ns",
                     "input_transformers_cleanup", "input_transformers_post", "ast_transformers", "run_cell",
                     "set_custom_exc", "custom_exceptions", "excepthook", "shell_handlers", "history_manager"),
                    "reaches into IPython or the kernel"),
    **dict.fromkeys(("settrace", "setprofile", "addaudithook", "f_back", "f_globals", "f_locals", "f_code",
                     "f_trace", "tb_frame", "gi_frame", "cr_frame", "ag_frame"),
                    "inspects or traces the running code (the tests)"),
    **dict.fromkeys(("library", "cpp_extension", "load_inline", "overrides", "TorchFunctionMode",
                     "TorchDispatchMode", "as_subclass"), "changes what torch operations do"),
    **dict.fromkeys(("load", "loads"), "deserialises objects (unpickling can run any code)"),
}
# Functions of allowed modules that turn a string into code or into an attribute: named
# wherever they appear (attribute, imported name, bare name after ``import *``).
GADGETS = {
    **dict.fromkeys(("get_type_hints", "ForwardRef", "benchmark", "Timer", "timeit", "compile", "jit", "fx",
                     "hub", "package", "rundocs", "f2py", "make_dataclass"), "turns text into code that runs"),
    **dict.fromkeys(("Formatter", "get_field", "update_wrapper", "wraps"),
                    "reaches or copies attributes by a name built at run time"),
    **dict.fromkeys(("formatwarning", "showwarning", "linecache", "getline", "getlines"),
                    "reads the source of running cells, the tests among them"),
}
TENSOR_CLASSES = ("Tensor", "Parameter")
STRING_ANNOTATION = "annotates with a string, which typing and torch evaluate as code"


class PolicyScan(Configurable):
    """The course's policy, configured in ``nbgrader_config.py`` (``c.PolicyScan...``)."""

    allowed_imports = List(Unicode(), ["torch", "math"],
                           help="Modules (with their submodules) a student's code may import.").tag(config=True)
    allowed_private = List(Unicode(), ["_version"],
                           help="Private attributes a student's code may read (glob patterns).").tag(config=True)

    def findings(self, notebook: NotebookNode, instructor_ids: set[str], protected: dict[str, str | None],
                 own_modules: set[str] = frozenset()) -> list[str]:
        """One line per finding in the student's own cells: where, what, and the line.

        Cells whose id is one of ``instructor_ids`` are skipped (nbgrader overwrites them
        with the instructor's; an id, not a mark in the cell, which a student could forge).
        ``protected`` are the names no cell may rebind at its top level; ``own_modules``
        the modules the assignment's declared files make importable."""
        cells = []
        transform = TransformerManager().transform_cell
        for number, cell in enumerate(notebook.cells, start=1):
            marks = cell.get("metadata", {}).get("nbgrader")
            grade_id = marks.get("grade_id") if isinstance(marks, dict) else None
            if cell.cell_type != "code" or grade_id in instructor_ids:
                continue
            try:
                tree = ast.parse(transform(cell.source))
            except (SyntaxError, ValueError):
                continue  # IPython cannot run it either
            cells.append((f"cell {number}" + (f" ({grade_id})" if grade_id else ""), tree, cell.source))
        imported = set().union(*(_imported_names(tree) for _, tree, _ in cells))
        return [finding for where, tree, source in cells
                for finding in self._findings_in(tree, source, where, protected, own_modules, imported)]

    def file_findings(self, name: str, source: str, protected: dict[str, str | None],
                      own_modules: set[str]) -> list[str]:
        """The findings in a Python file the student submitted beside the notebook."""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
        return self._findings_in(tree, source, name, protected, own_modules, _imported_names(tree))

    def _findings_in(self, tree: ast.AST, shown: str, where: str, protected: dict[str, str | None],
                     own_modules: set[str], imported: set[str]) -> list[str]:
        lines = shown.splitlines()
        visitor = _Visitor(self, protected, set(own_modules), imported)
        visitor.visit(tree)
        result = []
        for line, reason in sorted(set(visitor.found)):
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            result.append(f"{where}, line {line}: {reason}: {text[:120]}")
        return result

    def import_allowed(self, module: str, own_modules: set[str]) -> bool:
        top = module.split(".")[0]
        return top in self.allowed_imports or top in own_modules

    def private_allowed(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.allowed_private)


def instructor_cells(source: NotebookNode) -> set[str]:
    """The ids of the cells nbgrader overwrites with the instructor's version."""
    return {
        cell.metadata.nbgrader["grade_id"]
        for cell in source.cells
        if "nbgrader" in cell.get("metadata", {})
        and (cell.metadata.nbgrader.get("locked") or (cell.metadata.nbgrader.get("grade")
                                                       and not cell.metadata.nbgrader.get("solution")))
    }


def protected_names(source: NotebookNode, instructor_ids: set[str]) -> dict[str, str | None]:
    """Names no student cell may rebind, each with the module the instructor's cells bind
    it to (a student cell may import that same module again): what the instructor's cells
    import, the test helpers, and the built-ins the test cells call (None)."""
    names: dict[str, str | None] = {"checks": "autograder.checks", "cases": "autograder.cases"}
    for cell in source.cells:
        marks = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or marks.get("grade_id") not in instructor_ids:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update(_bindings(node))
            elif marks.get("grade") and isinstance(node, ast.Name) and node.id in vars(builtins):
                names.setdefault(node.id, None)
    return names


def _bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """name -> the module (or module attribute) an import statement binds it to."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.split(".")[0]: alias.name if alias.asname else alias.name.split(".")[0]
                for alias in node.names}
    prefix = "." * node.level + (node.module or "")
    return {alias.asname or alias.name: f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"}


def _imported_names(tree: ast.AST) -> set[str]:
    """The names import statements bind anywhere in ``tree``."""
    return {name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in _bindings(node)}


class _Visitor(ast.NodeVisitor):
    def __init__(self, policy: PolicyScan, protected: dict[str, str | None], own_modules: set[str],
                 imported: set[str]):
        self.policy = policy
        self.protected = protected
        self.own_modules = own_modules
        self.imported = imported  # writing to an attribute of these patches a module
        self.found: list[tuple[int, str]] = []
        self.depth = 0  # inside a function or class, rebinding a name is local

    def flag(self, node: ast.AST, reason: str) -> None:
        self.found.append((node.lineno, reason))

    def visit_Import(self, node: ast.Import) -> None:
        for alias, (name, target) in zip(node.names, _bindings(node).items()):
            same = self._as_the_instructor(name, target)
            if not same:
                self._bound(node, name)
            if same and alias.name == target:
                continue
            if not self.policy.import_allowed(alias.name, self.own_modules):
                self.flag(node, f"imports {alias.name}, which the course does not allow")
            self._module_path(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        bindings = _bindings(node)
        if all(self._as_the_instructor(name, target) for name, target in bindings.items()) and bindings:
            return
        if node.level or not self.policy.import_allowed(node.module or "", self.own_modules):
            self.flag(node, f"imports from {'.' * node.level}{node.module or ''}, which the course does not allow")
        self._module_path(node, node.module or "")
        for alias in node.names:
            if alias.name in FORBIDDEN_ATTRIBUTES:
                self.flag(node, f"imports {alias.name}, which {FORBIDDEN_ATTRIBUTES[alias.name]}")
            elif alias.name in GADGETS:
                self.flag(node, f"imports {alias.name}, which {GADGETS[alias.name]}")
            elif _is_dunder(alias.name) or (alias.name.startswith("_") and not self.policy.private_allowed(alias.name)):
                self.flag(node, f"imports the private name {alias.name}")
        for name, target in bindings.items():
            if not self._as_the_instructor(name, target):
                self._bound(node, name)

    def _module_path(self, node: ast.AST, path: str) -> None:
        """Every part of a module's dotted path is held to the attribute rules: a private
        submodule (``torch.testing._comparison``) is as private as an attribute."""
        for part in path.split(".")[1:]:
            if part.startswith("_") and not self.policy.private_allowed(part):
                self.flag(node, f"imports from the private module {path}")
            elif part in FORBIDDEN_ATTRIBUTES or part in GADGETS:
                self.flag(node, f"imports {path}, which {(FORBIDDEN_ATTRIBUTES | GADGETS)[part]}")

    def _as_the_instructor(self, name: str, target: str) -> bool:
        """An import that binds a protected name to what the instructor's cells bind it to."""
        return self.protected.get(name) == target

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if name in FORBIDDEN_NAMES:
            self.flag(node, f"{name} {FORBIDDEN_NAMES[name]}")
        elif name in GADGETS and isinstance(node.ctx, ast.Load):
            self.flag(node, f"{name} {GADGETS[name]}")
        elif _HISTORY.fullmatch(name) and isinstance(node.ctx, ast.Load):
            self.flag(node, f"{name} reads IPython's history of cells, the tests among them")
        elif _is_dunder(name) and name not in ALLOWED_DUNDER_NAMES:
            self.flag(node, f"uses the special name {name}")
        elif name == "type" and isinstance(node.ctx, ast.Load):  # a call with one argument never gets here
            self.flag(node, "type(...) with more than one argument makes a new class at run time")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bound(node, name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        writing = isinstance(node.ctx, (ast.Store, ast.Del))
        if _is_dunder(name):
            if name not in ALLOWED_DUNDER_NAMES or writing:
                self.flag(node, f"uses the special attribute {name}")
        elif name.startswith("_"):
            if writing or not self.policy.private_allowed(name):
                self.flag(node, f"{'writes' if writing else 'reads'} the private attribute {name}")
        elif name in FORBIDDEN_ATTRIBUTES:
            self.flag(node, f"{name} {FORBIDDEN_ATTRIBUTES[name]}")
        elif name in GADGETS:
            self.flag(node, f"{name} {GADGETS[name]}")
        elif "hook" in name.lower():
            self.flag(node, f"{name} registers code that runs inside the tests' own computations")
        if writing and _root_name(node) in self.protected:
            self.flag(node, f"replaces {ast.unparse(node)}, which the tests use")
        elif writing and _root_name(node) in self.imported:
            self.flag(node, f"replaces {ast.unparse(node)}, a part of an imported module")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "type":
            if len(node.args) != 1 or node.keywords:
                self.flag(node, "type(...) with more than one argument makes a new class at run time")
            for argument in node.args:
                self.visit(argument)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _is_dunder(node.name) and node.name not in ALLOWED_DUNDER_METHODS:
            self.flag(node, f"defines the special method {node.name}")
        arguments = node.args
        annotations = [argument.annotation for argument in (*arguments.posonlyargs, *arguments.args,
                       *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if argument is not None]
        if any(_holds_text(annotation) for annotation in [*annotations, node.returns]):
            self.flag(node, STRING_ANNOTATION)
        self._bound(node, node.name)
        self._inside(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._inside(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if _holds_text(node.annotation):
            self.flag(node, STRING_ANNOTATION)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            if name in self.protected:
                self.flag(node, f"declares {name} global, to rebind a name the tests use")

    visit_Nonlocal = visit_Global

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if _last_name(base) in TENSOR_CLASSES:
                self.flag(node, f"defines a subclass of {ast.unparse(base)}")
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.flag(node, "defines a class with its own metaclass")
        self._bound(node, node.name)
        self._inside(node)

    def _inside(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def _bound(self, node: ast.AST, name: str) -> None:
        if self.depth == 0 and name in self.protected:
            self.flag(node, f"rebinds {name}, which the tests use")


def _holds_text(annotation: ast.AST | None) -> bool:
    return annotation is not None and any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) for node in ast.walk(annotation))


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None
