"""The documentation (docs/) is the one prose copy of the threat
model, so the figures and lists its pages quote are checked against the code's own constants
here: a change to a limit or to what the guard restores that the pages do not follow fails
this test."""

from __future__ import annotations

import re
import subprocess

from autograder.grading.pool import AFTER_KERNEL_SECONDS
from autograder.intake.submission_files import MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES
from autograder.sandbox.outputs import MAX_MESSAGE_BYTES, PER_NOTEBOOK, PER_OUTPUT
from autograder.sandbox.guard import GUARDED_MODULES
from autograder.sandbox.limits import GiB, MiB, Limits
from tests.helpers.assignments import REPO



def page(name: str) -> str:
    """A page of docs/ with its line breaks as spaces, so that a sentence reads whole."""
    return " ".join((REPO / "docs" / name).read_text().split())


THREAT_MODEL = page("threat-model.md")


def test_the_kernel_limits_are_the_defaults():
    limits = Limits()
    assert (f"{limits.memory_bytes // GiB} GiB of memory, its `/tmp` included ({limits.disk_bytes // MiB} MiB and "
            f"{limits.files:,} files); {limits.cpu_seconds} s of CPU; {limits.processes} processes and threads; "
            f"{limits.file_bytes // MiB} MiB per file; {limits.cpu_cores:g} core (`cpu_cores`).") in THREAT_MODEL


def test_the_output_and_folder_caps_are_the_codes():
    assert (f"each cut to {PER_OUTPUT // MiB} MiB (in the kernel and again in the grader), counted whole (data, "
            f"text, metadata and every other field), {PER_NOTEBOOK // MiB} MiB per notebook: a notebook that spends "
            f"that is **stopped** there; one message over {MAX_MESSAGE_BYTES // MiB} MiB") in THREAT_MODEL
    assert (f"caps on their entries ({MAX_ENTRIES}), files ({MAX_FILE_BYTES // MiB} MiB each) and size "
            f"({MAX_TOTAL_BYTES // MiB} MiB)") in THREAT_MODEL
    assert AFTER_KERNEL_SECONDS == 120 and \
        "the notebook's time limit, twice where the second witness runs, plus two minutes" in THREAT_MODEL


def test_the_guarded_modules_are_the_guards():
    listed = re.search(r"the functions of these modules: (.*?)\. A cell that must fail", THREAT_MODEL)[1]
    assert re.findall(r"`([\w.]+)`", listed) == list(GUARDED_MODULES)


def test_the_exchange_folder_it_names_is_nbgraders_default():
    from nbgrader.exchange.default.exchange import Exchange

    named = re.search(r"`c\.Exchange\.root` in its nbgrader configuration, `([^`]+)` by default",
                      page("handing-out.md"))
    assert named and named[1] == Exchange.root.default_value


def test_the_ta_commands_run_in_the_courses_environment_as_written(tmp_path):
    """``make export`` runs the grader with the environment's Python (not whatever
    ``python`` a TA's shell finds, which lacks the grader), and the console script the
    TAs' page names instead of ``python -m autograder`` exists there."""
    recipe = subprocess.run(["make", "--no-print-directory", "-n", "-o", "env", "export",
                             f"EXPORT_ARGS=--course {tmp_path}"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    assert recipe == f".venv/bin/python -m autograder export --course {tmp_path}"
    assert "`.venv/bin/python -m autograder ...` (or `.venv/bin/autograder ...`)" in page("teaching-assistants.md")
    assert (REPO / ".venv" / "bin" / "autograder").is_file()
