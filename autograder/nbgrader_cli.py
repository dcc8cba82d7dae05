"""Run nbgrader, as a command or in this process, from this environment.

nbgrader creates a gradebook by running the ``alembic`` executable found on PATH, so a
call from a virtual environment that is not activated fails with "No such file or
directory: 'alembic'". Every nbgrader call of the course puts this interpreter's scripts
folder first on PATH through here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def path_with_scripts() -> str:
    """PATH with this interpreter's scripts folder (where ``alembic`` is) in front."""
    scripts = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    return path if path.split(os.pathsep)[0] == scripts else os.pathsep.join([scripts, path])


def put_scripts_on_path() -> None:
    """For nbgrader running in this process."""
    os.environ["PATH"] = path_with_scripts()


def run_nbgrader(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``cwd``; extra keyword arguments go to ``subprocess.run``."""
    env = {**os.environ, "PATH": path_with_scripts()}
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, **kwargs)
