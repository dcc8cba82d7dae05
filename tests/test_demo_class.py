"""The committed demo class is exactly what its build script writes: a change to a graded
function, an answer or an attack that is not rebuilt shows here, not as a puzzling grade."""

from __future__ import annotations

import pytest

from autograder.course import DEMO_CLASS
from tests.fixtures import build_demo_class
from tests.fixtures.build_demo_class import build


def files(root) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_the_demo_class_is_what_the_script_writes(tmp_path):
    build(tmp_path / "demo-class")
    fresh, committed = files(tmp_path / "demo-class"), files(DEMO_CLASS)
    assert sorted(fresh) == sorted(committed), "run: .venv/bin/python tests/fixtures/build_demo_class.py"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert stale == [], f"stale, rebuild with tests/fixtures/build_demo_class.py: {stale[:5]}"


def test_the_build_stops_when_a_graded_function_has_no_right_answer(tmp_path, monkeypatch):
    monkeypatch.delitem(build_demo_class.RIGHT, "mask_fill")
    with pytest.raises(SystemExit, match="no right answer for mask_fill"):
        build(tmp_path / "demo-class")
    assert not (tmp_path / "demo-class").exists()
