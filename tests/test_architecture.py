"""ARCHITECTURE.md's layers, checked against the package's imports: what the document says
is how the code is cut.

A *unit* is a folder of the package (``grading``, ``policy``, ...) or one of its top-level
modules (``course``, ``cli``, ...). ARCHITECTURE.md's "Layers" table puts every unit on a
row; a module may import its own unit and the units of rows below, never a row above or
its own row's other units. Every import counts, a deferred one inside a function too: it
is still a dependency, only paid later. The checks are functions of the import graph, so
each is also shown to catch the fault it is for on a graph that has it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "autograder"
ARCHITECTURE = REPO / "ARCHITECTURE.md"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package's modules it imports, anywhere in its code."""
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    imported.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base)
        graph[name] = {module for module in imported if module in files and module != name}
    return graph


def unit(module: str) -> str:
    """``autograder.grading.jobs`` -> ``grading``; ``autograder.cli`` -> ``cli``; the
    package's own ``__init__`` is the unit ``autograder``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def documented_layers(text: str) -> list[list[str]]:
    """The units of each row of the "Layers" table, top row first."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    return [re.findall(r"`([\w.]+)`", units) for units in re.findall(r"^\| \d+ \| ([^|]+) \|", section, re.M)]


def upward_imports(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """Each import of a unit in its own row or a row above (a lower row number)."""
    row = {name: index for index, names in enumerate(layers) for name in names}
    return sorted(f"{module} imports {target}" for module, targets in graph.items() for target in targets
                  if unit(module) != unit(target) and row[unit(target)] <= row[unit(module)])


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles among modules (one path round each strongly connected group)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def folder_lines(files: dict[str, Path]) -> dict[str, int]:
    """Lines of code per folder of the package, its subfolders included; the package's
    own top-level modules count as the folder ``autograder/``."""
    lines: dict[str, int] = {}
    for path in files.values():
        parts = path.relative_to(PACKAGE).parts
        folder = parts[0] if len(parts) > 1 else "autograder/"
        lines[folder] = lines.get(folder, 0) + len(path.read_text().splitlines())
    return lines


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(module_files())


@pytest.fixture(scope="module")
def layers() -> list[list[str]]:
    return documented_layers(ARCHITECTURE.read_text())


def test_every_unit_of_the_package_is_on_one_row_of_the_layers(graph, layers):
    documented = [name for names in layers for name in names]
    assert sorted(documented) == sorted(set(documented)), "a unit on two rows"
    assert set(documented) == {unit(module) for module in graph}


def test_no_import_runs_upward_or_sideways(graph, layers):
    assert upward_imports(graph, layers) == []


def test_an_upward_import_is_found():
    graph = {"autograder.preprocessors.run": {"autograder.settings"},
             "autograder.settings": {"autograder.grading.jobs"}, "autograder.grading.jobs": set()}
    assert upward_imports(graph, [["grading"], ["preprocessors"], ["settings"]]) == [
        "autograder.settings imports autograder.grading.jobs"]
    assert upward_imports(graph, [["grading", "settings"], ["preprocessors"]]) == [
        "autograder.preprocessors.run imports autograder.settings",
        "autograder.settings imports autograder.grading.jobs"]


def test_no_module_imports_itself_round_a_circle(graph):
    assert circles(graph) == []


def test_a_circle_is_found():
    graph = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert circles(graph) == [["a.x", "a.y", "a.z"]]


def test_imports_are_read_wherever_they_are(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "one.py").write_text("def f():\n    from p import two\n")
    (tmp_path / "p" / "two.py").write_text("from .one import f\n")
    graph = import_graph({"p.one": tmp_path / "p" / "one.py", "p.two": tmp_path / "p" / "two.py"})
    assert graph == {"p.one": {"p.two"}, "p.two": {"p.one"}}


def test_the_biggest_folder_is_under_a_quarter_of_the_package():
    lines = folder_lines(module_files())
    biggest = max(lines, key=lines.get)
    assert lines[biggest] < sum(lines.values()) / 4, (biggest, lines)


def test_every_file_architecture_md_names_exists():
    named = re.findall(r"`((?:[\w-]+/)*[\w-]+\.(?:py|j2|md|toml|cfg))", ARCHITECTURE.read_text())
    missing = [path for path in named
               if not any((base / path).exists() for base in (REPO, PACKAGE, REPO / "tests"))]
    assert named and missing == []


def defined_names(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    return names


def unknown_names(text: str) -> list[str]:
    """Each ``module.Name`` the text names (``sandbox/limits.Limits``, ``jobs._verdict``)
    whose module is one of the package's and does not define that name."""
    by_stem: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        by_stem.setdefault(path.relative_to(PACKAGE).with_suffix("").as_posix(), []).append(path)
        by_stem.setdefault(path.stem, []).append(path)
    unknown = []
    for module, name in re.findall(r"`((?:[\w]+/)*[a-z_]+)\.([A-Za-z_]\w*)", text):
        paths = by_stem.get(module, [])
        if name in ("py", "md", "j2", "json", "csv", "ipynb", "html", "db"):
            continue  # a file's name, not a module's
        if paths and not any(name in defined_names(path) for path in paths):
            unknown.append(f"{module}.{name}")
    return unknown


def test_every_name_architecture_md_gives_a_module_is_defined_there():
    assert unknown_names(ARCHITECTURE.read_text()) == []


def test_a_stale_name_is_found():
    assert unknown_names("`sandbox/limits.Limits`, `jobs._verdict`, `provisioner.ForkedProvisioner`") == [
        "provisioner.ForkedProvisioner"]
