"""The whole tree (package, tests, notebooks) stays clean under ruff (rules in pyproject.toml)."""

import subprocess
import sys

from tests.helpers.assignments import REPO


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
