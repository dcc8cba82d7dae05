"""Build student submissions: the released notebook with chosen answers typed in."""

from __future__ import annotations

import ast
import inspect

import nbformat
from nbgrader import utils

from tests.helpers.assignments import release_notebook


def answer_source(graded_name: str, answer) -> str:
    """The source of an answer from ``tests/answers``, renamed to the graded function, after
    what it needs from its module (the imports it uses, but for another graded function,
    which the notebook has; and its private helpers, such as a custom ``autograd.Function``),
    so that a notebook cell holds the whole answer."""
    module_source = inspect.getsource(inspect.getmodule(answer))
    body = ast.parse(module_source).body
    helpers = {node.name: node for node in body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith("_")}
    needed, pending = [], [next(node for node in body if getattr(node, "name", None) == answer.__name__)]
    while pending:
        node = pending.pop()
        needed.append(node)
        pending += [helpers[name] for name in _names(node) if name in helpers and helpers[name] not in needed + pending]
    used = set().union(*(_names(node) for node in needed))
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))
               and {(alias.asname or alias.name).split(".")[0] for alias in node.names} & used
               and not (getattr(node, "module", None) or "").startswith("tests.answers")]  # the notebook defines those
    import_lines = "\n".join(ast.get_source_segment(module_source, node) for node in imports)
    helper_sources = [ast.get_source_segment(module_source, node) for node in body
                      if node in needed and node.name != answer.__name__]
    source = inspect.getsource(answer).replace(f"def {answer.__name__}(", f"def {graded_name}(", 1)
    return "\n\n\n".join([*([import_lines] if imports else []), *helper_sources, source])


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def answered_release(assignment: str, answers: dict) -> nbformat.NotebookNode:
    """The student version of ``assignment`` with ``answers`` (graded name -> answer
    function) written into their solution cells; other cells keep the stub."""
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    for cell in notebook.cells:
        if utils.is_solution(cell) and cell.metadata.nbgrader.grade_id in answers:
            name = cell.metadata.nbgrader.grade_id
            cell.source = answer_source(name, answers[name])
    return notebook
