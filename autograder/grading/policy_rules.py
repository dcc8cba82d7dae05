"""The rules of the policy scan (``policy``): what each construct of a student's code is
allowed, one AST node at a time. Everything here names a reason a TA can read."""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass
from functools import cache

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
    **dict.fromkeys(("formatwarning", "showwarning", "linecache", "getline", "getlines", "detect_anomaly",
                     "set_detect_anomaly", "metadata"), "reads the source of running cells, the tests among them"),
}
TENSOR_CLASSES = ("Tensor", "Parameter")
STRING_ANNOTATION = "annotates with a string, which typing and torch evaluate as code"


METHOD_STORE = "puts a function in place of a torch method"


@dataclass(frozen=True)
class Context:
    """What the rules need to know of the course and of the submission being scanned."""

    allowed_imports: frozenset[str]
    allowed_private: tuple[str, ...]  # glob patterns
    # names no student cell may rebind at its top level -> the module the instructor's cells
    # bind them to (a student cell may import that same module again); None for built-ins
    protected: dict[str, str | None]
    # names the instructor's test cells bind: a student function reaching them reaches the tests
    test_names: frozenset[str]
    own_modules: frozenset[str]  # modules the assignment's declared student files make importable
    imported: frozenset[str]  # names the student's own imports bind: writing to them patches a module


def findings(tree: ast.AST, context: Context) -> list[tuple[int, str]]:
    """(line, reason) for every construct of ``tree`` the policy does not allow."""
    visitor = _Visitor(context)
    visitor.visit(tree)
    return sorted(set(visitor.found))


def bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """name -> the module (or module attribute) an import statement binds it to."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.split(".")[0]: alias.name if alias.asname else alias.name.split(".")[0]
                for alias in node.names}
    prefix = "." * node.level + (node.module or "")
    return {alias.asname or alias.name: f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"}


def imported_names(tree: ast.AST) -> set[str]:
    """The names import statements bind anywhere in ``tree``."""
    return {name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in bindings(node)}


@cache
def torch_method_names() -> frozenset[str]:
    """Names of the functions ``nn.Module`` and ``torch.Tensor`` define (not their data
    attributes: ``p.grad = None`` is honest code)."""
    import torch

    names = set()
    for cls in (torch.nn.Module, torch.Tensor):
        for klass in cls.__mro__[:-1]:
            names |= {name for name, value in vars(klass).items()
                      if callable(value) and not isinstance(value, (property, type)) and not name.startswith("__")}
    return frozenset(names)


class _Visitor(ast.NodeVisitor):
    def __init__(self, context: Context):
        self.context = context
        self.found: list[tuple[int, str]] = []
        self.depth = 0  # inside a function or class, rebinding a name is local
        self.locals: list[set[str]] = []  # the names each enclosing function binds

    def flag(self, node: ast.AST, reason: str) -> None:
        self.found.append((node.lineno, reason))

    def visit_Import(self, node: ast.Import) -> None:
        for alias, (name, target) in zip(node.names, bindings(node).items()):
            same = self._as_the_instructor(name, target)
            if not same:
                self._bound(node, name)
            if same and alias.name == target:
                continue
            if not self._import_allowed(alias.name):
                self.flag(node, f"imports {alias.name}, which the course does not allow")
            self._module_path(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = bindings(node)
        if names and all(self._as_the_instructor(name, target) for name, target in names.items()):
            return
        if node.level or not self._import_allowed(node.module or ""):
            self.flag(node, f"imports from {'.' * node.level}{node.module or ''}, which the course does not allow")
        self._module_path(node, node.module or "")
        for alias in node.names:
            if alias.name in FORBIDDEN_ATTRIBUTES:
                self.flag(node, f"imports {alias.name}, which {FORBIDDEN_ATTRIBUTES[alias.name]}")
            elif alias.name in GADGETS:
                self.flag(node, f"imports {alias.name}, which {GADGETS[alias.name]}")
            elif _is_dunder(alias.name) or (alias.name.startswith("_") and not self._private_allowed(alias.name)):
                self.flag(node, f"imports the private name {alias.name}")
        for name, target in names.items():
            if not self._as_the_instructor(name, target):
                self._bound(node, name)

    def visit_Name(self, node: ast.Name) -> None:
        name, reading = node.id, isinstance(node.ctx, ast.Load)
        if name in FORBIDDEN_NAMES:
            self.flag(node, f"{name} {FORBIDDEN_NAMES[name]}")
        elif _HISTORY.fullmatch(name) and reading:
            self.flag(node, f"{name} reads IPython's history of cells, the tests among them")
        elif _is_dunder(name) and name not in ALLOWED_DUNDER_NAMES:
            self.flag(node, f"uses the special name {name}")
        elif name == "type" and reading:  # a call with one argument never gets here
            self.flag(node, "type(...) with more than one argument makes a new class at run time")
        elif name in GADGETS and reading:
            self.flag(node, f"{name} {GADGETS[name]}")
        elif (reading and self.locals and name in self.context.test_names
              and not any(name in scope for scope in self.locals)):
            self.flag(node, f"reads {name}, which the tests define: a function that runs inside a test reaches it")
        if not reading:
            self._bound(node, name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        writing = isinstance(node.ctx, (ast.Store, ast.Del))
        owner = node.value
        if _is_dunder(name):
            if name not in ALLOWED_DUNDER_NAMES or writing:
                self.flag(node, f"uses the special attribute {name}")
        elif name.startswith("_"):
            if writing or not self._private_allowed(name):
                self.flag(node, f"{'writes' if writing else 'reads'} the private attribute {name}")
        elif name in FORBIDDEN_ATTRIBUTES:
            self.flag(node, f"{name} {FORBIDDEN_ATTRIBUTES[name]}")
        elif name in GADGETS:
            self.flag(node, f"{name} {GADGETS[name]}")
        elif "hook" in name.lower():
            self.flag(node, f"{name} registers code that runs inside the tests' own computations")
        if writing:
            root = _root_name(node)
            if root in self.context.protected:
                self.flag(node, f"replaces {ast.unparse(node)}, which the tests use")
            elif root in self.context.imported:
                self.flag(node, f"replaces {ast.unparse(node)}, a part of an imported module")
            elif root is None:
                self.flag(node, f"changes {ast.unparse(node)}, an attribute of an object made at run time")
            elif not (isinstance(owner, ast.Name) and owner.id == "self"):
                if name in torch_method_names():
                    self.flag(node, f"{METHOD_STORE}: {ast.unparse(node)}")
                elif isinstance(node.ctx, ast.Del):
                    self.flag(node, f"deletes {ast.unparse(node)}")
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
        self._inside(node, _local_names(node))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._inside(node, _local_names(node))

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        self._inside(node, _local_names(node))

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if _holds_text(node.annotation):
            self.flag(node, STRING_ANNOTATION)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.flag(node, f"declares {', '.join(node.names)} global: a function that runs inside a test "
                        "could rebind the tests' own names")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if _last_name(base) in TENSOR_CLASSES:
                self.flag(node, f"defines a subclass of {ast.unparse(base)}")
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.flag(node, "defines a class with its own metaclass")
        self._bound(node, node.name)
        self._inside(node, set())

    def _inside(self, node: ast.AST, local: set[str]) -> None:
        self.depth += 1
        self.locals.append(local)
        self.generic_visit(node)
        self.locals.pop()
        self.depth -= 1

    def _bound(self, node: ast.AST, name: str) -> None:
        if self.depth == 0 and name in self.context.protected:
            self.flag(node, f"rebinds {name}, which the tests use")

    def _module_path(self, node: ast.AST, path: str) -> None:
        """Every part of a module's dotted path is held to the attribute rules: a private
        submodule (``torch.testing._comparison``) is as private as an attribute."""
        for part in path.split(".")[1:]:
            if part.startswith("_") and not self._private_allowed(part):
                self.flag(node, f"imports from the private module {path}")
            elif part in FORBIDDEN_ATTRIBUTES or part in GADGETS:
                self.flag(node, f"imports {path}, which {(FORBIDDEN_ATTRIBUTES | GADGETS)[part]}")

    def _as_the_instructor(self, name: str, target: str) -> bool:
        """An import that binds a protected name to what the instructor's cells bind it to."""
        return self.context.protected.get(name) == target

    def _import_allowed(self, module: str) -> bool:
        top = module.split(".")[0]
        return top in self.context.allowed_imports or top in self.context.own_modules

    def _private_allowed(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.context.allowed_private)


def _local_names(node: ast.AST) -> set[str]:
    """The names a function (or lambda, or comprehension) binds for itself."""
    names = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = node.args
        names |= {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                arguments.vararg, arguments.kwarg) if argument is not None}
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child is not node:
            names.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names |= set(bindings(child))
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
    return names


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
