"""Run nbgrader's command-line apps from this environment.

nbgrader upgrades its gradebook by running the ``alembic`` executable found on PATH, so a
call from a virtual environment that is not activated fails with "No such file or
directory: 'alembic'". Every nbgrader call of the course goes through here, with this
interpreter's scripts folder first on PATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_nbgrader(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``cwd``; extra keyword arguments go to ``subprocess.run``."""
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, **kwargs
    )
