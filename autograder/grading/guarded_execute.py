"""nbgrader's Execute step, run in a grading kernel and guarded around every graded cell.

Configured in place of nbgrader's ``Execute`` (``Autograde.autograde_preprocessors``),
it changes two things and leaves the rest of nbgrader's autograding as it is:

- **The kernel.** It starts the course's grading kernel spec (``autograder/sandbox/
  kernels``): sandboxed in bubblewrap, or, where bubblewrap is missing, unsandboxed but
  still limited and guarded. jupyter_client talks to it over Unix sockets in a folder of
  its own, since a sandboxed kernel has no network.
- **The guard.** Before each graded cell it asks the kernel to put back every hook a
  student cell could have hijacked (``autograder.sandbox.guard``), then runs a canary
  cell that must fail, proving errors still reach the notebook. After the graded cell it
  asks again: anything hijacked *during* a test means the test's result cannot be
  trusted. Either way, or when the kernel does not answer the guard at all, the notebook
  is scored as tampered (``TamperedError``). What was put back is written to
  ``guard_log`` for the report.
"""

from __future__ import annotations

import ast
import json
import secrets
import shutil
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbgrader import utils
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode, default

from autograder.sandbox.limits import Limits

KERNELS = Path(__file__).resolve().parent.parent / "sandbox" / "kernels"
SANDBOXED_KERNEL, UNSANDBOXED_KERNEL = "autograder-sandboxed", "autograder-guarded"
GUARD_EXPRESSION = "__import__('autograder.sandbox.guard', fromlist=['restore']).restore()"


class TamperedError(Exception):
    """The notebook interfered with the grading; its results cannot be trusted."""


class GradingKernelManager(AsyncKernelManager):
    """A kernel manager that finds the grading kernel specs and connects over Unix sockets
    in a private temporary folder, removed when the kernel is."""

    @default("kernel_spec_manager")
    def _grading_kernel_specs(self) -> KernelSpecManager:
        return KernelSpecManager(kernel_dirs=[str(KERNELS)])

    @default("transport")
    def _unix_sockets(self) -> str:
        return "ipc"

    @default("connection_file")
    def _private_connection_file(self) -> str:
        # A short path: a Unix socket's name has a limit of about a hundred characters.
        return str(Path(tempfile.mkdtemp(prefix="grading-kernel-")) / "kernel.json")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if not restart:
            shutil.rmtree(Path(self.connection_file).parent, ignore_errors=True)


class GuardedExecute(Execute):
    sandboxed = Bool(True, help="Run the kernel in bubblewrap.").tag(config=True)
    memory_limit = Integer(Limits.memory_bytes, help="Bytes of address space per kernel.").tag(config=True)
    cpu_limit = Integer(Limits.cpu_seconds, help="CPU seconds per kernel.").tag(config=True)
    process_limit = Integer(Limits.processes, help="Processes and threads per sandbox.").tag(config=True)
    file_size_limit = Integer(Limits.file_bytes, help="Bytes per file the kernel writes.").tag(config=True)
    guard_log = Unicode("", help="File that receives one JSON line per guard check.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)
        super().__init__(*args, **kwargs)

    @default("kernel_name")
    def _grading_kernel(self) -> str:
        return SANDBOXED_KERNEL if self.sandboxed else UNSANDBOXED_KERNEL

    async def async_start_new_kernel(self, **kwargs) -> None:
        limits = Limits(self.memory_limit, self.cpu_limit, self.process_limit, self.file_size_limit)
        kwargs["env"] = {**kwargs.get("env", {}), **limits.to_environment()}
        await super().async_start_new_kernel(**kwargs)

    # nbclient's synchronous wrapper, which nbconvert calls, wraps the base class's method.
    start_new_kernel = run_sync(async_start_new_kernel)

    def preprocess_cell(self, cell, resources, index):
        if not (cell.cell_type == "code" and utils.is_grade(cell)):
            return super().preprocess_cell(cell, resources, index)
        name = cell.metadata.nbgrader.get("grade_id", f"cell {index}")
        self._record(name, self._restore(name))
        self._run_canary(name, resources, index)
        cell, resources = super().preprocess_cell(cell, resources, index)
        during = self._restore(name)
        if during:
            raise TamperedError(f"while {name} ran, the notebook changed {', '.join(during)}")
        return cell, resources

    def _restore(self, name: str) -> list[str]:
        """Ask the kernel's guard to put everything back; return what it put back."""
        msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"guard": GUARD_EXPRESSION})
        try:
            answer = self.wait_for_reply(msg_id)["content"]["user_expressions"]["guard"]
        except DeadKernelError:
            raise
        except Exception as failure:  # noqa: BLE001 (any way the answer fails to come is the same verdict)
            raise TamperedError(f"the kernel did not run the grader's guard before {name} "
                                f"({type(failure).__name__})") from None
        if answer.get("status") != "ok":
            raise TamperedError(f"the grader's guard failed before {name}: "
                                f"{answer.get('ename')}: {answer.get('evalue')}")
        report = json.loads(ast.literal_eval(answer["data"]["text/plain"]))
        restored, tampered = list(report["restored"]), list(report["tampered"])
        if tampered:
            raise TamperedError(f"before {name}: {', '.join(tampered)}")
        return restored

    def _run_canary(self, name: str, resources, index: int) -> None:
        """A cell that raises must still end with an error: otherwise errors are hidden."""
        token = secrets.token_hex(8)
        canary = nbformat.v4.new_code_cell(f"raise AssertionError('canary {token}')")
        self._check_assign_resources(resources)
        try:
            self.execute_cell(canary, index, store_history=False)
        except DeadKernelError:
            raise
        except Exception as failure:  # noqa: BLE001 (a kernel that stops answering is not trusted)
            raise TamperedError(f"the kernel stopped answering before {name} ({type(failure).__name__})") from None
        if not any(output.output_type == "error" for output in canary.outputs):
            raise TamperedError(f"before {name}, a failing cell no longer showed its error")

    def _record(self, name: str, restored: list[str]) -> None:
        if restored and self.guard_log:
            with open(self.guard_log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"cell": name, "restored": restored}) + "\n")
