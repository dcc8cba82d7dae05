"""The one place that runs nbgrader: its configuration, its converters, its command.

Configuration is resolved as nbgrader's own commands resolve it: every
``nbgrader_config.py`` on Jupyter's config path (the system's, the environment's, the
user's ``~/.jupyter``), then the course's own file on top, so that a setting in the TA's
Jupyter config applies to every step alike, in this process or as a command.

Converters run in this process (starting the ``nbgrader`` command costs seconds of
imports per call), through nbgrader's ``capture_log``, the same way its own ``NbGraderAPI``
runs them for the formgrader.

nbgrader stamps each gradebook it creates with its schema version, which it learns by
running the ``alembic`` command: a Python process that imports nbgrader (about 6 s on two
cores, twice in a grading run), and one that fails with "No such file or directory:
'alembic'" from a virtual environment that is not activated. Importing this module makes
every gradebook this process creates take the same answer from nbgrader's own migration
scripts, read here (``tests/test_environment_files.py`` asks the command too). Every call
still puts this interpreter's scripts folder first on PATH, so that a process nbgrader
would start by name (``alembic``, in a process that did not import this module) is this
environment's.
"""

from __future__ import annotations

import copy
import functools
import glob
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

from jupyter_core.paths import jupyter_config_path
import nbgrader.api
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import capture_log
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SAWarning
from traitlets.config import Config, JSONFileConfigLoader, PyFileConfigLoader

CONFIG_FILE = "nbgrader_config.py"
CONFIG_JSON = "nbgrader_config.json"  # nbgrader's commands read it too, after the .py
GRADEBOOK = "gradebook.db"
# nbgrader's own way to learn the schema version: the ``alembic heads`` command.
ASK_ALEMBIC = nbgrader.api.get_alembic_version


@functools.cache
def alembic_head() -> str:
    """The schema version nbgrader stamps a new gradebook with, read in this process from
    nbgrader's migration scripts (what ``alembic heads`` prints)."""
    from alembic.script import ScriptDirectory
    from nbgrader import dbutil

    return ScriptDirectory(dbutil.ALEMBIC_DIR).get_current_head()


nbgrader.api.get_alembic_version = alembic_head


def quiet_nbgrader_internals() -> None:
    """nbgrader's gradebook makes SQLAlchemy warn about its own session use on every
    submission; the warnings say nothing to a TA and would bury the progress bar."""
    warnings.filterwarnings("ignore", category=SAWarning)


def gradebook_url(root: Path) -> str:
    """The URL of the gradebook in ``root``, whatever characters its path holds (``?``, ``#``, ``%``)."""
    return URL.create("sqlite", database=str(root / GRADEBOOK)).render_as_string()


# The folders read in place of Jupyter's config path (``use_config_folders``); None: Jupyter's own.
_config_folders: list[str] | None = None


def use_config_folders(folders: list[Path] | None) -> None:
    """Read nbgrader's configuration from ``folders`` (lowest priority first) in place of
    this machine's Jupyter config path, from now on in this process: a grading worker
    reads the TA's, shipped in the assignment's bundle, never its own host's."""
    global _config_folders
    _config_folders = None if folders is None else [str(folder) for folder in folders]


def jupyter_config_folders() -> list[str]:
    """Where Jupyter's configuration is read from, lowest priority first."""
    return list(reversed(jupyter_config_path())) if _config_folders is None else list(_config_folders)


def config_files(root: Path) -> Config:
    """What the configuration files say for the course in ``root``: Jupyter's config path
    (``jupyter_config_folders``), then the course's own files, as nbgrader's commands read them."""
    config = Config()
    for folder in [*jupyter_config_folders(), str(root)]:
        for loader, name in ((PyFileConfigLoader, CONFIG_FILE), (JSONFileConfigLoader, CONFIG_JSON)):
            if (Path(folder) / name).is_file():
                config.merge(loader(name, path=folder).load_config())
    return config


def course_config(root: Path, overrides: dict | None = None, declared: Config | None = None) -> Config:
    """nbgrader's configuration for the course in ``root`` (``declared``, or else read by
    ``config_files``), with ``overrides`` ({Class: {trait: value}}) on top. The gradebook
    is the declared ``CourseDirectory.db_url`` (a relative SQLite path counts from the
    course folder, where nbgrader's commands run), else ``gradebook.db`` in the course."""
    config = copy.deepcopy(declared) if declared is not None else config_files(root)
    config.merge(Config(overrides or {}))
    declared_url = config.CourseDirectory.get("db_url")
    config.CourseDirectory.db_url = gradebook_url(root) if not declared_url else _anchored(declared_url, root)
    config.CourseDirectory.root = str(root)
    return config


def _anchored(url: str, root: Path) -> str:
    """``url``, with a relative SQLite file path made absolute from ``root``."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and not Path(parsed.database).is_absolute():
        return parsed.set(database=str(root / parsed.database)).render_as_string(hide_password=False)
    return url


def import_from(root: Path) -> None:
    """Let this process (and the workers it starts) import the course's own modules, as
    nbgrader's commands, which run in the course folder, put it first on ``sys.path``: a
    plugin the configuration names (``c.AssignLatePenalties.plugin_class = 'late.Plugin'``)
    lives there."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))


def autograde(root: Path, assignment: str, student: str, overrides: dict | None = None) -> None:
    """``nbgrader autograde ASSIGNMENT --student STUDENT --force`` in ``root``."""
    _convert(Autograde, root, assignment, overrides, student=student)


def generate_feedback(root: Path, assignment: str, student: str, overrides: dict | None = None) -> None:
    """``nbgrader generate_feedback ASSIGNMENT --student STUDENT --force`` in ``root``."""
    _convert(GenerateFeedback, root, assignment, overrides, student=student)


def generate_assignment(root: Path, assignment: str, overrides: dict | None = None) -> None:
    """``nbgrader generate_assignment ASSIGNMENT --force`` in ``root``."""
    _convert(GenerateAssignment, root, assignment, overrides)


def _convert(converter_class, root: Path, assignment: str, overrides: dict | None,
             student: str | None = None) -> None:
    """Run one nbgrader converter, for one student or all; raise ``RuntimeError`` carrying
    the errors it logged (its exceptions only say "see the log")."""
    os.environ["PATH"] = path_with_scripts()
    config = course_config(root, overrides)
    config.CourseDirectory.assignment_id = assignment
    # nbgrader reads the student id as a glob pattern: a folder named "a[1]" is one student.
    config.CourseDirectory.student_id = glob.escape(student) if student else "*"
    config.BaseConverter.force = True
    converter = converter_class(coursedir=CourseDirectory(config=config), config=config)
    converter.log.setLevel(logging.ERROR)
    outcome = capture_log(converter)
    if outcome["success"]:
        return
    error = outcome.get("error", "")
    if error.rstrip().endswith("KeyboardInterrupt"):
        raise KeyboardInterrupt  # capture_log catches everything; a TA's Ctrl-C must still stop the run
    logged = [line.removeprefix("[ERROR] ") for line in outcome.get("log", "").splitlines()]
    raise RuntimeError("\n".join(logged) or error)


def path_with_scripts() -> str:
    """PATH with this interpreter's scripts folder (this environment's commands) in front."""
    scripts = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    return path if path.split(os.pathsep)[0] == scripts else os.pathsep.join([scripts, path])


def run_nbgrader(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """The command ``nbgrader ARGS`` in ``cwd``; extra keyword arguments go to ``subprocess.run``."""
    env = {**os.environ, "PATH": path_with_scripts()}
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, **kwargs)
