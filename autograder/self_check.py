"""``make check`` in the student edition: nbgrader's own validation of each notebook (what
the Validate button runs, under the course's ``nbgrader_config.py``), told briefly.

``nbgrader validate`` prints every failing cell's whole traceback, exits 0 whatever it
found, and each kernel it starts warns that it runs over TCP. A student who runs the
check before handing in wants one line per notebook, the first line of each failing
test's error, a summary, and an exit status a script can test: 1 when any notebook fails
or could not be checked. Kernels talk over local sockets (IPC) where the system has them,
so nothing warns.

    python -m autograder.self_check NOTEBOOK...
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Checked:
    """One notebook's validation, as the student reads it."""

    path: str
    tests: int = 0
    failed: list[str] = field(default_factory=list)  # "test: the error's last line", one per failing test
    problem: str = ""  # why the notebook could not be checked, or how its cells changed

    @property
    def passes(self) -> bool:
        return not self.failed and not self.problem


def checked(path: str, results: dict, notebook: nbformat.NotebookNode) -> Checked:
    """The student's view of nbgrader's ``Validator.validate`` results for ``notebook``."""
    names = {cell.source.strip(): cell.metadata.get("nbgrader", {}).get("grade_id", "a test")
             for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade")}
    found = Checked(path, tests=len(names))
    if results.get("type_changed"):
        found.problem = f"{len(results['type_changed'])} cell(s) changed type: restore them from the release"
    elif results.get("changed"):
        found.problem = f"{len(results['changed'])} test cell(s) were edited: restore them from the release"
    for failure in results.get("failed", []):
        lines = [line for line in ANSI.sub("", failure.get("raw_error", "")).splitlines() if line.strip()]
        last = lines[-1].strip().rstrip(":") if lines else "failed"
        found.failed.append(f"{names.get(failure['source'], 'a test')}: {last}")
    return found


def report(results: list[Checked]) -> str:
    lines = []
    for result in results:
        if result.problem:
            lines.append(f"{result.path}: {result.problem}")
        elif result.failed:
            lines.append(f"{result.path}: {len(result.failed)} of {result.tests} tests fail")
            lines += [f"    {failure[:200]}" for failure in result.failed]
        else:
            lines.append(f"{result.path}: every visible test passes ({result.tests})")
    passing = sum(result.passes for result in results)
    lines.append(f"{passing} of {len(results)} notebook(s) pass every visible test"
                 + ("" if passing == len(results) else f"; {len(results) - passing} do not"))
    return "\n".join(lines)


def validate(paths: list[str]) -> list[Checked]:
    from nbgrader.apps.validateapp import ValidateApp
    from nbgrader.validator import Validator

    app = ValidateApp()
    app.initialize([])  # the course's nbgrader_config.py and the Jupyter configuration, as nbgrader validate
    if os.name == "posix":
        app.config.KernelManager.transport = "ipc"
    validator = Validator(config=app.config)
    results = []
    for path in paths:
        try:
            notebook = nbformat.read(path, as_version=4)
            results.append(checked(path, validator.validate(str(Path(path).resolve())), notebook))
        except Exception as failure:  # noqa: BLE001 (one notebook that cannot run stops no other)
            results.append(Checked(path, problem=f"could not be checked: {type(failure).__name__}: {failure}"[:300]))
        print(f"checked {path}", file=sys.stderr, flush=True)  # progress: a kernel runs each notebook
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run each notebook's visible tests, as the Validate button does.")
    parser.add_argument("notebooks", nargs="+")
    results = validate(parser.parse_args(argv).notebooks)
    print(report(results))
    return 0 if all(result.passes for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
