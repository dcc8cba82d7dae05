"""IPython magics in a student's cell, as the policy scan (``policy_rules``) reads them.

IPython turns ``%timeit f(x)`` into ``get_ipython().run_line_magic('timeit', 'f(x)')`` and
a ``%%capture`` cell into ``run_cell_magic('capture', '', body)``: the code a magic runs is
text the scan would not see, and ``get_ipython`` reaches all of IPython. So a magic is
allowed only where the course allows it (``c.PolicyScan.allowed_magics``, or used by the
instructor's shown cells: ``policy_course``), and only of those whose text the scan can
read: the code ``time``, ``timeit`` and ``capture`` run is scanned as the student's code
(a ``capture`` variable as a name the cell binds), and ``matplotlib`` takes a backend's
name only, never a module's. Any other magic (``%run``, ``%config``, which runs its text,
``%%html``, whose scripts would run in the TA's browser, ``!`` commands) is a finding,
whatever the course's notebooks use.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

READABLE_MAGICS = frozenset({"matplotlib", "time", "timeit", "capture"})
MATPLOTLIB_BACKENDS = frozenset({"", "inline", "widget", "ipympl", "notebook", "agg"})
# A magic's options before its code: ``-n 10 -r3 -o``, ``--no-stderr``.
_OPTIONS = re.compile(r"\s*(?:--?[A-Za-z][\w-]*(?:\s+\d+)?\s*)*")


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
    or the reason it is refused."""
    options = _OPTIONS.match(magic.line)
    rest = magic.line[options.end():].strip()
    if magic.name == "matplotlib":
        if magic.body is not None or magic.line.strip() not in MATPLOTLIB_BACKENDS:
            return [], f"%matplotlib {magic.line.strip()[:40]} names no backend the scan knows"
        return [], None
    if magic.name == "capture":
        if magic.body is None:
            return [], "%capture is a cell magic"
        if rest and not rest.isidentifier():
            return [], f"%%capture {rest[:40]} names no variable"
        binds = [(f"{rest} = None", 0)] if rest else []  # the variable it binds, as a binding the scan reads
        return [*binds, (magic.body, 1)], None
    if magic.name in ("time", "timeit"):
        if magic.body is None:
            return [(rest, 0)], None
        return [(rest, 0), (magic.body, 1)], None
    return [], f"the magic %{magic.name} runs text the scan cannot read"
