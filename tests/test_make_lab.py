"""`make lab`, started headless the way the README shows, serves the course."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from course import REPO

pytestmark = pytest.mark.slow

TOKEN = "course-test-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


@pytest.fixture
def lab_url():
    port = free_port()
    args = f"--no-browser --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={TOKEN}"
    server = subprocess.Popen(
        ["make", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # so the whole make -> jupyter tree can be stopped
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                get(f"{url}/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None, "make lab exited before serving"
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_lab_serves_lectures_and_student_versions(lab_url):
    status, _ = get(f"{lab_url}/lab")
    assert status == 200
    _, listing = get(f"{lab_url}/api/contents/release/01-inplace-basics")
    names = [entry["name"] for entry in json.loads(listing)["content"]]
    assert "01-inplace-basics.ipynb" in names
    _, lectures = get(f"{lab_url}/api/contents/notebooks")
    assert any(entry["name"].endswith(".ipynb") for entry in json.loads(lectures)["content"])
