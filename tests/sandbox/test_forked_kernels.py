"""Forked grading kernels: two students graded one after the other by the same process,
so by the same zygote, and nothing the first one's kernel did reaches the second's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import nbformat
import pytest
from traitlets.config import Config

from autograder.preprocessors.guarded_execute import GuardedExecute
from autograder.sandbox import fork_server
from tests.helpers.leftovers import grading_processes

pytestmark = pytest.mark.slow

FIRST_STUDENT = '''\
import os, random, subprocess, sys, threading, time
import torch
open("/tmp/left-in-tmp", "w").write("first")
open("left-in-the-working-folder", "w").write("first")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(4244)"])
torch.add = lambda *args, **kwargs: "first student's add"
print(torch.initial_seed())
torch.manual_seed(1234)
random.seed(1234)
import json as planted
planted.first_student_was_here = True
sys.modules["planted_by_the_first_student"] = planted
threading.Thread(target=time.sleep, args=(4245,), name="first student's thread", daemon=True).start()
print("done")'''

SECOND_STUDENT = '''\
import json, os, random, sys, threading
import torch
sleepers = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if b"sleep(424" in open(f"/proc/{pid}/cmdline", "rb").read():
            sleepers.append(pid)
    except OSError:
        pass
print(json.dumps({
    "tmp": sorted(os.listdir("/tmp")),
    "working folder": sorted(os.listdir(".")),
    "sleepers": sleepers,
    "torch.add": torch.add(torch.ones(1), 1).tolist(),
    "torch seed": torch.initial_seed(),
    "random": random.random(),
    "modules": sorted(name for name in sys.modules if "planted" in name),
    "json": hasattr(json, "first_student_was_here"),
    "threads": sorted(thread.name for thread in threading.enumerate()),
}))'''


def run(code: str, folder) -> list:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    GuardedExecute(config=Config({"GradingSettings": {"sandbox": True}}), timeout=60).preprocess(
        notebook, {"metadata": {"path": str(folder)}})
    return notebook.cells[0].outputs


@pytest.fixture(scope="module")
def second_student_saw(tmp_path_factory) -> Iterator[dict]:
    folder = tmp_path_factory.mktemp("assignment")
    (folder / "data.txt").write_text("given")
    fork_server.stop()
    first = run(FIRST_STUDENT, folder)
    zygote = fork_server.server()
    first_seed, done = first[0]["text"].split()
    assert done == "done", first
    saw = run(SECOND_STUDENT, folder)
    assert fork_server.server() is zygote, "both kernels were forked by the same zygote"
    assert [output.output_type for output in saw] == ["stream"], saw
    yield {**json.loads(saw[0]["text"]), "first student's torch seed": int(first_seed)}
    fork_server.stop()  # no zygote outlives the tests that needed it


def test_files_in_tmp_and_the_working_folder_do_not_reach_the_next_kernel(second_student_saw):
    assert "left-in-tmp" not in second_student_saw["tmp"]
    assert second_student_saw["working folder"] == ["data.txt"]


def test_a_process_left_behind_ends_with_its_kernel(second_student_saw):
    assert second_student_saw["sleepers"] == []
    assert not [command for command in grading_processes() if "sleep(424" in command]


def test_a_monkeypatched_torch_function_does_not_reach_the_next_kernel(second_student_saw):
    assert second_student_saw["torch.add"] == [2.0]


def test_random_states_start_as_in_a_fresh_process(second_student_saw):
    """torch and Python's random seed themselves from the system in every new process:
    so does every fork, whatever the kernel before it did to its generators."""
    assert second_student_saw["torch seed"] not in (1234, second_student_saw["first student's torch seed"])
    assert second_student_saw["random"] != 0.9664535356921388  # what random.seed(1234) draws first


def test_imported_and_changed_modules_do_not_reach_the_next_kernel(second_student_saw):
    assert second_student_saw["modules"] == []
    assert second_student_saw["json"] is False


def test_a_background_thread_does_not_reach_the_next_kernel(second_student_saw):
    assert "first student's thread" not in second_student_saw["threads"]


def test_the_kernels_folders_are_removed(second_student_saw):
    assert list(fork_server.kernels_folder().iterdir()) == []


def test_a_kernel_holds_none_of_its_zygotes_capabilities(tmp_path):
    """The zygote keeps CAP_KILL (its keepers end kernels of other users) and what a kernel's
    set-up needs; student code runs with none of them, in any of its sets."""
    outputs = run('print(open("/proc/self/status").read())', tmp_path)
    sets = dict(line.split(":\t") for line in outputs[0]["text"].splitlines() if line.startswith("Cap"))
    assert sets.keys() == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}, sets
    assert {name: int(value, 16) for name, value in sets.items()} == dict.fromkeys(sets, 0)
