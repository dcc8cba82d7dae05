"""The rules of the policy scan (``scan``): what each construct of a student's code is
allowed, one AST node at a time. Everything here names a reason a TA can read. Which names
of modules and which built-ins are allowed is ``names``; which scope a name lives
in, ``scopes``; the
vocabulary of refused names, ``vocabulary``; names read, ``name_rules``; code that arrives
as text, ``text_rules``."""


from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from functools import cache

from autograder.policy.magics import magic_call
from autograder.policy.names import Names
from autograder.policy.scopes import Scopes, bindings
from autograder.policy.texts import (
    BY_NAME,
    PANDAS,
    TEXT_EXPRESSIONS,
    by_name_argument,
    names_no_method,
)
from autograder.policy.name_rules import NameRules
from autograder.policy.text_rules import TextRules
from autograder.policy.vocabulary import (
    ALLOWED_DUNDER_METHODS,
    ALLOWED_DUNDER_NAMES,
    FORBIDDEN_NAMES,
    GADGETS,
    METHOD_STORE,
    NAMED_MODULES,
    TENSOR_CLASSES,
    HISTORY,
    attribute_reason,
    is_dunder,
    last_name,
    root_name,
)



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
    magics: frozenset[str] = frozenset()  # IPython magics the course allows (``magics``)


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


class _Visitor(NameRules, TextRules, ast.NodeVisitor):
    def __init__(self, context: Context, scopes: Scopes):
        self.context = context
        self.scopes = scopes
        self.found: list[tuple[int, str]] = []
        self.in_chain: set[ast.AST] = set()  # the inner parts of a dotted name, read as the whole name
        self.vouched: set[ast.AST] = set()  # attributes the course's allowlist names outright (json.loads)
        self.called: set[ast.AST] = set()  # what calls call (``frame.query`` in ``frame.query(...)``)
        self.in_expression = False  # reading a pandas expression, whose bare names are columns
        self.assigned: dict[ast.AST, ast.Assign] = {}  # an assignment's targets -> the assignment

    def findings_of(self, tree: ast.AST) -> list[tuple[int, str]]:
        """Every rule applied to code found inside what is scanned (a magic's, a text's)."""
        return findings(tree, self.context)

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
            reason = None if self.context.names.named(name) else attribute_reason(alias.name)
            if reason:
                self.flag(node, f"imports {alias.name}, which {reason}")
            elif is_dunder(alias.name) or (alias.name.startswith("_") and not self._private_allowed(alias.name)):
                self.flag(node, f"imports the private name {alias.name}")
            elif allowed and through and not (
                    self.context.names.under(name) if is_module else self._name_allowed(name)):
                self.flag(node, f"imports {name}, which the course does not allow")

    def visit_Name(self, node: ast.Name) -> None:
        name, reading = node.id, isinstance(node.ctx, ast.Load)
        if name in FORBIDDEN_NAMES:
            self.flag(node, f"{name} {FORBIDDEN_NAMES[name]}")
        elif HISTORY.fullmatch(name) and reading:
            self.flag(node, f"{name} reads IPython's history of cells, the tests among them")
        elif is_dunder(name) and name not in ALLOWED_DUNDER_NAMES:
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
        if is_dunder(name):
            if name not in ALLOWED_DUNDER_NAMES or writing:
                self.flag(node, f"uses the special attribute {name}")
        elif name.startswith("_"):
            if writing or not self._private_allowed(name):
                self.flag(node, f"{'writes' if writing else 'reads'} the private attribute {name}")
        elif node not in self.vouched and (reason := attribute_reason(name)):
            self.flag(node, f"{name} {reason}")
        elif name in TEXT_EXPRESSIONS and node not in self.called:
            self.flag(node, f"takes .{name} as a value: the text it is given later is not scanned")
        if writing:
            root = root_name(node)
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
        if is_dunder(node.name) and node.name not in ALLOWED_DUNDER_METHODS:
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
            root = root_name(node)
            if root in self.context.protected or root in self.context.imported:
                self.flag(node, f"changes {ast.unparse(node.value)}, a part of an imported module "
                                "(a setting every later cell, the tests' too, runs with)")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.flag(node, f"declares {', '.join(node.names)} global: a function that runs inside a test "
                        "could rebind the tests' own names")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if last_name(base) in TENSOR_CLASSES:
                self.flag(node, f"defines a subclass of {ast.unparse(base)}")
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.flag(node, "defines a class with its own metaclass")
        self.generic_visit(node)

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

