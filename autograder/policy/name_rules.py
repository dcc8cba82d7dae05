"""The rules for reading a name: a bare or dotted name is followed to the module, the
student's own binding or the built-in it means, then judged by the course's allowlists
(``names``) and the protected names of the tests; what an annotation may name."""

from __future__ import annotations

import ast
import fnmatch

from autograder.policy.names import BUILTIN_NAMES
from autograder.policy.scopes import bindings
from autograder.policy.vocabulary import (
    binding_kind,
    ALLOWED_DUNDER_NAMES,
    ANNOTATION_TYPES,
    FORBIDDEN_ATTRIBUTES,
    GADGETS,
    STRING_ANNOTATION,
    attribute_reason,
    holds_text,
    is_dunder,
    part_name,
    shadows,
)


class NameRules:
    """Part of the policy's AST visitor (``rules._Visitor``): what a name read means, and
    whether the course allows it."""

    def _bare_name(self, node: ast.Name) -> None:
        """A name read on its own: a name an import bound (``profile``, or a module used
        as a value), or a built-in, which must be on the course's list."""
        targets = self._module_targets(node)
        if targets:
            self._check_name(node, targets, [])
        elif (node.id in BUILTIN_NAMES and node.id not in self.context.allowed_builtins
              and not self.in_expression and not shadows(self.scopes.lookup(node))):
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
            elif not rest or part_name(rest[0]) not in imports:
                return None
            else:
                base, rest = imports[part_name(rest[0])].split("."), rest[1:]
        return base, rest

    def _annotation(self, node: ast.AST, annotation: ast.AST | None) -> None:
        """An annotation may only name types: typing and torch evaluate annotations, and a
        string (or a name bound to one) in an annotation is code they run."""
        if annotation is None:
            return
        if holds_text(annotation):
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
        if is_dunder(name):
            return name not in ALLOWED_DUNDER_NAMES
        if name.startswith("_"):
            return not self._private_allowed(name)
        return attribute_reason(name) is not None


