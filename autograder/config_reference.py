"""The documentation's configuration reference, written from the settings themselves.

Every setting a course may put in ``nbgrader_config.py`` is a ``config=True`` trait of a
``traitlets`` ``Configurable`` of this package, and says what it does in its ``help``. ``make
docs`` writes them out as one page, so the reference cannot drift from the code, and
``tests/test_config_reference.py`` fails on a setting that says nothing.

The package is found by walking its modules, not by a list of them, so a configurable that
moves or appears is documented where it is. Only the modules whose source declares a
configurable trait are imported: all of them would bring in torch, Dask and the whole grader
(a dozen seconds on two cores), which would make the check on the settings' help a slow test.

    python -m autograder.config_reference docs/configuration.md
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from traitlets import TraitType
from traitlets.config import Configurable

# How a trait is made a setting; a module without this text declares none.
CONFIG_TAG = "config=True"
# A default longer than this (the policy's lists of names) is shown by its start and size.
DEFAULT_SHOWN = 100


def declaring_modules(package: str = "autograder") -> Iterator[str]:
    """The modules of ``package`` whose source declares a configurable trait, found
    without importing any of them (nor the subpackages they are in)."""
    root = importlib.import_module(package)
    yield from _declaring(root.__path__, f"{package}.")


def _declaring(path: Iterable[str], prefix: str) -> Iterator[str]:
    for found in pkgutil.iter_modules(path, prefix):
        spec = found.module_finder.find_spec(found.name)
        if found.ispkg:
            yield from _declaring(spec.submodule_search_locations, f"{found.name}.")
        if spec.origin and spec.origin.endswith(".py") and CONFIG_TAG in Path(spec.origin).read_text():
            yield found.name


def configurables(package: str = "autograder") -> list[type[Configurable]]:
    """The classes of ``package`` that declare settings of their own, by name."""
    classes = []
    for name in declaring_modules(package):
        module = importlib.import_module(name)
        classes += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                    if issubclass(cls, Configurable) and cls.__module__ == name and cls.class_own_traits(config=True)]
    return sorted(classes, key=lambda cls: cls.__name__)


def undocumented(classes: Iterable[type[Configurable]]) -> list[str]:
    """``Class.trait`` for every setting of ``classes`` whose help is empty."""
    return [f"{cls.__name__}.{name}" for cls in classes
            for name, trait in sorted(cls.class_own_traits(config=True).items()) if not trait.help.strip()]


def type_name(trait: TraitType) -> str:
    """The trait's class, with what a container holds: ``List(Unicode)``, ``Dict(Unicode: Int)``."""
    name = type(trait).__name__
    key, value = getattr(trait, "_key_trait", None), getattr(trait, "_value_trait", None)
    if key is not None or value is not None:
        return f"{name}({type_name(key) if key else 'any'}: {type_name(value) if value else 'any'})"
    inner = getattr(trait, "_trait", None)
    return f"{name}({type_name(inner)})" if isinstance(inner, TraitType) else name


def default_text(trait: TraitType) -> str:
    """The default as Python writes it; a long one (a list of hundreds of names) cut short,
    so that its row stays readable."""
    shown = trait.default_value_repr()
    if len(shown) <= DEFAULT_SHOWN:
        return f"`{shown}`"
    # a container's default is made afresh for each instance, so only that call gives it
    value = trait.make_dynamic_default() if hasattr(trait, "make_dynamic_default") else trait.default_value
    size = f" ({len(value)} entries)" if isinstance(value, (list, tuple, set, dict)) else ""
    return f"`{shown[:DEFAULT_SHOWN].rstrip()} ...`{size}"


def _cell(text: str) -> str:
    """Help text as one cell of a Markdown table, read as text, not as Markdown."""
    for special in "\\`*_[]<>|":
        text = text.replace(special, "\\" + special)
    return " ".join(text.split())


def reference_page(classes: Iterable[type[Configurable]]) -> str:
    """The reference as a MyST page: a section per class, a row per setting."""
    lines = ["# Configuration reference", "",
             "Every setting the grader reads from a course's `nbgrader_config.py` (or the Jupyter "
             "configuration under it), as `c.CLASS.NAME = value`. This page is written by `make docs` "
             "from the settings' own help (`autograder/config_reference.py`); a setting the classes "
             "inherit from nbgrader or nbconvert is in their documentation.", ""]
    for cls in classes:
        lines += [f"## {cls.__name__}", "", f"Defined in `{cls.__module__}`."]
        own_doc = vars(cls).get("__doc__")  # not a base class's, which inspect.getdoc would give
        if own_doc:
            lines += ["", " ".join(inspect.cleandoc(own_doc).split("\n\n")[0].split())]
        lines += ["", "| Setting | Type | Default | What it does |", "|---|---|---|---|"]
        for name, trait in sorted(cls.class_own_traits(config=True).items()):
            lines.append(f"| `c.{cls.__name__}.{name}` | {type_name(trait)} | {default_text(trait)} | "
                         f"{_cell(trait.help)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Write the page to the one path given; refuse while a setting has no help, which
    would be a blank row."""
    (target,) = sys.argv[1:] if argv is None else argv
    classes = configurables()
    missing = undocumented(classes)
    if missing:
        raise SystemExit("these settings have no help to document them: " + ", ".join(missing))
    Path(target).write_text(reference_page(classes))


if __name__ == "__main__":
    main()
