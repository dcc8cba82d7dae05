"""Imports from the notebook's folder come from what it held when the kernel started.

A notebook imports the instructor's modules and the files the assignment declares from
its own folder, which Python puts first on ``sys.path``. But the student's code can write
files there (``np.savetxt``, ``df.to_csv``, ``fig.savefig`` take any name): a
``nose.py`` or ``colorsys.py`` written before a test imports that module for the first
time would be the module the test gets, and the test would run the student's code as its
own. So, before any student code, the folder leaves ``sys.path`` and its Python files, as
they are at that moment, are served from memory by a finder placed where ``sys.path``'s
first entry was searched (after the built-in and frozen modules, before every other
folder): what was importable stays importable, byte for byte, and nothing written later
ever is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

# More than any instructor's module; a folder of more is read up to it.
MAX_SNAPSHOT_BYTES = 64 * 2**20


class FolderSnapshot(importlib.abc.MetaPathFinder, importlib.abc.SourceLoader):
    """The folder's modules and packages (``name`` -> (file, source)), frozen."""

    def __init__(self, modules: dict[str, tuple[str, bytes]], packages: set[str]):
        self.modules, self.packages = modules, packages

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.modules:
            return None
        is_package = fullname in self.packages
        spec = importlib.util.spec_from_loader(fullname, self, origin=self.modules[fullname][0], is_package=is_package)
        spec.has_location = True
        return spec

    def get_filename(self, fullname: str) -> str:
        return self.modules[fullname][0]

    def get_data(self, path: str) -> bytes:
        for file, source in self.modules.values():
            if file == path:
                return source
        raise OSError(f"not in the folder's snapshot: {path}")

    def is_package(self, fullname: str) -> bool:
        return fullname in self.packages


def snapshot(folder: Path) -> FolderSnapshot:
    """The Python modules and packages of ``folder`` as they are now (links not followed)."""
    modules: dict[str, tuple[str, bytes]] = {}
    packages: set[str] = set()
    budget = MAX_SNAPSHOT_BYTES

    def read(path: Path, name: str, package: bool) -> None:
        nonlocal budget
        if not name.isidentifier() or path.is_symlink() or not path.is_file() or path.stat().st_size > budget:
            return
        source = path.read_bytes()
        budget -= len(source)
        modules[name] = (str(path), source)
        if package:
            packages.add(name)

    def walk(directory: Path, prefix: str) -> None:
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink():
                continue
            if entry.is_dir() and (entry / "__init__.py").is_file() and entry.name.isidentifier():
                read(entry / "__init__.py", prefix + entry.name, True)
                walk(entry, f"{prefix}{entry.name}.")
            elif entry.suffix == ".py" and entry.name != "__init__.py":
                read(entry, prefix + entry.stem, False)

    walk(folder, "")
    return FolderSnapshot(modules, packages)


def install(folder: Path) -> FolderSnapshot:
    """Take ``folder`` (the kernel's working folder) off ``sys.path`` and serve its
    modules from a snapshot instead."""
    here = os.path.realpath(folder)
    sys.path[:] = [entry for entry in sys.path
                   if entry not in ("", ".") and os.path.realpath(entry) != here]
    finder = snapshot(Path(folder))
    path_finder = next((index for index, found in enumerate(sys.meta_path)
                        if found is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(path_finder, finder)
    importlib.invalidate_caches()
    return finder
