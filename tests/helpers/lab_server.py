"""Start JupyterLab as docs/index.md says (`make lab` with `LAB_ARGS`) on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tests.helpers.assignments import REPO

TOKEN = uuid.uuid4().hex  # a test process's own: two may serve a lab at once


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


@contextmanager
def running_lab(environment: dict[str, str] | None = None) -> Iterator[str]:
    """``make lab`` headless on 127.0.0.1; yields its base URL and stops the whole tree."""
    port = free_port()
    # On that port or none: Jupyter would move to the next free one, where this test would not look.
    args = (f"--no-browser --port={port} --ServerApp.port_retries=0 --ServerApp.ip=127.0.0.1 "
            f"--IdentityProvider.token={TOKEN}")
    server = subprocess.Popen(
        ["make", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        env={**os.environ, **(environment or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # so the whole make -> jupyter tree can be stopped
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get(f"{url}/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None:
                    raise RuntimeError("make lab exited before serving") from None
                if time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not answer within 60 s") from None
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
