"""The environment is declared once for pip and once for conda; both must agree, and the
Makefile must not reinstall an environment that is up to date."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from course import REPO


def pip_requirements_in_pyproject() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = [req for group in project["optional-dependencies"].values() for req in group]
    return set(project["dependencies"]) | set(extras)


def conda_environment() -> dict:
    return yaml.safe_load((REPO / "environment.yml").read_text())


def test_environment_yml_pins_what_pyproject_pins():
    pip_section = next(
        item["pip"] for item in conda_environment()["dependencies"] if isinstance(item, dict)
    )
    conda_pins = {req for req in pip_section if not req.startswith("-e")}
    assert conda_pins == pip_requirements_in_pyproject()


def test_both_files_ask_for_python_3_11():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == "==3.11.*"
    assert "python=3.11" in conda_environment()["dependencies"]


def test_torch_is_pinned_to_the_course_version():
    assert "torch==2.13.0" in pip_requirements_in_pyproject()


@pytest.mark.skipif(Path(sys.prefix).resolve() != (REPO / ".venv").resolve(),
                    reason="these tests run in an environment make did not build (conda's, say)")
def test_make_sees_the_environment_as_up_to_date():
    """`make -q` exits 0 only when the install stamp is newer than pyproject.toml."""
    done = subprocess.run(["make", "-q", ".venv/.installed"], cwd=REPO)
    assert done.returncode == 0, "a second `make` would reinstall the environment"
