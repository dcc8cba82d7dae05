"""Resource limits of one grading kernel, set inside the kernel process before any student code.

They travel from the grader to the kernel in one environment variable, since the kernel
is started by jupyter_client (through bubblewrap when sandboxed) and not by us.

Memory is one budget: a sandboxed kernel's ``/tmp`` (where its working folder is) is a
tmpfs of ``disk_bytes``, which lives in memory, so the kernel's address space is capped
at what is left of ``memory_bytes``: files and tensors together can never hold more.
"""

from __future__ import annotations

import json
import os
import resource
from dataclasses import asdict, dataclass

from autograder.sandbox.outputs import PER_OUTPUT

ENVIRONMENT_VARIABLE = "AUTOGRADER_KERNEL_LIMITS"
GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 4 * GiB
    # The sandbox's /tmp, counted inside memory_bytes, and the files and folders it may hold.
    disk_bytes: int = GiB // 2
    files: int = 10_000
    cpu_seconds: int = 600
    # Cores the kernel and its processes may use at once (a control group's CPU quota).
    cpu_cores: float = 1.0
    # Threads count as processes: an idle kernel already runs about ten.
    processes: int = 64
    file_bytes: int = GiB // 4
    # Bytes of content one output message may carry before the kernel cuts it.
    output_bytes: int = PER_OUTPUT

    def __post_init__(self):
        if self.disk_bytes >= self.memory_bytes:
            raise ValueError(f"the kernel's /tmp ({self.disk_bytes} bytes) must be smaller than its memory "
                             f"({self.memory_bytes} bytes), which holds it")

    def to_environment(self) -> dict[str, str]:
        return {ENVIRONMENT_VARIABLE: json.dumps(asdict(self))}

    @classmethod
    def from_environment(cls) -> Limits:
        return cls(**json.loads(os.environ[ENVIRONMENT_VARIABLE]))

    def apply(self, sandboxed: bool) -> None:
        """Limit this process and everything it starts.

        The process cap is set only in a sandbox: Linux counts it per user, and outside
        a user namespace of its own the kernel would share the count with every process
        the TA runs. Outside a sandbox there is no tmpfs to hold back memory for.
        """
        _cap(resource.RLIMIT_AS, self.memory_bytes - self.disk_bytes if sandboxed else self.memory_bytes)
        _cap(resource.RLIMIT_CPU, self.cpu_seconds)
        _cap(resource.RLIMIT_FSIZE, self.file_bytes)
        if sandboxed:
            _cap(resource.RLIMIT_NPROC, self.processes)


def _cap(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))
