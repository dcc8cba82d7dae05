"""The grading kernel: ipykernel with resource limits set and the tamper guard installed.

    python -m autograder.sandbox.kernel [--sandboxed [--step-down=USER]] -f CONNECTION_FILE [IPKernelApp options]

Limits come from the environment (``limits.Limits``). The guard snapshots the hooks the
tests rely on after ipykernel and the modules the tests use are set up, and before the
kernel answers its first request, so no student code has run yet.
"""

from __future__ import annotations

import os
import sys

from autograder.sandbox import bwrap, guard
from autograder.sandbox.limits import Limits


def main(argv: list[str]) -> None:
    sandboxed = "--sandboxed" in argv
    step_down = [int(arg.split("=", 1)[1]) for arg in argv if arg.startswith("--step-down=")]
    Limits.from_environment().apply(sandboxed)
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize([arg for arg in argv if arg != "--sandboxed" and not arg.startswith("--step-down=")])
    for user in step_down:  # after the sockets are bound, before any student code
        bwrap.step_down(user)
    guard.install(app.shell)
    app.start()
    # The grader has every output by now. Tearing down torch's interpreter state would
    # cost half a second per notebook, and nothing in a grading kernel needs it.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
