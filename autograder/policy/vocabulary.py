"""The policy's vocabulary: which names, attributes and dunders its rules refuse or allow
wherever they appear, and why (a reason a TA can read), with the small readings of a node
the rules share. The rules themselves are ``rules``, ``name_rules`` and ``text_rules``."""

from __future__ import annotations

import ast
import re


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
HISTORY = re.compile(r"_i?\d+|_{1,3}")
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
    **dict.fromkeys(("singledispatch", "singledispatchmethod"),
                    "evaluates annotations, which may be text, as code"),
    **dict.fromkeys(("from_string", "from_custom_template"), "compiles a template, which runs code"),
    **dict.fromkeys(("Formatter", "get_field", "update_wrapper", "wraps"),
                    "reaches or copies attributes by a name built at run time"),
    **dict.fromkeys(("formatwarning", "showwarning", "linecache", "getline", "getlines", "detect_anomaly",
                     "set_detect_anomaly", "metadata"), "reads the source of running cells, the tests among them"),
}
TENSOR_CLASSES = ("Tensor", "Parameter")
# Keywords whose value a library turns into a module it imports (a plot backend) or into
# settings that may (matplotlib's rc, seaborn's rc).
NAMED_MODULES = frozenset({"backend", "rc"})
STRING_ANNOTATION = "annotates with a string, which typing and torch evaluate as code"
# Built-in types an annotation may name (others: an allowed name of a module, or a class of the student's).
ANNOTATION_TYPES = frozenset({"int", "float", "bool", "str", "bytes", "complex", "list", "dict", "tuple", "set",
                              "frozenset", "object", "type", "slice", "range"})


METHOD_STORE = "puts a function in place of a torch method"

def attribute_reason(name: str) -> str | None:
    """Why an attribute of this name is refused wherever it is read (dunder and private
    names have rules of their own), or None."""
    if is_dunder(name) or name.startswith("_"):
        return None
    if name in FORBIDDEN_ATTRIBUTES:
        return FORBIDDEN_ATTRIBUTES[name]
    if name in GADGETS:
        return GADGETS[name]
    if "hook" in name.lower():
        return "registers code that runs inside the tests' own computations"
    return None


def part_name(part: str | ast.Attribute) -> str:
    return part if isinstance(part, str) else part.attr


def shadows(scope) -> bool:
    """Whether a binding in this scope certainly hides a built-in: a function's or a
    comprehension's (a module's or a class body's may not have run)."""
    return scope is not None and scope.kind in ("function", "comprehension")


def holds_text(annotation: ast.AST | None) -> bool:
    return annotation is not None and any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) for node in ast.walk(annotation))


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def binding_kind(node: ast.AST) -> str:
    return ("class" if isinstance(node, ast.ClassDef) else
            "function" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else
            "import" if isinstance(node, (ast.Import, ast.ImportFrom)) else "other")
