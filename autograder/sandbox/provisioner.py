"""How jupyter_client starts a grading kernel: its kernel provisioners (the plug-in point
for starting kernels), named in the grading kernel specs' metadata (``sandbox/kernels``).

- ``autograder-unsandboxed`` (``UnsandboxedProvisioner``): an unsandboxed kernel, a process of its
  own, whose environment is only what the grader set (``GradingKernelManager.
  kernel_environment``): none of the TA's variables.
- ``autograder-sandboxed`` (``SandboxedProvisioner``): a sandboxed kernel, forked by this
  process's zygote (``fork_server``). jupyter_client lays out its folder as for any
  kernel: the connection file, in a private folder of its own (``fork_server.
  kernels_folder``), and the assignment folder nbgrader made (the kernel's ``cwd``); the
  provisioner adds what the kernel may see of the assignment, and the connection file
  as the kernel sees it, and has the zygote fork the kernel there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner

from autograder.sandbox import bwrap, cgroups, fork_server
from autograder.sandbox.limits import ENVIRONMENT_VARIABLE, Limits

# How often a kernel that is ending is looked at: its zygote tells its end within milliseconds.
ENDED_POLL_SECONDS = 0.005


class UnsandboxedProvisioner(LocalProvisioner):
    group: cgroups.KernelGroup | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        try:
            kwargs["env"] = dict(self.parent.kernel_environment)
        except AttributeError:
            raise RuntimeError("a grading kernel is started by the grader's kernel manager "
                               "(autograder.sandbox.kernel_manager.GradingKernelManager)") from None
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """The kernel, in a control group of its own before it runs any notebook's code."""
        info = await super().launch_kernel(cmd, **kwargs)
        self.group = _group(kwargs["env"])
        if self.group is not None:
            self.group.add(self.process.pid)
        return info

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if self.group is not None:
            self.group.remove()


class SandboxedProvisioner(UnsandboxedProvisioner):
    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        at = cmd.index("-f") + 1
        connection_file = Path(cmd[at]).resolve()
        folder = connection_file.parent
        server = fork_server.server()
        if folder.parent != server.kernels.resolve():
            raise RuntimeError(f"a forked kernel's folder must be in {server.kernels}, not {folder.parent}")
        kernel_view(Path(kwargs.get("cwd") or Path.cwd()).resolve(), folder / "assignment")
        argv = [*cmd[at - 1:at], _connection_file_inside(connection_file), *cmd[at + 1:]]
        environment = fork_server.kernel_environment(kwargs["env"])
        self.group = _group(kwargs["env"])
        self.process = server.spawn(folder.name, argv, environment, fork_server.step_down_user(), self.group)
        self.pid = self.pgid = None
        self.cwd = kwargs.get("cwd")
        return self.connection_info

    async def kill(self, restart: bool = False) -> None:
        """Kill the kernel, and return once its zygote says it ended (jupyter_client would
        otherwise find it still running, and look again a tenth of a second later)."""
        await super().kill(restart)
        with contextlib.suppress(TimeoutError):  # jupyter_client then waits, and warns
            await asyncio.wait_for(self._ended(), fork_server.ANSWER_SECONDS)

    async def wait(self) -> int | None:
        """Its exit status, as soon as its zygote tells it."""
        status = await self._ended()
        self.process = None
        return status

    async def _ended(self) -> int:
        while self.process and self.process.poll() is None:
            await asyncio.sleep(ENDED_POLL_SECONDS)
        return self.process.poll() if self.process else 0


def _group(environment: dict[str, str]) -> cgroups.KernelGroup | None:
    """A control group with the limits the grader set for the kernel (None where the host has none)."""
    given = environment.get(ENVIRONMENT_VARIABLE)
    return cgroups.create(Limits(**json.loads(given)) if given else Limits())


def kernel_view(assignment: Path, into: Path) -> Path:
    """What the kernel may see of the assignment folder: a copy without its notebooks
    (nbgrader puts back the hidden tests in them before they run, and a submission's other
    notebooks lie there graded), in the kernel's private folder (removed with it). nbgrader
    and the grader wrote every file there, none of it a link a kernel planted: no kernel
    writes there. Readable by the kernel's user whatever the original's modes: the copy's
    files and folders are the grader's, open to read."""
    shutil.copytree(assignment, into, ignore=shutil.ignore_patterns(*bwrap.HIDDEN_FROM_THE_KERNEL), symlinks=True,
                    copy_function=shutil.copyfile)
    for folder in [into, *(path for path in into.rglob("*") if path.is_dir() and not path.is_symlink())]:
        folder.chmod(0o755)
    return into


def _connection_file_inside(connection_file: Path) -> str:
    """The kernel's connection file as the sandbox sees it: its folder is at
    ``bwrap.SOCKETS`` there (not under /tmp, which is the kernel's own). Written beside
    the grader's, in the folder the grader made for them."""
    info = json.loads(connection_file.read_text())
    info["ip"] = f"{bwrap.SOCKETS}/{Path(info['ip']).name}"
    inside = connection_file.with_name("sandbox-" + connection_file.name)
    inside.write_text(json.dumps(info))
    return f"{bwrap.SOCKETS}/{inside.name}"
