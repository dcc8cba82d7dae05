"""The grading kernels' manager and client, as jupyter_client sees them: which kernel specs
there are (``kernels/``: the sandboxed one, and the unsandboxed one a TA may choose with
``--no-sandbox``), Unix sockets in a private folder the zygote can reach, and a cap on every message.
The provisioners (``provisioner.py``) start what this manager asks for.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, default

from autograder.sandbox.outputs import MAX_MESSAGE_BYTES
from autograder.sandbox import fork_server

KERNELS = Path(__file__).resolve().parent / "kernels"
SANDBOXED_KERNEL, UNSANDBOXED_KERNEL = "autograder-sandboxed", "autograder-unsandboxed"
# How soon a grading client's socket tries again to connect to its kernel's.
RECONNECT_MS = 5


class GradingKernelClient(AsyncKernelClient):
    """A kernel client whose sockets refuse any message over ``MAX_MESSAGE_BYTES``: ZeroMQ
    drops such a message before reading it, so no output can exhaust the grader's memory.
    They connect as soon as the kernel's sockets exist: a client is made as its kernel
    starts, and ZeroMQ tries again only after ``RECONNECT_MS`` (a tenth of a second by
    default, which was a quarter of a forked kernel's start)."""

    @default("context")
    def _capped_context(self) -> zmq.asyncio.Context:
        # The process's one asyncio context, shared by every grading client and never
        # destroyed with one; each socket it makes takes these options from it.
        context = zmq.asyncio.Context.instance()
        context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        context.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MS)
        return context

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """jupyter_client's wait (a kernel_info reply, then a message on IOPub, which proves
        it connected), without its last step: waiting until IOPub has been silent for a
        fifth of a second, to drop what answered the kernel_info requests. That was half
        a forked kernel's start, and nbclient passes over every message that answers
        another request anyway."""
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                try:
                    await self.iopub_channel.get_msg(timeout=0.2)
                    return
                except Empty:
                    pass  # IOPub is not connected yet: ask again
            if not await self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


class GradingKernelManager(AsyncKernelManager):
    """A kernel manager that finds the grading kernel specs and connects over Unix sockets
    in a private folder (``GuardedExecute`` removes it once the notebook ran), where the
    sandboxed kernels' zygote can reach it (``fork_server.kernels_folder``). Its kernel's
    whole environment is ``kernel_environment`` (the grading kernels' provisioners see
    to it: ``autograder.sandbox.provisioner``)."""

    kernel_environment = Dict(help="The kernel's environment variables, and no others.")

    @default("kernel_spec_manager")
    def _grading_kernel_specs(self) -> KernelSpecManager:
        return KernelSpecManager(kernel_dirs=[str(KERNELS)])

    @default("client_factory")
    def _capped_client(self) -> type:
        return GradingKernelClient

    @default("transport")
    def _unix_sockets(self) -> str:
        return "ipc"

    @default("connection_file")
    def _private_connection_file(self) -> str:
        # A short path: a Unix socket's name has a limit of about a hundred characters.
        return str(Path(tempfile.mkdtemp(prefix="k-", dir=fork_server.kernels_folder())) / "kernel.json")
