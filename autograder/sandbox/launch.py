"""Start the grading kernel inside bubblewrap; the sandboxed kernel spec runs this.

    python -m autograder.sandbox.launch -f CONNECTION_FILE [IPKernelApp options]

jupyter_client starts it in the folder where nbgrader laid out the assignment (the
notebooks and the files they may read) with the connection file in a private folder (the
grader sets both). The sandbox shows the kernel a copy of the first without its notebooks
(nbgrader puts back the hidden tests in them before they run, and a submission's other
notebooks lie there graded), read only, and the second writable until the kernel has
bound its sockets. This process then becomes bubblewrap,
so jupyter_client's handle on it (signals, kill, exit status) is a handle on the sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from autograder.sandbox import bwrap, guard
from autograder.sandbox.limits import ENVIRONMENT_VARIABLE


def main(argv: list[str]) -> None:
    assignment = Path.cwd().resolve()
    argv, at = list(argv), argv.index("-f") + 1
    connection_file = Path(argv[at]).resolve()
    argv[at] = _connection_file_inside(connection_file)
    environment = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        ENVIRONMENT_VARIABLE: os.environ[ENVIRONMENT_VARIABLE],
    }
    for name in ("OMP_NUM_THREADS", "PYTHONHASHSEED", "NBGRADER_EXECUTION", "NBGRADER_VALIDATING",
                 guard.GUARD_TORCH_VARIABLE):
        if name in os.environ:
            environment[name] = os.environ[name]
    inner = [sys.executable, "-m", "autograder.sandbox.kernel", "--sandboxed"]
    if os.geteuid() == 0:
        inner.append(f"--step-down={bwrap.sandbox_user()}")
    visible = kernel_view(assignment, connection_file.parent / "assignment")
    argv = bwrap.command(inner + argv, visible, connection_file.parent, environment)
    os.execvp(argv[0], argv)


def kernel_view(assignment: Path, into: Path) -> Path:
    """What the kernel may see of the assignment folder: a copy without its notebooks, in
    the kernel's private folder (removed with it). nbgrader and the grader wrote every file
    there, none of it a link a kernel planted: no kernel writes there."""
    shutil.copytree(assignment, into, ignore=shutil.ignore_patterns(*bwrap.HIDDEN_FROM_THE_KERNEL), symlinks=True)
    return into


def _connection_file_inside(connection_file: Path) -> str:
    """The kernel's connection file as the sandbox sees it: the sockets' folder is at
    ``bwrap.SOCKETS`` there (not under /tmp, which is the kernel's own). Written beside
    the grader's, in the folder the grader made for them."""
    info = json.loads(connection_file.read_text())
    info["ip"] = f"{bwrap.SOCKETS}/{Path(info['ip']).name}"
    inside = connection_file.with_name("sandbox-" + connection_file.name)
    inside.write_text(json.dumps(info))
    return f"{bwrap.SOCKETS}/{inside.name}"


if __name__ == "__main__":
    main(sys.argv[1:])
