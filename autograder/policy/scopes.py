"""Which scope each name of a cell lives in, by Python's rules: the scope analysis of the
policy scan (``rules``).

A cell runs in the notebook's namespace, the one the tests run in: a name it binds there
(its *module scope*) is a name the tests see. Python binds a name in the scope of the
function, class or comprehension it is written in, except that ``global`` sends it to
the module, ``nonlocal`` to an enclosing function, and an assignment expression
(``:=``) in a comprehension to the scope around the comprehension: so
``[(zip := fake) for _ in (0,)]`` at a cell's top level, or inside an ``if`` there,
rebinds ``zip`` for the tests. Binding is assignment (plain, augmented, annotated,
starred, unpacked), ``del``, ``:=``, the targets of ``for``, ``with`` and ``except``,
``import``, ``def``, ``class``, and a ``match`` statement's captures.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(eq=False)
class Scope:
    kind: str  # "module", "function" (a def or a lambda), "class" or "comprehension"
    parent: Scope | None
    bound: dict[str, list[ast.AST]] = field(default_factory=dict)  # name -> the nodes that bind it here
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def in_function(self) -> bool:
        """Whether code here runs when a function is called (inside a test, maybe), not when the cell runs."""
        scope: Scope | None = self
        while scope is not None:
            if scope.kind == "function":
                return True
            scope = scope.parent
        return False


def bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """name -> the module (or module attribute) an import statement binds it to."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.split(".")[0]: alias.name if alias.asname else alias.name.split(".")[0]
                for alias in node.names}
    prefix = "." * node.level + (node.module or "")
    return {alias.asname or alias.name: f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"}


class Scopes:
    """The scopes of one cell (or file): ``module.bound`` is what it binds in the notebook's
    namespace, ``of[name_node]`` the scope a name is read or bound in."""

    def __init__(self, tree: ast.AST):
        self.module = Scope("module", None)
        self.of: dict[ast.AST, Scope] = {}
        self._declare(getattr(tree, "body", []), self.module)
        self._walk(tree, self.module)

    def lookup(self, node: ast.Name) -> Scope | None:
        """The scope whose binding of ``node.id`` it reads: a function's, a comprehension's or
        a class body's (for code directly in it); the module's when this cell binds it
        there; None for a name this cell does not bind (another cell's, or a built-in)."""
        name, start = node.id, self.of.get(node, self.module)
        scope: Scope | None = start
        while scope is not None:
            if scope.kind == "module" or name in scope.declared_global:
                return self.module if name in self.module.bound else None
            if name in scope.declared_nonlocal:
                scope = scope.parent
                continue
            if (scope.kind != "class" or scope is start) and name in scope.bound:
                return scope
            scope = scope.parent
        return None

    def _walk(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self._function(node, scope)
        elif isinstance(node, ast.ClassDef):
            for child in (*node.decorator_list, *node.bases, *node.keywords):
                self._walk(child, scope)
            self._bind(scope, node.name, node)
            inner = Scope("class", scope)
            self._declare(node.body, inner)
            for statement in node.body:
                self._walk(statement, inner)
        elif isinstance(node, COMPREHENSIONS):
            self._comprehension(node, scope)
        elif isinstance(node, ast.NamedExpr):
            self._walk(node.value, scope)
            target = scope
            while target.kind == "comprehension":
                target = target.parent
            self.of[node.target] = target
            self._bind(target, node.target.id, node.target)
        elif isinstance(node, ast.Name):
            self.of[node] = scope
            if not isinstance(node.ctx, ast.Load):
                self._bind(scope, node.id, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in bindings(node):
                self._bind(scope, name, node)
        else:
            name = (node.name if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar))
                    else node.rest if isinstance(node, ast.MatchMapping) else None)
            if name:
                self._bind(scope, name, node)
            for child in ast.iter_child_nodes(node):
                self._walk(child, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope) -> None:
        """Decorators, defaults and annotations run where the function is defined; its body
        when it is called, in a scope of its own that holds its arguments."""
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                 *(argument for argument in (arguments.vararg, arguments.kwarg) if argument)]
        outside = [*arguments.defaults, *(default for default in arguments.kw_defaults if default),
                   *(argument.annotation for argument in every if argument.annotation)]
        if not isinstance(node, ast.Lambda):
            outside += [*node.decorator_list, *([node.returns] if node.returns else [])]
        for child in outside:
            self._walk(child, scope)
        inner = Scope("function", scope)
        for argument in every:
            inner.bound.setdefault(argument.arg, []).append(argument)
        if isinstance(node, ast.Lambda):
            self._walk(node.body, inner)
            return
        self._bind(scope, node.name, node)
        self._declare(node.body, inner)
        for statement in node.body:
            self._walk(statement, inner)

    def _comprehension(self, node: ast.AST, scope: Scope) -> None:
        """The first iterable is evaluated outside, the rest inside the comprehension's own scope."""
        generators = node.generators
        self._walk(generators[0].iter, scope)
        inner = Scope("comprehension", scope)
        for number, generator in enumerate(generators):
            self._walk(generator.target, inner)
            if number:
                self._walk(generator.iter, inner)
            for condition in generator.ifs:
                self._walk(condition, inner)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self._walk(getattr(node, part), inner)

    def _bind(self, scope: Scope, name: str, node: ast.AST) -> None:
        if name in scope.declared_global:
            scope = self.module
        scope.bound.setdefault(name, []).append(node)

    def _declare(self, body: list[ast.stmt], scope: Scope) -> None:
        """``global`` and ``nonlocal`` anywhere in a body, but in the scopes nested in it."""
        pending = list(body)
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Global):
                scope.declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.declared_nonlocal.update(node.names)
            elif not isinstance(node, (*FUNCTIONS, ast.ClassDef, *COMPREHENSIONS)):
                pending += ast.iter_child_nodes(node)
