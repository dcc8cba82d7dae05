"""The rules for code that arrives as text: an allowed magic's code, and a pandas
expression (``query``/``eval``) or a function named by a string (``agg``), each read the
way the library reads it and scanned again by every rule."""

from __future__ import annotations

import ast

from autograder.policy.magics import Magic, cell_tree, magic_code
from autograder.policy.texts import (
    pandas_expression,
    unexpected_syntax,
)


class TextRules:
    """Part of the policy's AST visitor (``rules._Visitor``): text that becomes code."""

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
        (``texts``), any other a finding."""
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

    def _scan_text(self, node: ast.AST, text: str, offset: int, unreadable: str) -> None:
        """Code held in a text (a magic's, an expression's), scanned as code written at ``node``."""
        tree = cell_tree(text)
        if tree is None:
            self.flag(node, unreadable)
            return
        self.found += [(node.lineno + offset + line - 1, reason) for line, reason in self.findings_of(tree)]

