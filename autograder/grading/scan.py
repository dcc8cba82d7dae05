"""A static scan of a submission's own code for the APIs that can subvert grading.

The sandbox and the guard stop these APIs from doing harm at grading time; the scan
shows a TA where a notebook reached for them, by cell and line, so an attempt is seen
even when it failed, and so the few attacks no in-kernel guard can undo (frame
inspection, ctypes, an attack aimed at the guard itself) are in front of a person.
Honest notebooks in this course need none of them. Only student-written cells are
scanned: cells whose id is one of the instructor's test or read-only cells are replaced
by the instructor's before grading (an id, not a mark in the cell, which a student could
forge).
"""

from __future__ import annotations

import ast

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode

# Attribute or function names, wherever they appear, and what they give a notebook.
ATTRIBUTES = {
    **dict.fromkeys(("input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
                     "ast_transformers", "transform_cell", "run_cell", "run_cell_async", "run_ast_nodes",
                     "run_code"), "changes how IPython runs cells"),
    **dict.fromkeys(("set_custom_exc", "custom_exceptions", "CustomTB", "showtraceback", "_showtraceback",
                     "showsyntaxerror", "excepthook"), "changes how errors are shown"),
    **dict.fromkeys(("events", "register"), "registers IPython event callbacks"),
    **dict.fromkeys(("settrace", "setprofile", "addaudithook"), "traces or audits the interpreter"),
    **dict.fromkeys(("_getframe", "currentframe", "f_back", "f_globals", "f_locals", "f_code",
                     "f_lineno", "f_trace", "tb_frame"), "inspects the calling code (the tests)"),
    **dict.fromkeys(("__code__", "__defaults__", "__kwdefaults__", "__globals__", "__builtins__",
                     "__subclasses__"), "rewrites functions or classes"),
    **dict.fromkeys(("kernel", "shell_handlers", "session", "history_manager", "displayhook", "display_pub"),
                    "reaches into the kernel"),
    **dict.fromkeys(("TorchFunctionMode", "TorchDispatchMode", "__torch_function__", "__torch_dispatch__",
                     "_push_mode", "_pop_mode"), "intercepts torch calls"),
    **dict.fromkeys(("system", "popen", "fork", "forkpty", "kill", "killpg", "_exit", "execv", "execve",
                     "execvp", "spawnv", "setsid"), "starts or stops processes"),
}
MODULES = {
    **dict.fromkeys(("ctypes", "gc", "inspect", "dis", "linecache", "builtins"), "inspects or rewrites the interpreter"),
    **dict.fromkeys(("subprocess", "multiprocessing", "signal", "pty"), "starts or stops processes"),
    **dict.fromkeys(("socket", "urllib", "http", "requests", "ssl"), "uses the network"),
    **dict.fromkeys(("importlib", "atexit"), "changes what imports return"),
}
# Attributes of ``sys`` (``model.modules()`` is fine; ``sys.modules`` is not).
SYS_ATTRIBUTES = {
    **dict.fromkeys(("modules", "meta_path", "path_hooks"), "changes what imports return"),
    **dict.fromkeys(("stdout", "stderr", "displayhook"), "redirects output"),
}
NAMES = {
    "get_ipython": "reaches into IPython (magics and shell commands too)",
    "exec": "runs code built at run time", "eval": "runs code built at run time",
    "compile": "builds code at run time",
    "setattr": "sets attributes by name", "delattr": "deletes attributes by name",
    "In": "reads the cells run so far (the tests among them)", "_ih": "reads the cells run so far (the tests among them)",
}
# Writing to an attribute of these replaces what the tests rely on.
SHARED_MODULES = ("torch", "checks", "cases", "builtins", "sys", "np", "math", "autograder")


def instructor_cells(source: NotebookNode) -> set[str]:
    """The ids of the cells nbgrader overwrites with the instructor's version."""
    return {
        cell.metadata.nbgrader["grade_id"]
        for cell in source.cells
        if "nbgrader" in cell.get("metadata", {})
        and (cell.metadata.nbgrader.get("locked") or (cell.metadata.nbgrader.get("grade")
                                                       and not cell.metadata.nbgrader.get("solution")))
    }


def suspicious_lines(notebook: NotebookNode, instructors: set[str]) -> list[str]:
    """One line per finding: where it is, which API, why a TA should look."""
    findings = []
    transform = TransformerManager().transform_cell
    for number, cell in enumerate(notebook.cells, start=1):
        nbgrader = cell.get("metadata", {}).get("nbgrader")
        grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if cell.cell_type != "code" or grade_id in instructors:
            continue
        where = f"cell {number}" + (f" ({grade_id})" if grade_id else "")
        lines = cell.source.splitlines()
        try:
            tree = ast.parse(transform(cell.source))
        except (SyntaxError, ValueError):
            continue
        for line, reason in sorted(set(_findings(tree))):
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            findings.append(f"{where}, line {line}: {reason}: {text[:120]}")
    return findings


def _findings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in ATTRIBUTES:
                yield node.lineno, f"{node.attr} {ATTRIBUTES[node.attr]}"
            if node.attr in SYS_ATTRIBUTES and isinstance(node.value, ast.Name) and node.value.id == "sys":
                yield node.lineno, f"sys.{node.attr} {SYS_ATTRIBUTES[node.attr]}"
            if isinstance(node.ctx, (ast.Store, ast.Del)) and _root_name(node) in SHARED_MODULES:
                yield node.lineno, f"replaces {ast.unparse(node)}, which the tests use"
        elif isinstance(node, ast.Name) and node.id in NAMES:
            yield node.lineno, f"{node.id} {NAMES[node.id]}"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in SHARED_MODULES:
            yield node.lineno, f"rebinds {node.id}, which the tests use"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in modules:
                if name.split(".")[0] in MODULES:
                    yield node.lineno, f"import {name} {MODULES[name.split('.')[0]]}"
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in ATTRIBUTES:
                        yield node.lineno, f"{alias.name} {ATTRIBUTES[alias.name]}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ATTRIBUTES:
            yield node.lineno, f"defines {node.name}, which {ATTRIBUTES[node.name].split(' ', 1)[1]}"


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
