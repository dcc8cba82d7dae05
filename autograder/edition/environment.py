"""The student edition's environment and nbgrader settings, written from the course's own.

Students install what the lectures and the assignments run, at the pins the course is
tested with (its ``pyproject.toml``), and nothing of the grader's; and the Validate button
and ``make check`` run a notebook as grading does, under the course's own execution
settings and none of its instructor settings (paths, stubs, the policy).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from autograder.course import Course

# What a student runs: torch, JupyterLab with the lectures' plots and widgets, and nbgrader
# for the Validate button (its lab extension and its `validate` command); jsonschema at the
# version that does not make every notebook-reading process 3 s slower to start.
STUDENT_PACKAGES = ("torch", "jupyterlab", "nbgrader", "matplotlib", "ipywidgets", "jsonschema")
# PyTorch's CPU-only wheels: on Linux, PyPI's torch is the CUDA build (gigabytes).
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"
# The package students install: the edition's `autograder`, which holds only the checks.
DISTRIBUTION = "pytorch-inplace-course-student"
# The course's settings that decide how a notebook runs, each with the reason it matters to
# a student; every other setting is the instructor's or the grader's.
STUDENT_SETTINGS = {
    ("Execute", "timeout"): "a cell that runs longer than this fails, as it does at grading",
    ("Execute", "extra_arguments"): "the kernel starts as the grading kernel does (Python warnings off: "
                                    "nbgrader fails a test cell that writes to stderr)",
}


def language_pack(locale: str) -> str:
    """JupyterLab's language pack for a locale ('ko_KR' -> jupyterlab-language-pack-ko-kr)."""
    return f"jupyterlab-language-pack-{locale.replace('_', '-')}".lower()


def student_pins(course_root: Path, locale: str | None = None) -> list[str]:
    """The course's pins of ``STUDENT_PACKAGES``, in that order, and of the language pack
    of ``locale``, if the edition has one."""
    declared = tomllib.loads((course_root / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {Requirement(line).name.lower(): line for line in declared}
    wanted = [*STUDENT_PACKAGES, *([language_pack(locale)] if locale else [])]
    missing = [name for name in wanted if name not in pins]
    if missing:
        raise ValueError(f"the course's pyproject.toml does not pin {', '.join(missing)}")
    return [pins[name] for name in wanted]


def pyproject(course_root: Path, locale: str | None = None) -> str:
    """The edition's ``pyproject.toml``: its ``autograder`` package and the student pins."""
    project = tomllib.loads((course_root / "pyproject.toml").read_text())
    dependencies = "".join(f'    "{pin}",\n' for pin in student_pins(course_root, locale))
    build = project["build-system"]
    requires = ", ".join(f'"{requirement}"' for requirement in build["requires"])
    return (
        "# The student edition of the course: the checks the assignments' tests call (the\n"
        "# `autograder` package here) and what the lectures and assignments run, at the pins\n"
        "# the course is tested with. `make lab` installs it.\n"
        "[build-system]\n"
        f"requires = [{requires}]\n"
        f'build-backend = "{build["build-backend"]}"\n'
        "\n"
        "[project]\n"
        f'name = "{DISTRIBUTION}"\n'
        f'version = "{project["project"]["version"]}"\n'
        'description = "PyTorch in-place operations, the student edition: lectures, assignments and their checks."\n'
        f'requires-python = "{project["project"]["requires-python"]}"\n'
        f"dependencies = [\n{dependencies}]\n"
        "\n"
        "[tool.setuptools]\n"
        'packages = ["autograder"]\n'
        "\n"
        "# The checks' messages in the edition's language, if it is not English.\n"
        "[tool.setuptools.package-data]\n"
        'autograder = ["locale/EDITION", "locale/*/LC_MESSAGES/*.mo"]\n'
    )


def environment_yml(course_root: Path, locale: str | None = None) -> str:
    """The edition's ``environment.yml`` for conda users: the same pins, CPU-only torch."""
    pins = "".join(f"      - {pin}\n" for pin in student_pins(course_root, locale))
    return (
        "# Conda users: `conda env create -f environment.yml`, then `conda activate\n"
        "# pytorch-inplace-student` and `jupyter lab`. The pins are those of pyproject.toml.\n"
        "name: pytorch-inplace-student\n"
        "channels:\n"
        "  - conda-forge\n"
        "dependencies:\n"
        "  - python=3.11\n"
        "  - pip\n"
        "  - pip:\n"
        "      # PyTorch's CPU-only wheels: on Linux, PyPI's torch is the CUDA build (gigabytes)\n"
        f"      - --extra-index-url {CPU_WHEELS}\n"
        f"{pins}"
        "      - -e .\n"
    )


def nbgrader_config(course: Course) -> str:
    """The edition's ``nbgrader_config.py``: the course's ``STUDENT_SETTINGS`` that it sets."""
    lines = [
        '"""How the Validate button and `make check` run a notebook: as the course\'s grading does."""',
        "",
        "c = get_config()  # noqa: F821 (injected by traitlets when nbgrader loads this file)",
    ]
    for (section, name), reason in STUDENT_SETTINGS.items():
        if name in course.config[section]:
            lines += ["", f"# {reason}", f"c.{section}.{name} = {course.config[section][name]!r}"]
    return "\n".join(lines) + "\n"
