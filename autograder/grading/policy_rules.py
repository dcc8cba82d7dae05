"""The rules of the policy scan (``policy``): what each construct of a student's code is
allowed, one AST node at a time. Everything here names a reason a TA can read. Which names
of modules and which built-ins are allowed is ``policy_names``; which scope a name lives
in, ``policy_scopes``."""

from __future__ import annotations

import ast
import builtins
import fnmatch
import re
from dataclasses import dataclass
from functools import cache

from autograder.grading.policy_magics import Magic, cell_tree, magic_call, magic_code
from autograder.grading.policy_names import BUILTIN_NAMES, Names
from autograder.grading.policy_scopes import Scopes, bindings
from autograder.grading.policy_texts import (
    BY_NAME,
    PANDAS,
    TEXT_EXPRESSIONS,
    by_name_argument,
    names_no_method,
    pandas_expression,
    unexpected_syntax,
)

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


@dataclass(frozen=True)
class Context:
    """What the rules need to know of the course and of the submission being scanned."""

    allowed_imports: frozenset[str]
    allowed_private: tuple[str, ...]  # glob patterns
    # names no student cell may rebind in the notebook's namespace -> the module the
    # instructor's cells bind them to (a student cell may import that same module again); None for built-ins
    protected: dict[str, str | None]
    # names the instructor's test cells bind: a student function reaching them reaches the tests
    test_names: frozenset[str]
    own_modules: frozenset[str]  # modules the assignment's declared student files make importable
    imported: frozenset[str]  # names the student's own imports bind: writing to them patches a module
    names: Names  # the names of modules the course allows
    allowed_builtins: frozenset[str]
    # name -> what the notebook's imports (the student's, at a cell's top level, and the
    # instructor's) bind it to: a dotted name read through it starts there
    module_imports: dict[str, frozenset[str]]
    # name -> how the student's cells bind it in the notebook's namespace ("class", "import", "other")
    module_bindings: dict[str, frozenset[str]]
    # a declared student module -> what its imports bind (name -> target), where its source is known
    own_imports: dict[str, dict[str, str]]
    magics: frozenset[str] = frozenset()  # IPython magics the course allows (``policy_magics``)


def findings(tree: ast.AST, context: Context, scopes: Scopes | None = None) -> list[tuple[int, str]]:
    """(line, reason) for every construct of ``tree`` the policy does not allow."""
    visitor = _Visitor(context, scopes or Scopes(tree))
    visitor.visit(tree)
    visitor.rebindings()
    return sorted(set(visitor.found))


def imported_names(tree: ast.AST) -> set[str]:
    """The names import statements bind anywhere in ``tree``."""
    return {name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in bindings(node)}


def binding_kind(node: ast.AST) -> str:
    return ("class" if isinstance(node, ast.ClassDef) else
            "function" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else
            "import" if isinstance(node, (ast.Import, ast.ImportFrom)) else "other")


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
    def __init__(self, context: Context, scopes: Scopes):
        self.context = context
        self.scopes = scopes
        self.found: list[tuple[int, str]] = []
        self.in_chain: set[ast.AST] = set()  # the inner parts of a dotted name, read as the whole name
        self.vouched: set[ast.AST] = set()  # attributes the course's allowlist names outright (json.loads)
        self.called: set[ast.AST] = set()  # what calls call (``frame.query`` in ``frame.query(...)``)
        self.in_expression = False  # reading a pandas expression, whose bare names are columns
        self.assigned: dict[ast.AST, ast.Assign] = {}  # an assignment's targets -> the assignment

    def flag(self, node: ast.AST, reason: str) -> None:
        self.found.append((node.lineno, reason))

    def rebindings(self) -> None:
        """Every binding of a name the tests use in the notebook's namespace, at any depth."""
        for name, nodes in self.scopes.module.bound.items():
            if name not in self.context.protected:
                continue
            for node in nodes:
                importing = isinstance(node, (ast.Import, ast.ImportFrom))
                if not (importing and self._as_the_instructor(name, bindings(node)[name])):
                    self.flag(node, f"rebinds {name}, which the tests use")

    def visit_Import(self, node: ast.Import) -> None:
        names = self.context.names
        for alias, (name, target) in zip(node.names, bindings(node).items()):
            if self._as_the_instructor(name, target) and alias.name == target:
                continue
            if not self._import_allowed(alias.name):
                self.flag(node, f"imports {alias.name}, which the course does not allow")
            elif not self._module_path(node, alias.name) and "." in alias.name and not names.own(alias.name):
                module, is_module, _ = names.resolve(alias.name.split("."))
                if not (is_module and names.under(module)):  # a submodule with no name the course allows
                    self.flag(node, f"imports {alias.name}, which the course does not allow")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = bindings(node)
        if names and all(self._as_the_instructor(name, target) for name, target in names.items()):
            return
        module = node.module or ""
        allowed = not node.level and self._import_allowed(module)
        if not allowed:
            self.flag(node, f"imports from {'.' * node.level}{module}, which the course does not allow")
        allowed = not self._module_path(node, module) and allowed
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, f"imports every name of {module}: the course allows names one by one")
                continue
            through = self._through_own(module.split("."), [alias.name])
            name, is_module, _ = self.context.names.resolve([*through[0], *through[1]] if through else [module])
            reason = None if self.context.names.named(name) else _attribute_reason(alias.name)
            if reason:
                self.flag(node, f"imports {alias.name}, which {reason}")
            elif _is_dunder(alias.name) or (alias.name.startswith("_") and not self._private_allowed(alias.name)):
                self.flag(node, f"imports the private name {alias.name}")
            elif allowed and through and not (
                    self.context.names.under(name) if is_module else self._name_allowed(name)):
                self.flag(node, f"imports {name}, which the course does not allow")

    def visit_Name(self, node: ast.Name) -> None:
        name, reading = node.id, isinstance(node.ctx, ast.Load)
        if name in FORBIDDEN_NAMES:
            self.flag(node, f"{name} {FORBIDDEN_NAMES[name]}")
        elif _HISTORY.fullmatch(name) and reading:
            self.flag(node, f"{name} reads IPython's history of cells, the tests among them")
        elif _is_dunder(name) and name not in ALLOWED_DUNDER_NAMES:
            self.flag(node, f"uses the special name {name}")
        elif name == "type" and reading and not self.in_expression:  # a call with one argument never gets here
            self.flag(node, "type(...) with more than one argument makes a new class at run time")
        elif name in GADGETS and reading:
            self.flag(node, f"{name} {GADGETS[name]}")
        elif reading and node not in self.in_chain:
            self._bare_name(node)
        if (reading and name in self.context.test_names and self.scopes.of.get(node, self.scopes.module).in_function()
                and self._global(node)):
            self.flag(node, f"reads {name}, which the tests define: a function that runs inside a test reaches it")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        writing = isinstance(node.ctx, (ast.Store, ast.Del))
        owner = node.value
        if node not in self.in_chain:
            self._dotted_name(node)
        if _is_dunder(name):
            if name not in ALLOWED_DUNDER_NAMES or writing:
                self.flag(node, f"uses the special attribute {name}")
        elif name.startswith("_"):
            if writing or not self._private_allowed(name):
                self.flag(node, f"{'writes' if writing else 'reads'} the private attribute {name}")
        elif node not in self.vouched and (reason := _attribute_reason(name)):
            self.flag(node, f"{name} {reason}")
        elif name in TEXT_EXPRESSIONS and node not in self.called:
            self.flag(node, f"takes .{name} as a value: the text it is given later is not scanned")
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
                elif self._stores_a_function(node):
                    self.flag(node, f"puts a function in place of a method: {ast.unparse(node)}")
                elif isinstance(node.ctx, ast.Del):
                    self.flag(node, f"deletes {ast.unparse(node)}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        magic = magic_call(node)
        if magic is not None:
            self._magic(node, magic)
            return
        self.called.add(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr in TEXT_EXPRESSIONS:
            self._text_expression(node)
        elif (isinstance(node.func, ast.Attribute) and node.func.attr in BY_NAME
              and PANDAS in self.context.names.importable):
            argument = by_name_argument(node)
            if argument is not None and not names_no_method(argument, self._is_function):
                self.flag(node, f".{node.func.attr}(...) is given a value that could name a method that runs text "
                                "(pandas calls a method by its name): pass a function")
        if any(keyword.arg in NAMED_MODULES for keyword in node.keywords):
            self.flag(node, "names a backend or settings by keyword: a library imports a module by that name")
        if (any(keyword.arg is None for keyword in node.keywords) and isinstance(node.func, ast.Attribute)
                and PANDAS in self.context.names.importable):
            self.flag(node, f".{node.func.attr}(**...) may be given a keyword the scan cannot see "
                            "(a plot's backend, a method's name)")
        if isinstance(node.func, ast.Name) and node.func.id == "type":
            if len(node.args) != 1 or node.keywords:
                self.flag(node, "type(...) with more than one argument makes a new class at run time")
            for argument in node.args:
                self.visit(argument)
            return
        cast_to = [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "dtype")]
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "type"
                and not all(map(self._names_a_module_attribute, cast_to))):
            self.flag(node, ".type(...) with anything but a torch type by its name: a storage imports the module "
                            "a string names")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _is_dunder(node.name) and node.name not in ALLOWED_DUNDER_METHODS:
            self.flag(node, f"defines the special method {node.name}")
        arguments = node.args
        annotations = [argument.annotation for argument in (*arguments.posonlyargs, *arguments.args,
                       *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if argument is not None]
        for annotation in [*annotations, node.returns]:
            self._annotation(node, annotation)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node, node.annotation)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.assigned[target] = node
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Attribute):
            root = _root_name(node)
            if root in self.context.protected or root in self.context.imported:
                self.flag(node, f"changes {ast.unparse(node.value)}, a part of an imported module "
                                "(a setting every later cell, the tests' too, runs with)")
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
        self.generic_visit(node)

    def _magic(self, node: ast.Call, magic: Magic) -> None:
        """A magic the course allows, whose code is scanned as the cell's own; any other is a finding."""
        if magic.name not in self.context.magics:
            self.flag(node, f"uses the magic %{magic.name}, which the course does not allow")
            return
        pieces, refused = magic_code(magic)
        if refused:
            self.flag(node, refused)
        for text, offset in pieces:
            self._scan_text(node, text, offset, f"%{magic.name} runs code that does not parse")

    def _text_expression(self, node: ast.Call) -> None:
        """``x.query(text)``, ``x.eval(text)``: a constant text read as pandas reads it
        (``policy_texts``), any other a finding."""
        method = node.func.attr
        if any(keyword.arg is None for keyword in node.keywords):
            self.flag(node, f".{method}(**...) may be given a text the scan cannot see")
        for text in [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "expr")]:
            if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
                self.flag(node, f".{method}(...) evaluates a text built at run time as code: name values with @")
                continue
            expression = pandas_expression(text.value)
            try:
                tree = ast.parse(expression) if expression is not None else None
            except (SyntaxError, ValueError):
                tree = None
            if tree is None:
                self.flag(node, f".{method}(...) evaluates a text the scan cannot read as pandas does")
            elif kind := unexpected_syntax(tree):
                self.flag(node, f".{method}(...) evaluates a text with {kind}, which pandas' expressions do not have")
            else:
                self._expression_names(node, tree, method)

    def _expression_names(self, node: ast.Call, tree: ast.AST, method: str) -> None:
        """A pandas expression, held to every rule of the scan as code written at ``node``
        (``@np.testing.measure(...)`` is ``np.testing.measure``); but a bare name is a
        column or a variable, so a built-in's name is no finding."""
        for inner in ast.walk(tree):
            if hasattr(inner, "lineno"):
                ast.copy_location(inner, node)
        before = len(self.found)
        self.in_expression = True
        try:
            self.visit(tree)
        finally:
            self.in_expression = False
        self.found[before:] = [(line, f".{method}(...) evaluates a text that {reason}") for line, reason in
                               self.found[before:]]

    def _stores_a_function(self, target: ast.Attribute) -> bool:
        """Whether ``x.name = value`` stores a lambda or a function the notebook defines
        (a class's method replaced for every object of it: the tests' too)."""
        assignment = self.assigned.get(target)
        value = assignment.value if assignment is not None else None
        if isinstance(value, ast.Lambda):
            return True
        return isinstance(value, ast.Name) and "function" in self._kinds(value)

    def _is_function(self, value: ast.AST) -> bool:
        """A name every binding of which, in the notebook and where it is read, is a
        ``def`` or an import; or a module's name (``np.sum``)."""
        if isinstance(value, ast.Attribute):  # np.sqrt, or str.lower: a built-in type's method
            root = value.value
            if (isinstance(root, ast.Name) and root.id in self.context.allowed_builtins
                    and isinstance(getattr(builtins, root.id, None), type) and not self._refused(value.attr)
                    and root.id not in self.context.module_bindings):
                return True
            return self._names_a_module_attribute(value)
        if not isinstance(value, ast.Name):
            return False
        scope = self.scopes.lookup(value)
        if (scope is None and value.id in self.context.allowed_builtins
                and value.id not in self.context.module_bindings):  # str, len, abs: a built-in function
            return True
        imported = self._global(value) and self.context.module_imports.get(value.id)
        kinds = self._kinds(value) | ({"import"} if imported else set())
        return bool(kinds) and kinds <= {"function", "import"}

    def _scan_text(self, node: ast.AST, text: str, offset: int, unreadable: str) -> None:
        """Code held in a text (a magic's, an expression's), scanned as code written at ``node``."""
        tree = cell_tree(text)
        if tree is None:
            self.flag(node, unreadable)
            return
        self.found += [(node.lineno + offset + line - 1, reason) for line, reason in findings(tree, self.context)]

    def _bare_name(self, node: ast.Name) -> None:
        """A name read on its own: a name an import bound (``profile``, or a module used
        as a value), or a built-in, which must be on the course's list."""
        targets = self._module_targets(node)
        if targets:
            self._check_name(node, targets, [])
        elif (node.id in BUILTIN_NAMES and node.id not in self.context.allowed_builtins
              and not self.in_expression and not _shadows(self.scopes.lookup(node))):
            self.flag(node, f"uses the built-in {node.id}, which the course does not allow")

    def _dotted_name(self, node: ast.Attribute) -> None:
        """The outermost attribute of a chain: when it starts at a name an import bound,
        the chain is a dotted name, held to the course's list as a whole."""
        chain, current = [], node
        while isinstance(current, ast.Attribute):
            chain.append(current)
            current = current.value
        if not isinstance(current, ast.Name):
            return  # read on a value: the attribute rules govern it
        self.in_chain.update(chain[1:])
        targets = self._module_targets(current)
        if targets:
            self.in_chain.add(current)
            if isinstance(node.ctx, ast.Load):
                self._check_name(node, targets, chain[::-1])

    def _check_name(self, node: ast.AST, targets: frozenset[str], attributes: list[ast.Attribute]) -> None:
        names = self.context.names
        for target in sorted(targets):
            through = self._through_own(target.split("."), attributes)
            if through is None:
                continue  # a name the student's own module defines: its file is scanned on its own
            base, rest = through
            name, is_module, taken = names.resolve([*base, *(attribute.attr for attribute in rest)])
            in_name = rest[:max(taken - len(base), 0)]
            if in_name and not is_module and names.named(name):
                self.vouched.add(in_name[-1])
                continue
            if any(self._refused(attribute.attr) for attribute in in_name):
                continue  # the attribute's own rule says it better
            if is_module and names.under(name):
                self.flag(node, f"uses the module {name} as a value: a function given it reaches all of it")
            elif is_module or not self._name_allowed(name):
                self.flag(node, f"uses {name}, which the course does not allow")

    def _through_own(self, base: list[str], rest: list) -> tuple[list[str], list] | None:
        """A dotted name (``base``, then the attributes or names in ``rest``) read through
        the student's own module, followed into what that module imports; None for a
        name the module defines itself (or whose source the scan was not given)."""
        while base[0] in self.context.own_modules:
            imports = self.context.own_imports.get(base[0], {})
            if len(base) > 1:
                if base[1] not in imports:
                    return None
                base = [*imports[base[1]].split("."), *base[2:]]
            elif not rest or _part(rest[0]) not in imports:
                return None
            else:
                base, rest = imports[_part(rest[0])].split("."), rest[1:]
        return base, rest

    def _annotation(self, node: ast.AST, annotation: ast.AST | None) -> None:
        """An annotation may only name types: typing and torch evaluate annotations, and a
        string (or a name bound to one) in an annotation is code they run."""
        if annotation is None:
            return
        if _holds_text(annotation):
            self.flag(node, STRING_ANNOTATION)
        elif not self._names_a_type(annotation):
            self.flag(node, f"annotates with {ast.unparse(annotation)}, which is not the name of a type: "
                            "typing and torch evaluate annotations as code")

    def _names_a_type(self, annotation: ast.AST) -> bool:
        if isinstance(annotation, ast.Constant):
            return annotation.value is None or annotation.value is Ellipsis
        if isinstance(annotation, ast.BinOp):
            return isinstance(annotation.op, ast.BitOr) and all(map(self._names_a_type,
                                                                     (annotation.left, annotation.right)))
        if isinstance(annotation, ast.Subscript):
            return all(map(self._names_a_type, (annotation.value, annotation.slice)))
        if isinstance(annotation, (ast.Tuple, ast.List)):
            return all(map(self._names_a_type, annotation.elts))
        if isinstance(annotation, ast.Attribute):
            return self._names_a_module_attribute(annotation)
        if isinstance(annotation, ast.Name):
            if self._module_targets(annotation):
                return True  # an allowed name of a module, or a finding of its own
            kinds = self._kinds(annotation)
            return kinds == {"class"} or (not kinds and annotation.id in ANNOTATION_TYPES)
        return False

    def _kinds(self, node: ast.Name) -> frozenset[str]:
        """How the name is bound where it is read ("class", "function", "import",
        "other"): in its function, comprehension or class body, or else in the notebook."""
        scope = self.scopes.lookup(node)
        if scope is not None and scope.kind != "module":
            return frozenset(binding_kind(binding) for binding in scope.bound[node.id])
        return self.context.module_bindings.get(node.id, frozenset())

    def _names_a_module_attribute(self, node: ast.AST) -> bool:
        """A dotted name that starts at a name an import bound (``torch.float32``, ``nn.Module``)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and bool(self._module_targets(node))

    def _module_targets(self, node: ast.Name) -> frozenset[str]:
        """What the imports that bind this name bind it to (none: it is not an import's).
        A class body's binding may not have run when the name is read: the notebook's
        imports of that name count as well."""
        scope = self.scopes.lookup(node)
        notebooks = self.context.module_imports.get(node.id, frozenset())
        if scope is None or scope.kind == "module":
            return notebooks
        local = frozenset(bindings(binding)[node.id] for binding in scope.bound[node.id]
                          if isinstance(binding, (ast.Import, ast.ImportFrom)))
        return local | notebooks if scope.kind == "class" else local

    def _global(self, node: ast.Name) -> bool:
        scope = self.scopes.lookup(node)
        return scope is None or scope.kind == "module"

    def _module_path(self, node: ast.AST, path: str) -> bool:
        """Every part of a module's dotted path is held to the attribute rules: a private
        submodule (``torch.testing._comparison``) is as private as an attribute."""
        flagged = False
        for part in path.split(".")[1:]:
            if part.startswith("_") and not self._private_allowed(part):
                self.flag(node, f"imports from the private module {path}")
            elif part in FORBIDDEN_ATTRIBUTES or part in GADGETS:
                self.flag(node, f"imports {path}, which {(FORBIDDEN_ATTRIBUTES | GADGETS)[part]}")
            else:
                continue
            flagged = True
        return flagged

    def _as_the_instructor(self, name: str, target: str) -> bool:
        """An import that binds a protected name to what the instructor's cells bind it to."""
        return self.context.protected.get(name) == target

    def _import_allowed(self, module: str) -> bool:
        top = module.split(".")[0]
        return top in self.context.allowed_imports or top in self.context.own_modules

    def _name_allowed(self, name: str) -> bool:
        names = self.context.names
        return names.allowed(name) or (name.split(".")[0] in names.importable
                                       and name.rsplit(".", 1)[-1] in ALLOWED_DUNDER_NAMES)

    def _private_allowed(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.context.allowed_private)

    def _refused(self, name: str) -> bool:
        """Whether the attribute rules refuse this name wherever it is read."""
        if _is_dunder(name):
            return name not in ALLOWED_DUNDER_NAMES
        if name.startswith("_"):
            return not self._private_allowed(name)
        return _attribute_reason(name) is not None


def _attribute_reason(name: str) -> str | None:
    """Why an attribute of this name is refused wherever it is read (dunder and private
    names have rules of their own), or None."""
    if _is_dunder(name) or name.startswith("_"):
        return None
    if name in FORBIDDEN_ATTRIBUTES:
        return FORBIDDEN_ATTRIBUTES[name]
    if name in GADGETS:
        return GADGETS[name]
    if "hook" in name.lower():
        return "registers code that runs inside the tests' own computations"
    return None


def _part(part: str | ast.Attribute) -> str:
    return part if isinstance(part, str) else part.attr


def _shadows(scope) -> bool:
    """Whether a binding in this scope certainly hides a built-in: a function's or a
    comprehension's (a module's or a class body's may not have run)."""
    return scope is not None and scope.kind in ("function", "comprehension")


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
