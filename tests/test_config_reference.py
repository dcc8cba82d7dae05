"""The documentation's configuration reference (``autograder/config_reference.py``): every
setting of the package says what it does, the settings are found wherever their modules
live, and ``make docs`` builds a site whose reference lists them with their help."""

from __future__ import annotations

import html
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys

import pytest
from traitlets.config import Configurable

from autograder.config_reference import configurables, undocumented
from tests.helpers.assignments import REPO

SITE = REPO / "docs" / "_build" / "html"
# Every page of docs/myst.yml's table of contents, by the folder the site gives it.
PAGES = ("students", "teaching-assistants", "cluster", "instructors", "handing-out", "threat-model", "parity",
         "tests", "configuration")

# The site sets quotes as a typesetter would; the help in the code has straight ones.
TYPESET_QUOTES = str.maketrans("\u2018\u2019\u201c\u201d", "''\"\"")

# A package laid out as the real one may be tomorrow: a setting in a subpackage, one
# without help, and a module that must not be imported (it declares no setting, and
# importing it fails).
FIXTURE_PACKAGE = {
    "__init__.py": "",
    "boom.py": "raise ImportError('a module without settings was imported')\n",
    "deep/__init__.py": "",
    "deep/knobs.py": """
from traitlets import Integer
from traitlets.config import Configurable


class Knobs(Configurable):
    documented = Integer(1, help="Says what it does.").tag(config=True)
    silent = Integer(2).tag(config=True)
    internal = Integer(3)  # not a setting: it needs no help
""",
}


def test_every_setting_of_the_package_says_what_it_does():
    classes = configurables()
    assert {"GradingSettings", "PolicyScan", "CanvasExport"} <= {cls.__name__ for cls in classes}
    assert undocumented(classes) == []


def test_a_setting_without_help_is_found_and_named_wherever_its_module_lives(tmp_path, monkeypatch):
    for name, text in FIXTURE_PACKAGE.items():
        (tmp_path / "knobs_pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "knobs_pkg" / name).write_text(text)
    monkeypatch.syspath_prepend(tmp_path)
    try:
        classes = configurables("knobs_pkg")
        assert [cls.__qualname__ for cls in classes] == ["Knobs"]
        assert undocumented(classes) == ["Knobs.silent"]
    finally:
        for name in [name for name in sys.modules if name.partition(".")[0] == "knobs_pkg"]:
            del sys.modules[name]


@pytest.mark.slow
def test_the_modules_it_reads_hold_every_configurable_of_the_package():
    """Only modules whose source declares a setting are imported to find them; importing
    every module instead (seconds: torch, Dask, the grader) finds no other."""
    import autograder

    for module in pkgutil.walk_packages(autograder.__path__, "autograder."):
        if module.name.rpartition(".")[2] != "__main__":  # runs the command line
            importlib.import_module(module.name)
    everywhere = {cls for name, module in list(sys.modules.items()) if name.partition(".")[0] == "autograder"
                  for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, Configurable) and cls.__module__ == name and cls.class_own_traits(config=True)}
    assert set(configurables()) == everywhere


@pytest.mark.slow
@pytest.mark.xdist_group("myst-theme")  # the lectures' site builds the same theme into the same cache
def test_make_docs_builds_every_page_and_the_reference_from_the_code():
    done = subprocess.run(["make", "--no-print-directory", "docs"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert (SITE / "index.html").is_file()
    assert [page for page in PAGES if not (SITE / page / "index.html").is_file()] == []
    (settings,) = [cls for cls in configurables() if cls.__name__ == "GradingSettings"]
    text = html.unescape(re.sub(r"<[^>]+>", " ", (SITE / "configuration" / "index.html").read_text()))
    reference = " ".join(text.translate(TYPESET_QUOTES).split())
    for name in ("memory_limit", "workers", "scheduler"):
        help_text = " ".join(settings.class_traits()[name].help.split())
        assert f"c.GradingSettings.{name}" in reference and help_text in reference, name
