"""A worker that grades a second version of a course imports the course's own modules from
that version's bundle only (``worker._import_only_from``)."""

from __future__ import annotations

import importlib
import sys

import pytest

from autograder.grading import worker


@pytest.fixture
def bundles(tmp_path, monkeypatch):
    """A worker's folder with two bundles and a folder beside its bundles whose name starts
    like theirs; sys.path and sys.modules as they were afterwards."""
    monkeypatch.setattr(worker, "_root", tmp_path)
    for folder, module in (("bundles/old", "plugin_of_old"), ("bundles/new", "plugin_of_new"),
                           ("bundles-elsewhere", "plugin_elsewhere")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / f"{module}.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for module in ("plugin_of_old", "plugin_of_new", "plugin_elsewhere"):
        sys.modules.pop(module, None)


def test_a_module_of_another_bundle_is_forgotten_and_this_bundles_kept(bundles):
    sys.path[:0] = [str(bundles / "bundles" / "old"), str(bundles / "bundles-elsewhere")]
    importlib.import_module("plugin_of_old")
    importlib.import_module("plugin_elsewhere")

    worker._import_only_from(bundles / "bundles" / "new")
    assert "plugin_of_old" not in sys.modules
    assert str(bundles / "bundles" / "old") not in sys.path
    assert "plugin_elsewhere" in sys.modules, "a folder whose name only starts like the bundles' is not one"
    assert sys.path[0] == str(bundles / "bundles" / "new")

    importlib.import_module("plugin_of_new")
    worker._import_only_from(bundles / "bundles" / "new")
    assert "plugin_of_new" in sys.modules
    assert sys.path.count(str(bundles / "bundles" / "new")) == 1
