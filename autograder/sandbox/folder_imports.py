"""Imports from the notebook's folder come from what it held when the kernel started.

A notebook imports the instructor's modules and the files the assignment declares from
its own folder, which Python puts first on ``sys.path``. But the student's code can write
files there (``np.savetxt``, ``df.to_csv``, ``fig.savefig`` take any name): a
``nose.py`` or ``colorsys.py`` written before a test imports that module for the first
time would be the module the test gets, and the test would run the student's code as its
own. So, before any student code, the folder leaves ``sys.path`` and its Python files
(modules and packages), as they are at that moment, are served from memory by a finder
placed before the other folders of ``sys.path``, but never for a standard library
module's name (the standard library came first, as it did): what was importable stays
importable, byte for byte, and nothing written later ever is. Tracebacks and ``inspect``
read the same snapshot. Data files are read from disk as they are.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import linecache
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
        if fullname not in self.modules or fullname.split(".")[0] in sys.stdlib_module_names:
            return None  # the standard library came before the folder on sys.path, and still does
        is_package = fullname in self.packages
        spec = importlib.util.spec_from_loader(fullname, self, origin=self.modules[fullname][0], is_package=is_package)
        spec.has_location = True
        return spec

    def get_filename(self, fullname: str) -> str:
        return self.modules[fullname][0]

    def get_data(self, path: str) -> bytes:
        """A module's source from the snapshot; any other file (a package's data) from disk."""
        for file, source in self.modules.values():
            if file == path:
                return source
        with open(path, "rb") as data:
            return data.read()

    def is_package(self, fullname: str) -> bool:
        return fullname in self.packages


def snapshot(folder: Path) -> FolderSnapshot:
    """The Python modules and packages of ``folder`` as they are now (links not followed)."""
    modules: dict[str, tuple[str, bytes]] = {}
    packages: set[str] = set()
    budget = MAX_SNAPSHOT_BYTES

    def read(path: Path, name: str, package: bool) -> None:
        nonlocal budget
        if (not all(part.isidentifier() for part in name.split(".")) or path.is_symlink() or not path.is_file()
                or path.stat().st_size > budget):
            return
        source = path.read_bytes()
        budget -= len(source)
        modules[name] = (str(path), source)
        # tracebacks and inspect show what runs, not what the notebook wrote over it later
        lines = importlib.util.decode_source(source).splitlines(keepends=True)
        linecache.cache[str(path)] = (len(source), None, lines, str(path))
        if package:
            packages.add(name)

    def walk(directory: Path, prefix: str) -> None:
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink():
                continue
            if entry.is_dir() and (entry / "__init__.py").is_file() and entry.name.isidentifier():
                read(entry / "__init__.py", prefix + entry.name, True)
                walk(entry, f"{prefix}{entry.name}.")
            elif (entry.suffix == ".py" and entry.name != "__init__.py"
                  and not (directory / entry.stem / "__init__.py").is_file()):  # a package wins over its namesake
                read(entry, prefix + entry.stem, False)

    walk(folder, "")
    return FolderSnapshot(modules, packages)


def install(folder: Path, also: Path | None = None) -> FolderSnapshot:
    """Take ``folder`` (the kernel's working folder) and ``also`` (the folder it was
    copied from, where the kernel started) off ``sys.path`` and serve the working
    folder's modules from a snapshot instead."""
    gone = {os.path.realpath(place) for place in (folder, also) if place is not None}
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".") and os.path.realpath(entry) not in gone]
    finder = snapshot(Path(folder))
    path_finder = next((index for index, found in enumerate(sys.meta_path)
                        if found is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(path_finder, finder)
    importlib.invalidate_caches()
    return finder
