"""The TA's grading command end to end, on the bundled demo class: every situation gets
its status and score, nothing is lost or graded twice, and feedback hides hidden tests."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.cli import demo_course
from autograder.course import DEMO_CLASS
from autograder.course import Course
from autograder.gradebook import cell_scores
from autograder.grading.pipeline import Options, grade_course
from tests.helpers.attacks import (
    AFTER_THE_TESTS, CEILING, FORGED_CELL, FORGERIES, HARM_ATTACKS, IN_THE_SOLUTION, SCORE_ATTACKS, UNDOABLE_ATTACKS,
)
from tests.conftest import A01, CELL_TIMEOUT, ODD_NAMES, TRANSLATED_STUDENTS, fast
from tests.helpers.assignments import REPO, assignments, graded_functions, total_points
from tests.helpers.report_html import Page

pytestmark = pytest.mark.slow


# (student, assignment) -> (status, score): one row per situation of the demo class
TOTALS = {assignment: total_points(assignment) for assignment in assignments()}  # a new question counts
EXPECTED = {
    **{("all-right", a): ("graded", total) for a, total in TOTALS.items()},
    **{("unanswered", a): ("graded", 0.0) for a in TOTALS},
    ("partial", "01-inplace-basics"): ("graded", 7.0),
    ("partial", "02-autograd-safety"): ("graded", 5.0),
    ("partial", "03-no-grad-init"): ("graded", 5.0),
    ("partial", "04-ema"): ("graded", 5.0),
    ("partial", "05-residuals"): ("graded", 0.0),
    ("partial", "06-diagnose-and-measure"): ("graded", 15.0),
    ("renamed-notebook", A01): ("graded", 10.0),
    ("extra-files", A01): ("graded", 10.0),
    ("huge-output", A01): ("graded", 10.0),
    ("missing-notebook", A01): ("missing notebook", 0.0),
    ("invalid-json", A01): ("unreadable notebook", 0.0),
    ("empty-notebook", A01): ("empty notebook", 0.0),
    ("other-assignment", A01): ("notebook from another assignment", 0.0),
    ("infinite-loop", A01): ("timed out", 7.0),
    ("kernel-dies", A01): ("held for review", 0.0),  # it kills its kernel with os._exit
    ("unknown-folder", "99-not-an-assignment"): ("not an assignment of this course", 0.0),
    ("slow-notebook", A01): ("graded", 10.0),
    ("split-cells", A01): ("graded", 10.0),
    ("duplicated-cells", A01): ("graded", 10.0),
    ("deleted-test-cell", A01): ("graded", 10.0),
    ("cleared-metadata", A01): ("graded", 10.0),
    ("corrupted-metadata", A01): ("graded", 10.0),
    ("stray-flags", A01): ("graded", 10.0),
    ("extra-graded-cell", A01): ("graded", 10.0),
    # Each attack is the partial notebook (7 points) plus one cell: none may gain a point,
    # and every one that reaches for what honest code never needs is held for review.
    **{(student, A01): ("held for review", 7.0) for student in SCORE_ATTACKS if student not in IN_THE_SOLUTION},
    # Tampering that the guard can only detect scores zero.
    **{(student, A01): ("tampered with grading", 0.0) for student in [*IN_THE_SOLUTION, *UNDOABLE_ATTACKS]},
    **{(student, A01): ("held for review", 7.0) for student in HARM_ATTACKS if student != "attack-memory"},
    ("attack-memory", A01): ("graded", 7.0),
    # A Korean and a Japanese student: graded as the English notebook they translate.
    ("korean-partial", A01): ("graded", 7.0),
    ("japanese-all-right", A01): ("graded", 10.0),
    # The forgeries score what their wrong answer is worth, those that forge the kernel's
    # verdict included (the second witness records other values than the reference), and
    # are held for review with the lines that do it.
    **{(student, A01): ("held for review", CEILING[FORGED_CELL[student]]) for student in FORGERIES},
    # What goes after the machine once the tests ran reaches for what honest code never
    # needs (the kernel, files, processes, ctypes): held; what only prints and displays is graded.
    **{(student, A01): ("held for review", 7.0) for student in AFTER_THE_TESTS},
    **{(student, A01): ("graded", 7.0) for student in
       ("attack-output-flood", "attack-script-outputs", "attack-display-metadata", "attack-raw-banner")},
    # Its standard error, which ipykernel forwards, spends its output budget: stopped there
    # (``TIMING_DEPENDENT`` says what else may happen).
    ("attack-log-descriptor", A01): ("held for review", 0.0),
    # Symbolic links to the instructor's notebook and folder are never followed, nor are
    # links and named pipes beside a notebook.
    ("attack-symlinked-notebook", A01): ("missing notebook", 0.0),
    ("attack-symlinked-folder", A01): ("submission refused", 0.0),
    ("attack-special-files", A01): ("graded", 7.0),
    # Any folder name is graded under its name, or refused as a whole with the reason.
    **{(name, A01) if status == "graded" else (name, "*"): (status, 10.0 if status == "graded" else 0.0)
       for name, status in ODD_NAMES.items()},
}


# Outcomes that depend on the machine's load, each as safe as the expected one. ipykernel
# forwards what a kernel writes to its file descriptor 2 from a thread of its own: on a
# loaded machine the 29 MB may not all have reached the grader before the notebook's last
# cell ends, and the notebook is then graded (held, 7 of its 7 honest points) instead of
# stopped at its output budget.
TIMING_DEPENDENT = {("attack-log-descriptor", A01): {("held for review", 0.0), ("held for review", 7.0)}}


def test_every_folder_has_its_status_and_score(graded):
    run = graded.run
    got = {(r.student, r.assignment): (r.status.value, r.score) for r in run.records.all()}
    for key, allowed in TIMING_DEPENDENT.items():
        if got.get(key) in allowed:
            got[key] = EXPECTED[key]
    assert got == EXPECTED


def test_a_translated_notebook_grades_exactly_as_the_english_one(graded):
    """Language-blind: each test cell of a Korean or Japanese student scores what it scores
    for the English student whose notebook it translates, with nothing to repair or hold;
    the checks' messages in its feedback are in the student's language."""
    scores = cell_scores(Course(graded.course))
    records = {r.student: r for r in graded.run.records.all()}
    for student, (_, english) in TRANSLATED_STUDENTS.items():
        theirs = {key[1:]: score for key, score in scores.items() if key[0] == student}
        assert theirs and theirs == {key[1:]: score for key, score in scores.items()
                                     if key[0] == english and key[1] == A01}
        assert records[student].problems == []
    # the checks speak the student's language in the feedback: partial's add_scaled_ returns a new tensor
    pages = {student: (graded.course / "feedback" / student / A01 / f"{A01}.html").read_text()
             for student in ("partial", "korean-partial")}
    assert "returned a new tensor" in pages["partial"] and "returned a new tensor" not in pages["korean-partial"]
    assert not re.search("[\uac00-\ud7a3]", pages["partial"]) and re.search("[\uac00-\ud7a3]", pages["korean-partial"])


def test_every_repair_and_oddity_is_named(graded):
    run = graded.run
    problems = {r.student: r.problems for r in run.records.all()}
    assert problems["renamed-notebook"] == [f"renamed notebook: {A01} (1).ipynb graded as {A01}.ipynb"]
    assert problems["extra-files"] == [
        "extra notebook ignored: scratch.ipynb",
        "files the assignment does not declare, not given to the notebook: notes.txt",
    ]
    assert problems["split-cells"] == ["cell add_scaled appeared 2 times: graded the one that matches"]
    assert problems["duplicated-cells"] == ["cell test_add_scaled appeared 2 times: graded the one that matches"]
    assert problems["deleted-test-cell"] == ["restored the deleted test cell test_shares_storage"]
    assert problems["corrupted-metadata"] == ["removed malformed nbgrader metadata from a cell",
                                              "restored the nbgrader metadata of 1 cells: add_scaled_"]
    assert problems["cleared-metadata"][0].startswith("restored the nbgrader metadata of 12 cells")
    assert problems["all-right"] == []
    assert problems["attack-symlinked-notebook"] == [
        f"{A01}.ipynb: symbolic link ignored (points to ../../../source/{A01}/{A01}.ipynb)"]
    assert problems["attack-special-files"] == [
        "blocks.ipynb: named pipe ignored",
        "grades.db: symbolic link ignored (points to ../../../gradebook.db)",
        "mem: symbolic link ignored (points to /proc/self/mem)",
    ]
    assert problems["stray-flags"] == [
        "put back the released nbgrader marks of 3 cells: test_add_scaled, test_add_scaled_, test_shares_storage"]
    assert problems["extra-graded-cell"] == [
        "removed the nbgrader marks of a cell the assignment does not have: my_bonus"]


def test_csvs_and_report_are_written(graded):
    run, outputs = graded.run, graded.outputs
    grades = outputs.grades_csv.read_text()
    assert "all-right" in grades and "kernel-dies" in grades
    rows = outputs.tests_csv.read_text().splitlines()
    assert rows[0] == '"student","assignment","test","score","max_score"'
    assert '"all-right","05-residuals","test_residual","10.0","10.0"' in rows
    report = outputs.report.read_text()
    assert report.count("data:image/svg+xml;base64,") == 2
    for record in run.records.all():
        assert record.student in report
    # Every folder once in the headline; a link to every feedback page and to nothing else;
    # every folder without a page listed, with its reason.
    page, records = Page(report), run.records.all()
    assert sum(outputs.counts.values()) == int(page.rows("outcomes")[-1][1]) == len(records)
    assert page.paragraphs["sandbox"]["attrs"]["class"] == "sandboxed"
    linked = {(outputs.report.parent / unquote(href)).resolve()
              for row in page.tables["students"] for cell in row for href, _ in cell["links"]}
    assert linked == {path.resolve() for path in outputs.feedback.rglob("*.html")}
    without = {(row[0]["text"], row[1]["text"]): row[3]["text"] for row in page.tables["without-feedback"][1:]}
    assert set(without) == {(record.student, record.assignment) for record in records
                            if not any((outputs.feedback / record.student / record.assignment).glob("*.html"))}
    assert all(without.values())


def test_feedback_never_shows_hidden_tests(graded):
    outputs = graded.outputs
    pages = list(outputs.feedback.rglob("*.html"))
    graded_notebooks = {path.parent for path in (graded.course / "autograded").glob("*/*/*.ipynb")}
    assert {page.parent.relative_to(outputs.feedback) for page in pages} == {
        folder.relative_to(graded.course / "autograded") for folder in graded_notebooks}
    assert pages
    released = "\n".join(cell.source for path in (REPO / "release").glob("*/*.ipynb")
                          for cell in nbformat.read(path, as_version=4).cells)  # what students see anyway
    secret_lines = {
        line.strip()
        for function in graded_functions()
        for line in function.hidden_tests.splitlines()
        if len(line.strip()) > 25 and line.strip() not in function.visible_tests and line.strip() not in released
    }
    for page in pages:
        text = page.read_text()
        submitted = graded.course / "submitted" / page.parent.parent.name / page.parent.name
        notebooks = [path for path in submitted.glob("*.ipynb") if path.is_file() and not path.is_symlink()]
        if "HIDDEN TESTS" not in "".join(path.read_text() for path in notebooks):
            assert "HIDDEN TESTS" not in text  # the marker itself, unless the student's own code says it
        leaked = [line for line in secret_lines if line in text]
        assert not leaked, f"{page} shows hidden test lines: {leaked[:3]}"


def test_a_rerun_grades_nothing_and_force_regrades_one_student(graded):
    course, run = graded.course, graded.run
    again = grade_course(course, Options(**fast()))
    assert again.graded_now == []
    assert [r.score for r in again.records.all()] == [r.score for r in run.records.all()]
    forced = grade_course(course, Options(force=True, students=("renamed-notebook",), **fast()))
    assert forced.graded_now == [f"renamed-notebook/{A01}"]


def test_a_fixed_hidden_test_regrades_exactly_its_assignment(tmp_path):
    """Mid-term, the instructor makes a hidden test of 02 stricter (here: one that no
    answer passes). The next run, without --force, puts the new test in the gradebook and
    regrades every submission of 02 and nothing else. A change nbgrader cannot make to an
    assignment with submissions (a new graded cell) stops the run with the reason and
    leaves the gradebook as it was. Neither touches release/, the instructor's."""
    course = demo_course(REPO, tmp_path / "course")
    a02 = "02-autograd-safety"
    for folder in course.glob("submitted/*/*"):
        if folder.parent.name not in ("all-right", "partial") or folder.name not in (A01, a02):
            shutil.rmtree(folder)
    shutil.copytree(REPO / "release", course / "release")
    released = folder_bytes(course / "release")
    first = grade_course(course, Options(**fast()))
    assert len(first.graded_now) == 4 and first.records.get("all-right", a02).score == 10.0
    source = Course(course).notebook("source", a02)
    notebook = nbformat.read(source, as_version=4)
    test_cell = next(cell for cell in notebook.cells if "### END HIDDEN TESTS" in cell.source)
    test_cell.source = test_cell.source.replace("### END HIDDEN TESTS", "assert False, 'fixed'\n### END HIDDEN TESTS")
    nbformat.write(notebook, source)
    fixed = grade_course(course, Options(**fast()))
    assert sorted(fixed.graded_now) == [f"all-right/{a02}", f"partial/{a02}"]
    points = test_cell.metadata.nbgrader.points
    assert fixed.records.get("all-right", a02).score == 10.0 - points
    assert fixed.records.get("all-right", A01).score == 10.0
    assert grade_course(course, Options(**fast())).graded_now == []

    before = (course / "gradebook.db").read_bytes()
    notebook.cells.append(nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "test_new", "schema_version": 3}}))
    nbformat.write(notebook, source)
    with pytest.raises(SystemExit, match=f"source/{a02} changed, and nbgrader cannot update the gradebook"):
        grade_course(course, Options(**fast()))
    assert (course / "gradebook.db").read_bytes() == before
    assert folder_bytes(course / "release") == released


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_a_broken_grading_kernel_stops_the_run_before_anyone_gets_a_zero(tmp_path):
    """A memory limit no Python starts in: no kernel can become ready. The trial (the
    released notebook, graded first) fails, so the command stops with the cause and a
    non-zero exit, and nothing of the class is recorded or scored."""
    course = demo_course(REPO, tmp_path / "course")
    for folder in course.glob("submitted/*"):
        if folder.name not in ("all-right", "partial"):
            shutil.rmtree(folder)
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--course", str(course), "--quiet", "--assignment", A01,
         "--memory-limit", "0.03", "--disk-limit", "1"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert ("the grading kernel does not work, so nothing was graded or changed: the released notebook of "
            f"{A01}, graded as a submission, came out 'grader error': a grading kernel never became ready") \
        in done.stderr
    assert not (course / "grading" / "records.json").exists()
    with Gradebook(Course(course).gradebook_url) as gradebook:
        assert [submission for assignment in gradebook.assignments for submission in assignment.submissions] == []


def test_serial_and_parallel_runs_give_identical_gradebooks(graded, tmp_path):
    parallel_course = graded.course
    course = demo_course(REPO, tmp_path / "serial")
    students = ("huge-output", "infinite-loop", "renamed-notebook")
    grade_course(course, Options(students=students, **fast(workers=1)))
    serial = cell_scores(Course(course))
    parallel = {key: score for key, score in cell_scores(Course(parallel_course)).items() if key[0] in students}
    assert serial == parallel and serial


def test_an_interrupted_run_loses_nothing_and_grades_nothing_twice(tmp_path):
    course = demo_course(REPO, tmp_path / "course")
    for student in course.glob("submitted/*"):
        if student.name != "all-right":
            shutil.rmtree(student)
    records = course / "grading" / "records.json"
    command = [sys.executable, "-m", "autograder", "grade", "--course", str(course), "--quiet",
               "--workers", "2", "--cell-timeout", str(CELL_TIMEOUT)]
    first = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not records.exists() or len(json.loads(records.read_text())) < 2):
        time.sleep(0.2)
    first.kill()
    first.wait()
    done_before = {f"{r['student']}/{r['assignment']}" for r in json.loads(records.read_text())}
    assert 2 <= len(done_before) < len(TOTALS), done_before
    rerun = grade_course(course, Options(**fast()))
    assert not set(rerun.graded_now) & done_before
    assert {r.assignment: r.score for r in rerun.records.all()} == TOTALS


def test_an_lms_zip_is_collected_and_graded_and_its_attacks_come_to_nothing(tmp_path):
    """A download with honest files, a stray file, and three attacks: a nested zip that
    submits for another student, a student id that forges rows of grades.csv, and an
    older duplicate. The honest ones are graded; the attacks are named and gain nothing."""
    course = demo_course(REPO, tmp_path / "course")
    shutil.rmtree(course / "submitted")
    demo = DEMO_CLASS
    right, partial = (demo / name / A01 / f"{A01}.ipynb" for name in ("all-right", "partial"))
    inner = tmp_path / "inner.zip"
    with zipfile.ZipFile(inner, "w") as bundle:
        bundle.write(right, f"carol_1003_5553_{A01}.ipynb")
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(right, f"ada_1001_5551_{A01}.ipynb")
        bundle.write(partial, f"bo_late_1002_5552_{A01}-1.ipynb")
        bundle.write(partial, "README-from-the-lms.ipynb")
        bundle.write(inner, "mallory_1004_5554_extra.zip")
        bundle.writestr(zipfile.ZipInfo(f'eve\n"forged",10.0,_1005_5555_{A01}.ipynb'), right.read_bytes())
        bundle.writestr(zipfile.ZipInfo(f"ada_1001_5550_{A01}.ipynb", date_time=(2020, 1, 1, 0, 0, 0)),
                        partial.read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--course", str(course), "--zip", str(archive),
         "--assignment", A01, "--quiet", "--cell-timeout", str(CELL_TIMEOUT)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not imported: README-from-the-lms.ipynb: its name does not fit --zip-pattern" in done.stdout
    assert "not imported: mallory_1004_5554_extra.zip: an archive inside the archive is not unpacked" in done.stdout
    assert 'eve\\n"forged",10.0,_1005_5555' in done.stdout  # named, with its newline shown, not obeyed
    assert f"ada_1001_5550_{A01}.ipynb: an older file of ada" in done.stdout
    records = {r["student"]: r for r in json.loads((course / "grading" / "records.json").read_text())}
    assert set(records) == {"ada", "bo"}
    assert (records["ada"]["status"], records["ada"]["score"]) == ("graded", 10.0)
    assert (records["bo"]["status"], records["bo"]["score"]) == ("graded", 7.0)
    assert records["bo"]["problems"] == [f"renamed notebook: {A01}-1.ipynb graded as {A01}.ipynb"]
    with (course / "grades.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert sorted((row["student_id"], row["score"]) for row in rows if row["assignment"] == A01) == [
        ("ada", "10.0"), ("bo", "7.0")]


def test_a_notebook_past_its_wall_clock_limit_scores_zero(tmp_path):
    """Every cell of slow-notebook is under the cell timeout; together they are not."""
    course = demo_course(REPO, tmp_path / "course")
    run = grade_course(course, Options(students=("slow-notebook",), **fast(workers=1, notebook_timeout=8)))
    got = {(r.student, r.assignment): (r.status.value, r.score) for r in run.records.all()}
    assert got == {("slow-notebook", A01): ("stopped at the time limit", 0.0)}
    assert not (course / "autograded" / "slow-notebook").exists()
