"""The wheel holds the whole grader: every file of the package (its subpackages and the
kernel specs the grader starts, not only the top-level modules), the license, and the
``autograder`` command."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from course import REPO

pytestmark = pytest.mark.slow  # builds the wheel


def test_the_wheel_holds_every_file_of_the_package_and_the_command(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(REPO)], check=True, cwd=tmp_path, capture_output=True)
    wheel = zipfile.ZipFile(next(tmp_path.glob("*.whl")))
    names = set(wheel.namelist())
    package = {str(path.relative_to(REPO)) for path in (REPO / "autograder").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert package - names == set()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert "autograder = autograder.cli:main" in wheel.read(entry_points).decode()
