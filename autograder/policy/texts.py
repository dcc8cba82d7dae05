"""Texts pandas turns into code, as the policy scan (``rules``) reads them.

``df.query(text)`` and ``df.eval(text)`` evaluate ``text`` with pandas' own parser, which
follows attributes and calls functions, and reaches the notebook's variables through
``@name``: a text built at run time is code the scan never sees. So a text must be a
constant, read here as pandas reads it (``@name`` a variable, a name between backticks a
column, outside string literals only), and only of the kinds of expression pandas
evaluates; its names and attributes are then held to the scan's rules.

``df.agg("eval", text)``, ``apply`` and ``transform`` call a DataFrame's method by its
name: a string that is not one of pandas' reductions (``"sum"``, ``"mean"``...) is a
finding, and so is a value computed anywhere (a variable, an attribute, a call: the name
could be built there); a function, a reduction's name and a list of those are what
honest code passes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

# Methods that evaluate a text as an expression; called with no text (``model.eval()``)
# they are plain methods.
TEXT_EXPRESSIONS = frozenset({"eval", "query"})
PANDAS = "pandas"  # the library whose objects read a method's name (the rule applies where students may use it)
# pandas' methods that take another method's name as a string.
BY_NAME = frozenset({"apply", "agg", "aggregate", "transform"})
# The names of methods they may be given: pandas' reductions and transforms, nothing else.
REDUCTIONS = frozenset({
    "sum", "mean", "median", "min", "max", "count", "std", "var", "sem", "prod", "product", "size", "nunique",
    "first", "last", "any", "all", "idxmin", "idxmax", "skew", "kurt", "mode", "quantile", "describe", "abs",
    "round", "rank", "diff", "pct_change", "shift", "cumsum", "cumprod", "cummin", "cummax", "ffill", "bfill",
    "fillna", "unique", "value_counts", "head", "tail", "sort_values", "nlargest", "nsmallest", "sqrt", "log",
    "exp", "square", "len", "str", "float", "int"})
# The syntax pandas' expressions have (a column placeholder for a backticked name).
EXPRESSION_NODES = (ast.Module, ast.Expr, ast.Assign, ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.keyword,
                    ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp,
                    ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
COLUMN = "column_"


def pandas_expression(text: str) -> str | None:
    """``text`` as Python: ``@name`` read as ``name``, a backticked column's name as a
    placeholder, string literals left alone; None for a text this reading is not sure of
    (a backtick inside a string literal, an unclosed one, a triple quote, a comment)."""
    if "'''" in text or '"""' in text:
        return None
    out, index, quote = [], 0, None
    while index < len(text):
        char = text[index]
        if quote:
            if char == "`":
                return None
            if char == "\\":
                out.append(text[index:index + 2])
                index += 2
                continue
            quote = None if char == quote else quote
            out.append(char)
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "#":
            return None  # pandas reads a comment line by line, this reading does not: refused
        elif char == "`":
            end = text.find("`", index + 1)
            if end < 0:
                return None
            out.append(COLUMN)
            index = end
        elif char != "@":
            out.append(char)
        index += 1
    return None if quote else "".join(out)


def unexpected_syntax(tree: ast.AST) -> str | None:
    """The first kind of node in a parsed expression that pandas would not evaluate."""
    for node in ast.walk(tree):
        if not isinstance(node, EXPRESSION_NODES):
            return type(node).__name__
    return None


def by_name_argument(node: ast.Call) -> ast.AST | None:
    """The argument ``apply``, ``agg``... read as a method's name, when one is given."""
    given = [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "func")]
    return given[0] if given else None


def names_no_method(value: ast.AST, is_function: Callable[[ast.AST], bool]) -> bool:
    """Whether a value passed to ``agg``/``apply`` can name no pandas method that turns
    text into code: a lambda, what ``is_function`` vouches for (a name the notebook binds
    only by ``def``, a module's function), the name of one of pandas' reductions, or a
    list, tuple or dict of those."""
    if isinstance(value, ast.Constant):
        return value.value in REDUCTIONS
    if isinstance(value, (ast.List, ast.Tuple)):
        return all(names_no_method(element, is_function) for element in value.elts)
    if isinstance(value, ast.Dict):
        return all(names_no_method(element, is_function) for element in value.values)
    return isinstance(value, ast.Lambda) or is_function(value)
