"""The wheel holds the whole grader: every file of the package (its subpackages and the
kernel specs the grader starts, not only the top-level modules), the license, and the
``autograder`` command; installed with pip, it grades a course outside the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.course import DEMO_CLASS
from autograder.course import scratch_course
from tests.conftest import A01, CELL_TIMEOUT
from tests.helpers.assignments import COURSE, REPO

pytestmark = pytest.mark.slow  # builds the wheel


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The repository's files as a clone has them: a wheel built from the working folder
    would also take whatever an earlier build left in ``build/``."""
    into = tmp_path_factory.mktemp("checkout") / "course"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, into / name)
    return into


def test_the_wheel_holds_every_file_of_the_package_and_the_command(tmp_path, checkout):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(checkout)], check=True, cwd=tmp_path, capture_output=True)
    wheel = zipfile.ZipFile(next(tmp_path.glob("*.whl")))
    names = set(wheel.namelist())
    package = {str(path.relative_to(REPO)) for path in (REPO / "autograder").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert package - names == set()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert "autograder = autograder.cli:main" in wheel.read(entry_points).decode()


def test_pip_install_gives_a_grader_that_grades_a_course_outside_the_repository(tmp_path, checkout):
    """``pip install .`` into an environment that has the pinned dependencies but not the
    course: the installed ``autograder`` command grades a course in a folder of its own,
    from a working directory that is not the repository. (The environment is this one's
    copy, linked file by file, without the editable install: the dependencies are the same
    pins, and copying them is seconds where downloading them is minutes.)"""
    environment = tmp_path / "environment"
    shutil.copytree(sys.prefix, environment, symlinks=True, copy_function=_link_or_copy)
    python = environment / "bin" / "python"
    pip = [str(python), "-m", "pip", "--quiet"]
    subprocess.run([*pip, "uninstall", "--yes", "pytorch-inplace-course"], check=True, capture_output=True)
    subprocess.run([*pip, "install", "--no-build-isolation", str(checkout)], check=True, capture_output=True,
                   cwd=tmp_path)
    installed = subprocess.run([str(python), "-c", "import autograder; print(autograder.__file__)"],
                               check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert Path(installed).is_relative_to(environment)

    course = scratch_course(COURSE, tmp_path / "course", [A01]).root
    shutil.copytree(DEMO_CLASS / "all-right" / A01, course / "submitted" / "alice" / A01)
    done = subprocess.run([str(environment / "bin" / "autograder"), "grade", "--course", str(course), "--quiet",
                           "--cell-timeout", str(CELL_TIMEOUT)], capture_output=True, text=True, cwd=tmp_path,
                          env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-2000:]
    (record,) = json.loads((course / "grading" / "records.json").read_text())
    assert (record["student"], record["status"], record["score"]) == ("alice", "graded", 10.0)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)
