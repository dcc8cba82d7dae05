"""IPython magics in a student's cell, as the policy scan (``rules``) reads them.

IPython turns ``%timeit f(x)`` into ``get_ipython().run_line_magic('timeit', 'f(x)')`` and
a ``%%capture`` cell into ``run_cell_magic('capture', '', body)``: the code a magic runs is
text the scan would not see, and ``get_ipython`` reaches all of IPython. So a magic is
allowed only where the course allows it (``c.PolicyScan.allowed_magics``, or used by the
instructor's shown cells: ``course``), and only of those whose text the scan can
read: the code ``time``, ``timeit`` and ``capture`` run, as IPython's own option parsing
finds it in the line, is scanned as the student's code (a ``capture`` variable as a name
the cell binds), and ``matplotlib`` takes a backend's name only, never a module's. Any
other magic (``%run``, ``%config``, which runs its text, ``%%html``, whose scripts would
run in the TA's browser, ``!`` commands) is a finding, whatever the course's notebooks use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.magics.execution import ExecutionMagics

READABLE_MAGICS = frozenset({"matplotlib", "time", "timeit", "capture"})
# A course that times code one way times it the other way too.
FAMILIES = ({"time", "timeit"},)
MATPLOTLIB_BACKENDS = frozenset({"", "inline", "widget", "ipympl", "notebook", "agg"})


@dataclass(frozen=True)
class Magic:
    name: str
    line: str  # the text after the magic's name
    body: str | None  # a cell magic's cell, None for a line magic


def magic_call(node: ast.Call) -> Magic | None:
    """The magic IPython's transform made into this call, when its texts are constants."""
    function = node.func
    if not (isinstance(function, ast.Attribute) and function.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(function.value, ast.Call) and isinstance(function.value.func, ast.Name)
            and function.value.func.id == "get_ipython" and not function.value.args and not node.keywords):
        return None
    wanted = 2 if function.attr == "run_line_magic" else 3
    texts = [argument.value for argument in node.args
             if isinstance(argument, ast.Constant) and isinstance(argument.value, str)]
    if len(node.args) != wanted or len(texts) != wanted:
        return None
    return Magic(texts[0], texts[1], texts[2] if wanted == 3 else None)


def magic_code(magic: Magic) -> tuple[list[tuple[str, int]], str | None]:
    """The code a readable magic runs, as (text, how many lines into the cell it starts),
    or the reason it is refused. The text is what IPython's own option parsing leaves of
    the line, so the scan reads what IPython runs, however the options are written."""
    if magic.name == "matplotlib":
        if magic.body is not None or magic.line.split("#")[0].strip() not in MATPLOTLIB_BACKENDS:
            return [], f"%matplotlib {magic.line.strip()[:40]} names no backend the scan knows"
        return [], None
    try:
        line = _code_of_line(magic)
    except (UsageError, ValueError, SystemExit) as error:
        return [], f"%{magic.name} {magic.line.strip()[:40]}: options IPython would refuse ({error})"[:200]
    if magic.name == "capture":
        if magic.body is None:
            return [], "%capture is a cell magic"
        binds = [(f"{line} = None", 0)] if line else []  # the variable it binds, as a binding the scan reads
        return [*binds, (magic.body, 1)], None
    return [(line, 0), *([(magic.body, 1)] if magic.body is not None else [])], None


def _code_of_line(magic: Magic) -> str:
    """What IPython takes as code from a magic's line (``capture``: the variable it binds)."""
    magics = _execution_magics()
    if magic.name == "timeit":
        options, code = magics.parse_options(magic.line, "n:r:tcp:qov:", posix=False, strict=False,
                                             preserve_non_opts=True)
        saved = getattr(options, "v", None)  # -v NAME binds the timing result to NAME
        if saved is not None and not str(saved).isidentifier():
            raise ValueError(f"{str(saved)[:40]!r} is no variable")
        return f"{saved} = None\n{code}" if saved else code
    if magic.name == "time":
        return " ".join(magic_arguments.parse_argstring(magics.time, magic.line, partial=True)[1])
    output = magic_arguments.parse_argstring(magics.capture, magic.line).output
    if output is not None and not output.isidentifier():
        raise ValueError(f"{output[:40]!r} is no variable")
    return output or ""


def cell_tree(source: str) -> ast.Module | None:
    """A cell's syntax tree as IPython runs it (its magics turned into calls), or None for
    a cell that does not parse (IPython cannot run it either)."""
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return None


def magic_trees(tree: ast.AST) -> list[ast.Module]:
    """The parsed code of every readable magic in a cell (what it binds is the cell's too)."""
    trees = []
    for node in ast.walk(tree):
        magic = magic_call(node) if isinstance(node, ast.Call) else None
        if magic is None or magic.name not in READABLE_MAGICS:
            continue
        trees += [inner for text, _ in magic_code(magic)[0] if (inner := cell_tree(text))]  # else a finding
    return trees


def allowed_magics(used: frozenset[str]) -> frozenset[str]:
    """The readable magics a course that uses ``used`` allows."""
    allowed = set(used & READABLE_MAGICS)
    for family in FAMILIES:
        if allowed & family:
            allowed |= family
    return frozenset(allowed)


@cache
def _execution_magics() -> ExecutionMagics:
    """IPython's own magics, without a shell: only their option parsing is used."""
    return ExecutionMagics(shell=None)
