"""Start the grading kernel inside bubblewrap; the sandboxed kernel spec runs this.

    python -m autograder.sandbox.launch -f CONNECTION_FILE [IPKernelApp options]

jupyter_client starts it in the notebook's folder with the connection file in a folder
of its own (the grader sets both): those two are the only writable places the kernel
gets. A root grader hands the notebook's folder to the user the kernel will step down to. This process then becomes bubblewrap, so jupyter_client's handle on it (signals,
kill, exit status) is a handle on the sandbox.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.sandbox import bwrap
from autograder.sandbox.limits import ENVIRONMENT_VARIABLE


def main(argv: list[str]) -> None:
    workdir = Path.cwd().resolve()
    sockets = Path(argv[argv.index("-f") + 1]).resolve().parent
    environment = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        ENVIRONMENT_VARIABLE: os.environ[ENVIRONMENT_VARIABLE],
    }
    for name in ("OMP_NUM_THREADS", "PYTHONHASHSEED"):
        if name in os.environ:
            environment[name] = os.environ[name]
    inner = [sys.executable, "-m", "autograder.sandbox.kernel", "--sandboxed"]
    if os.geteuid() == 0:
        user = bwrap.sandbox_user()
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, user, user)
        inner.append(f"--step-down={user}")
    inner += argv
    argv = bwrap.command(inner, workdir, [workdir, sockets], environment)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
