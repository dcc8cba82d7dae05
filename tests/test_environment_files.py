"""The environment is declared once for pip and once for conda; both must agree, and the
Makefile must not reinstall an environment that is up to date."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.helpers.assignments import REPO

CPU_WHEELS = "https://download.pytorch.org/whl/cpu"
# How both Makefiles (the course's and the student edition's) build the environment.
ENVIRONMENT_MK = "student-edition/environment.mk"


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
    conda_pins = {req for req in pip_section if not req.startswith("-")}
    assert conda_pins == pip_requirements_in_pyproject()


def test_both_files_can_take_the_cpu_only_torch():
    """Conda users get the CPU-only wheels always; make, with TORCH=cpu."""
    pip_section = next(item["pip"] for item in conda_environment()["dependencies"] if isinstance(item, dict))
    assert f"--extra-index-url {CPU_WHEELS}" in pip_section
    assert f"--extra-index-url {CPU_WHEELS}" in (REPO / ENVIRONMENT_MK).read_text()


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


def test_the_forks_workflow_runs_the_ci_script_on_python_3_11():
    """GitHub Actions, for instructors who fork the course, runs `.ci/run` and nothing
    else, on the Python the course pins, with the CPU-only torch wheels."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    (job,) = workflow["jobs"].values()
    assert [step["run"] for step in job["steps"] if "run" in step] == [".ci/run"]
    assert job["container"]["image"].startswith("python:3.11-")
    assert job["env"]["TORCH"] == "cpu"


@pytest.mark.slow
def test_make_refuses_a_python_other_than_3_11_in_one_line(tmp_path):
    """The wrong ``python3`` is named before anything is installed, with what to do."""
    for name in ("Makefile", "pyproject.toml", ENVIRONMENT_MK):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((REPO / name).read_text())
    wrong = tmp_path / "python3"
    wrong.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; sys.version_info = (3, 12, 1); "
                     "sys.version = \"3.12.1\"; exec(sys.argv[2])' \"$@\"\n")
    wrong.chmod(0o755)
    done = subprocess.run(["make", "env", f"PYTHON={wrong}"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert f"this course needs Python 3.11, but {wrong} is Python 3.12.1" in done.stderr
    assert not (tmp_path / ".venv").exists()


@pytest.mark.slow
def test_new_gradebooks_are_stamped_as_nbgrader_stamps_them(monkeypatch):
    """The grader gives nbgrader the schema version it would get from the ``alembic``
    command; this asks the command itself."""
    from autograder.nbgrader_api import ASK_ALEMBIC, alembic_head, path_with_scripts  # before nbgrader.api is read
    from nbgrader.api import get_alembic_version

    monkeypatch.setenv("PATH", path_with_scripts())
    assert get_alembic_version is alembic_head
    assert ASK_ALEMBIC() == alembic_head()
