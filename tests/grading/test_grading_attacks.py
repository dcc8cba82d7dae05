"""Hostile submissions, graded sandboxed beside honest ones (the session's ``graded``
demo class): none gains a point it keeps, damages or reads a file outside its own
working folder, reaches the network or leaves a process behind; every attempt is named
for the TA, and what no in-kernel defence can stop is held for review. The plain-nbgrader
side of each attack (that it does work there) is in ``test_nbgrader_autograde.py``."""

from __future__ import annotations

import ast
import os
import re
import shutil
import stat
from html.parser import HTMLParser

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.helpers.attacks import CEILING, FORGED_CELL, FORGERIES, SCORE_ATTACKS
from autograder.cli import demo_course
from autograder.course import Course, split_hidden
from autograder.gradebook import cell_scores
from autograder.preprocessors.hidden_tests import hidden_lines, normalised
from autograder.grading.pipeline import Options, grade_course
from autograder.grading.pool import AFTER_KERNEL_SECONDS
from autograder.status import NOT_GRADED, Status
from autograder.sandbox.outputs import PER_NOTEBOOK
from autograder.sandbox import bwrap, cgroups
from autograder.sandbox.limits import Limits
from tests.conftest import A01, NOTEBOOK_TIMEOUT, fast
from tests.helpers.leftovers import grading_processes
from tests.helpers.assignments import REPO, source_notebook

pytestmark = pytest.mark.slow
MiB = 2**20


def records(graded) -> dict:
    return {record.student: record for record in graded.run.records.all() if record.assignment == A01}


def printed(graded, student: str) -> str:
    """Everything the student's graded notebook printed, and its errors' messages."""
    notebook = nbformat.read(graded.course / "autograded" / student / A01 / f"{A01}.ipynb", as_version=4)
    return "".join(output.get("text", "") + output.get("evalue", "")
                   for cell in notebook.cells for output in cell.get("outputs", []))


def feedback(graded, student: str) -> str:
    return (graded.outputs.feedback / student / A01 / f"{A01}.html").read_text()


def test_grading_ran_sandboxed(graded):
    assert graded.run.unsandboxed_because is None


def test_honest_submissions_graded_beside_attacks_keep_their_scores(graded):
    by_student = {(r.student, r.assignment): r.score for r in graded.run.records.all()}
    assert by_student["all-right", A01] == 10.0 and by_student["partial", A01] == 7.0


@pytest.mark.parametrize("student", sorted(SCORE_ATTACKS))
def test_a_score_attack_gains_nothing_and_is_named(graded, student):
    record = records(graded)[student]
    assert record.score <= 7.0
    assert record.status is Status.TAMPERED or any(p.startswith("put back before test_") for p in record.problems)
    assert record.flags, "the policy scan should name the lines of the attack"


@pytest.mark.parametrize("student", sorted(FORGERIES))
def test_a_forgery_keeps_no_point_and_is_held_with_its_lines(graded, student):
    """Held by the scan; and a test the forgery made pass in its own kernel scores nothing
    where the second witness recorded other values than the reference."""
    record = records(graded)[student]
    assert record.status is Status.HELD and record.flags
    assert record.score <= CEILING[FORGED_CELL[student]]


@pytest.mark.parametrize("student", ["forgery-execute-request", "forgery-singledispatch"])
def test_a_verdict_forged_in_the_kernel_is_named_by_the_second_witness(graded, student):
    """These answer the guard and swallow every error of the tests: the kernel says 10/10.
    The values recorded in a second kernel say otherwise, and the TA reads what differs."""
    witnessed = [flag for flag in records(graded)[student].flags if "second witness" in flag]
    assert witnessed and witnessed[0].startswith(f"{A01}.ipynb: test_add_scaled_ passed in the grading kernel")
    assert "values differ" in witnessed[0]
    assert "WitnessDisagreement" in feedback(graded, student)


def test_honest_notebooks_agree_with_the_second_witness(graded):
    assert graded.run.settings["second witness"].endswith("test cells with a recorder, confirmed in a second kernel "
                                                          "where they pass")
    for student in ("all-right", "partial"):
        assert not [flag for record in graded.run.records.all() if record.student == student
                    for flag in record.flags], student


def test_an_error_hidden_during_a_test_fails_that_test(graded):
    """Hiding the error and undoing the hiding before the guard looks leaves the test
    without its closing line: it fails, whatever the display showed."""
    record = records(graded)["forgery-self-restoring-display"]
    assert "test_add_scaled_ stopped before its end without showing an error (an error was hidden?)" in record.problems


def test_held_and_ungraded_notebooks_are_marked_for_manual_grading_in_nbgrader(graded):
    """Held ones keep their score; those that could not be graded are left ungraded, as
    nbgrader leaves the submissions it fails on."""
    with Gradebook(Course(graded.course).gradebook_url) as gradebook:
        marked = {student for student in records(graded)
                  if gradebook.find_submission(A01, student).needs_manual_grade}
    held = {student for student, record in records(graded).items() if record.flags}
    ungraded = {student for student, record in records(graded).items() if record.status in NOT_GRADED}
    assert marked == held | ungraded
    assert {"forgery-execute-request", "invalid-json"} <= marked and "all-right" not in marked


def test_hijacking_during_a_test_scores_the_notebook_as_tampered(graded):
    record = records(graded)["attack-during-a-test"]
    assert record.status is Status.TAMPERED
    assert record.detail.startswith("while test_add_scaled_ ran, the notebook changed ")
    assert "shell.showtraceback" in record.detail


@pytest.mark.parametrize(("student", "event"), [("attack-audit-hook", "sys.addaudithook"),
                                                ("attack-ctypes", "ctypes.")])
def test_what_cannot_be_undone_scores_the_notebook_as_tampered(graded, student, event):
    record = records(graded)[student]
    assert record.status is Status.TAMPERED and f"audit event {event}" in record.detail


def test_no_file_outside_the_kernels_own_folder_changed_or_was_read(graded):
    assert graded.changed_files == []
    assert graded.victim == ("private", 0o600)
    # The file attack finds nothing of the course; what it damages is its own copy.
    damaged = ast.literal_eval(printed(graded, "attack-files").split("damaged: ")[1].splitlines()[0])
    assert all(path.startswith(bwrap.WORKDIR + "/") for path in damaged), damaged


def test_links_the_kernel_plants_lead_the_grader_nowhere(graded):
    assert int(printed(graded, "attack-kernel-links").split("links made:")[1]) > 50
    for step in ("autograded", "feedback"):
        folder = graded.course / step / "attack-kernel-links" / A01
        assert [path.name for path in folder.iterdir()] == [f"{A01}.{'ipynb' if step == 'autograded' else 'html'}"]
        assert not any(path.is_symlink() for path in folder.iterdir())
    graded_notebook = graded.course / "autograded" / "attack-kernel-links" / A01 / f"{A01}.ipynb"
    assert "BEGIN SOLUTION" not in graded_notebook.read_text()


def test_nothing_reached_the_network(graded):
    assert graded.connections == []
    assert "reached: []" in printed(graded, "attack-network")


def test_no_process_or_kernel_folder_outlives_its_grading(graded):
    assert "left two sleepers behind" in printed(graded, "attack-processes")
    assert graded.surviving_processes == [] == grading_processes()
    assert graded.leftover_folders == []


def test_memory_beyond_the_cap_is_refused(graded):
    assert "allocation refused" in printed(graded, "attack-memory")


def test_files_in_tmp_and_memory_together_stay_under_the_memory_cap(graded):
    output = printed(graded, "attack-tmpfs-fill")
    in_tmp = int(re.search(r"/tmp refused after (\d+) MiB", output)[1])
    in_all = int(re.search(r"held in all: (\d+) MiB", output)[1])
    assert in_tmp <= Limits.disk_bytes // MiB < in_all <= Limits.memory_bytes // MiB


def test_the_number_of_files_is_capped(graded):
    made = int(re.search(r"files refused after (\d+)", printed(graded, "attack-many-files"))[1])
    assert 0 < made < Limits.files


def test_the_fork_bomb_meets_the_process_cap(graded):
    output = printed(graded, "attack-fork-bomb")
    assert "fork refused: BlockingIOError" in output
    assert int(output.split("children:")[1].split()[0]) < Limits.processes


def test_an_output_flood_is_cut_on_its_way_and_costs_no_time(graded):
    record = records(graded)["attack-output-flood"]
    graded_notebook = graded.course / "autograded" / "attack-output-flood" / A01 / f"{A01}.ipynb"
    assert graded_notebook.stat().st_size < PER_NOTEBOOK + MiB
    assert len(feedback(graded, "attack-output-flood")) < PER_NOTEBOOK + 2 * MiB
    assert "[output cut: it was 300," in printed(graded, "attack-output-flood")
    assert record.seconds < 60


def test_every_job_finished_within_its_deadline(graded):
    assert max(record.seconds for record in graded.run.records.all()) < NOTEBOOK_TIMEOUT + AFTER_KERNEL_SECONDS


def test_leaked_hidden_tests_are_cut_from_feedback_however_they_are_dressed(graded):
    """The leak reaches the graded notebook (a kernel cannot stop it), not the student:
    neither verbatim (frame inspection), nor as an SVG drawing, ANSI-interleaved text or
    HTML entities (IPython's history)."""
    assert "### BEGIN HIDDEN TESTS" in printed(graded, "attack-print-hidden-tests")
    source = nbformat.read(source_notebook(A01), as_version=4)
    delimiters = Course(graded.course).hidden_delimiters
    code = [cell.source for cell in source.cells if cell.cell_type == "code"]
    hidden = set().union(*(hidden_lines(cell, delimiters) for cell in code))
    public = {normalised(line) for cell in code for line in split_hidden(cell, delimiters)[0]}
    hidden = {line for line in hidden - public if len(line) > 25}
    for student in ("attack-print-hidden-tests", "attack-history-leak", "attack-joiner-leak"):
        page = normalised(feedback(graded, student))
        assert not [line for line in hidden if line in page], student
    assert "an output that showed the hidden tests was removed" in feedback(graded, "attack-history-leak")


class _Scripts(HTMLParser):
    """The scripts, event handlers and javascript: links of a page."""

    def __init__(self, page: str):
        super().__init__()
        self.found: list[str] = []
        self._in_script = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        if tag == "script":
            self.found.append(f"script src={dict(attrs).get('src')}")
        self.found += [f"{tag} {name}" for name, value in attrs
                       if name.startswith("on") or "javascript:" in (value or "").lower()]

    def handle_data(self, data):
        if self._in_script:
            self.found.append(data.strip())
            self._in_script = False


def test_feedback_runs_no_script_a_notebook_made(graded):
    """Scripts, event handlers and javascript: links in Markdown, HTML, SVG and JavaScript
    outputs: none is left on the page (the code that made them is shown, as text)."""
    honest = _Scripts(feedback(graded, "partial")).found
    assert honest and all("mathjax" in found.lower() or found in ("", "script src=None") for found in honest)
    assert _Scripts(feedback(graded, "attack-script-outputs")).found == honest


def test_the_report_lists_the_held_notebooks_and_their_lines(graded):
    report = graded.outputs.report.read_text()
    assert "Code to read" in report and "ast_transformers reaches into IPython or the kernel" in report
    assert "forgery-execute-request" in report and "held for review" in report


def test_unsandboxed_grading_agrees_and_says_so(graded, tmp_path):
    students = ("all-right", "partial")
    course = demo_course(REPO, tmp_path / "course")
    for folder in course.glob("submitted/*/*"):
        if folder.name != A01:  # one assignment is enough to compare, and saves a minute
            shutil.rmtree(folder)
    with pytest.warns(UserWarning, match="grading UNSANDBOXED"):
        run = grade_course(course, Options(students=students, **fast(sandbox=False)))
    assert run.unsandboxed_because == "the sandbox was switched off (GradingSettings.sandbox, --no-sandbox)"
    sandboxed = {key: score for key, score in cell_scores(Course(graded.course)).items() if key[0] in students}
    sandboxed = {key: score for key, score in sandboxed.items() if key[1] == A01}
    assert cell_scores(Course(course)) == sandboxed and len(sandboxed) == 6


def test_the_kernel_cannot_open_its_own_memory(graded):
    output = printed(graded, "attack-proc-self-mem")
    assert "/proc/self/mem r+b refused: PermissionError" in output
    if os.geteuid() == 0:  # a root grader's kernel is another user, not dumpable: not even for reading
        assert "/proc/self/mem rb refused: PermissionError" in output


@pytest.mark.skipif(cgroups.support().version is None, reason="no control groups on this host")
def test_processes_of_a_kernel_share_its_memory_and_its_core(graded):
    # Caught by the attack, or (when a second worker is killed while the first failure is
    # handled: DataLoader raises from its SIGCHLD handler, wherever the kernel is) shown.
    stopped = printed(graded, "attack-dataloader-memory")
    killed = re.search(r"DataLoader worker \(pid \d+\) is killed by signal: Killed", stopped)
    assert "dataloader stopped:" in stopped or killed
    spin = float(re.search(r"cpu per wall second: ([\d.]+)", printed(graded, "attack-cpu-spin"))[1])
    assert spin <= 1.3


def test_shared_memory_keyrings_and_user_namespaces_are_refused(graded):
    assert "shmget 512 MiB: -1 22" in printed(graded, "attack-shared-memory")
    assert "add_key: -1 1" in printed(graded, "attack-keyring")
    unshare = printed(graded, "attack-user-namespace")
    assert "unshare:" in unshare and "unshare: 0" not in unshare and "mounted" not in unshare


def test_metadata_counts_against_the_output_budget(graded):
    """Each 48 MiB of metadata is cut in the kernel, before it is sent: the worker never holds it."""
    graded_notebook = graded.course / "autograded" / "attack-display-metadata" / A01 / f"{A01}.ipynb"
    assert graded_notebook.stat().st_size < MiB
    assert "[output cut: it was 50,331," in graded_notebook.read_text()


def test_no_kernel_holds_a_grader_file_and_the_logs_stay_small(graded):
    """29 MB and escape codes written to its standard error: a pipe the worker reads with a
    cap, never the log itself (the notebook, whose output that is too, is stopped at its
    output budget when the flood reaches the grader before its last cell ends)."""
    record = records(graded)["attack-log-descriptor"]
    assert record.flags  # held, whether its flood reached the budget before its last cell ended or not
    logs = list((graded.course / "grading" / "scratch" / "logs").rglob("*.log"))
    assert logs and all(stat.S_IMODE(log.stat().st_mode) == 0o600 for log in logs)
    assert sum(log.stat().st_size for log in logs) < 4 * MiB
    assert not any(b"\x1b]0;owned" in log.read_bytes() for log in logs)


@pytest.mark.parametrize("student", ["attack-collect-env-shell", "forgery-walrus-builtin", "attack-dataloader-memory"])
def test_text_to_code_paths_and_rebound_builtins_are_held(graded, student):
    assert records(graded)[student].status is Status.HELD and records(graded)[student].flags


def test_a_raw_cell_shows_on_the_feedback_page_as_text(graded):
    page = feedback(graded, "attack-raw-banner")
    assert '<div class="banner"' not in page and "10/10: all hidden tests passed" in page
