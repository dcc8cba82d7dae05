"""Parity with nbgrader: every autograde scenario of nbgrader 0.9.6's own test-suite
(``tests/helpers/parity.py`` lays them out), graded by plain ``nbgrader autograde`` and by our
command on identical courses. Each outcome must be nbgrader's, or a deliberate difference
listed in ``DIFFERENCES`` (and in the table of docs/parity.md, "Where grades differ from
plain nbgrader"), which must really differ from what nbgrader does.

Scenarios of nbgrader's suite that are not here: ``test_help`` (a help text);
``test_missing_assignment`` (tests/grading/test_grading.py: a folder of an assignment the course
does not have is named, and the command exits non-zero); the ``--notebook`` filter
(``test_filter_notebook``, ``test_force_single_notebook``, ``test_update_newer_single_notebook``:
a submission is graded as a whole, its folder regraded when any of its files changes);
``test_no_execute`` and ``--notebook`` (refused: tests/test_course.py); the re-runs of
``test_force``, ``test_force_f`` and ``test_update_newer`` (a folder is regraded when its
files change, or with ``--force``: tests/grading/test_grading.py); ``test_permissions`` with
``groupshared`` and ``test_custom_permissions`` (nbgrader's own writer sets them, and the
default, read-only, is compared here); ``test_many_students`` and
``test_infinite_loop_with_output`` (skipped by nbgrader itself).
"""

from __future__ import annotations

import csv
import io

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.results.records import Records
from autograder.reports.write import write_reports
from tests.helpers.parity import (RELEASED, Scenarios, copies, empty, fixture, graded_both_ways, graded_by_nbgrader,
                                  graded_by_us, late, ours)

pytestmark = pytest.mark.slow

UNCHANGED, CHANGED = fixture("submitted-unchanged.ipynb"), fixture("submitted-changed.ipynb")
# Not nbgrader's: a test that passes only where the kernel sees no notebook (under plain
# nbgrader it sees the graded copies, their hidden tests put back).
NOTHING_VISIBLE = nbformat.writes(new_notebook(cells=[new_code_cell(
    "import glob\nassert glob.glob('*.ipynb') == []",
    metadata={"nbgrader": {"grade": True, "grade_id": "nothing_visible", "locked": True, "points": 1,
                           "schema_version": 3, "solution": False}})])).encode()
# nbgrader's test_late_submission_penalty_plugin: a point an hour, from the course folder.
LATE_PLUGIN = (b"from nbgrader.plugins import BasePlugin\n\n"
               b"class Blarg(BasePlugin):\n"
               b"    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
               b"        return int(total_seconds_late / 3600)\n")

# One course for every scenario that needs no course-wide setting of its own: each is an
# assignment, named after the nbgrader test it ports.
MAIN = Scenarios(
    config=("c.Autograde.exclude_overwriting = {'overwrite_files': ['helper.py'], "
            "'overwrite_files_subdirs': ['subdir/helper.py']}\n"
            "c.ClearSolutions.code_stub = dict(python='# YOUR CODE HERE')\n"
            "c.AssignLatePenalties.plugin_class = 'late_plugin.Blarg'\n"),
    course_files={"autotests.yml": fixture("autotests.yml"), "late_plugin.py": LATE_PLUGIN},
    sources={
        "grade": {"p1.ipynb": UNCHANGED},  # test_grade, test_showtraceback_exploit
        "grade_autotest": {"p1.ipynb": fixture("autotest-simple.ipynb")},
        "grade_hashed_autotest": {"p1.ipynb": fixture("autotest-hashed.ipynb")},
        "grade_complex_autotest": {"p1.ipynb": fixture("autotest-multi.ipynb")},
        "grade_timestamp": {"p1.ipynb": UNCHANGED},  # test_grade_empty_timestamp
        "late_submission_penalty": {"p1.ipynb": UNCHANGED},  # _none, _zero (its second run) and _plugin
        "grade_overwrite_files": {"p1.ipynb": UNCHANGED, "data.csv": b"some,data\n",
                                  "helper.py": b"print('hello!')\n"},
        "grade_overwrite_files_subdirs": {"p1.ipynb": UNCHANGED, "subdir/data.csv": b"some,data\n",
                                          "subdir/helper.py": b"print('hello!')\n"},
        "force": {"p1.ipynb": UNCHANGED, "foo.txt": b"foo", "data/bar.txt": b"bar"},
        "side_effects": {"p1.ipynb": fixture("side-effects.ipynb")},
        "skip_extra_notebooks": {"p1.ipynb": UNCHANGED},
        "hidden_tests_single_notebook": {"p1.ipynb": fixture("test-hidden-tests.ipynb")},
        "hidden_tests_autotest": {"p1.ipynb": fixture("autotest-hidden.ipynb")},
        "handle_failure": {"p1.ipynb": empty(), "p2.ipynb": empty()},
        "missing_source_kernelspec": {"p1.ipynb": empty()},
        "incorrect_submitted_kernelspec": {"p1.ipynb": empty("python")},
        "missing_files": {"p1.ipynb": empty()},
        "grade_missing_notebook": {"p1.ipynb": UNCHANGED, "p2.ipynb": UNCHANGED},
        "grade_with_validating_envvar": {"p1.ipynb": fixture("validating-environment-variable.ipynb")},
        "notebooks_hidden_from_the_kernel": {"p1.ipynb": NOTHING_VISIBLE, "p2.ipynb": NOTHING_VISIBLE},
        "autograde_timeout": {"p1.ipynb": fixture("timeout.ipynb")},
        "infinite_loop": {"p1.ipynb": fixture("infinite-loop.ipynb")},
    },
    submitted={
        ("foo", "grade"): {"p1.ipynb": UNCHANGED},
        ("bar", "grade"): {"p1.ipynb": CHANGED},
        ("spam", "grade"): {"p1.ipynb": fixture("submitted-cheat-attempt.ipynb")},
        ("eggs", "grade"): {"p1.ipynb": fixture("submitted-cheat-attempt-alternative.ipynb")},
        ("foo", "grade_autotest"): {"p1.ipynb": fixture("autotest-simple-unchanged.ipynb")},
        ("bar", "grade_autotest"): {"p1.ipynb": fixture("autotest-simple-changed.ipynb")},
        ("foo", "grade_hashed_autotest"): {"p1.ipynb": fixture("autotest-hashed-unchanged.ipynb")},
        ("bar", "grade_hashed_autotest"): {"p1.ipynb": fixture("autotest-hashed-changed.ipynb")},
        ("foo", "grade_complex_autotest"): {"p1.ipynb": fixture("autotest-multi-unchanged.ipynb")},
        ("bar", "grade_complex_autotest"): {"p1.ipynb": fixture("autotest-multi-changed.ipynb")},
        ("foo", "grade_timestamp"): {"p1.ipynb": UNCHANGED, "timestamp.txt": late(15)},
        ("bar", "grade_timestamp"): {"p1.ipynb": CHANGED, "timestamp.txt": late(13)},
        ("baz", "grade_timestamp"): {"p1.ipynb": UNCHANGED, "timestamp.txt": b""},
        ("qux", "grade_timestamp"): {"p1.ipynb": CHANGED, "timestamp.txt": b"But I want to be a timestamp string :("},
        ("foo", "late_submission_penalty"): {"p1.ipynb": UNCHANGED, "timestamp.txt": late(18)},
        ("late", "late_submission_penalty"): {"p1.ipynb": CHANGED, "timestamp.txt": late(15)},
        ("foo", "grade_overwrite_files"): {"p1.ipynb": UNCHANGED, "timestamp.txt": late(15),
                                           "data.csv": b"some,other,data\n",
                                           "helper.py": b"print('this is different!')\n"},
        ("foo", "grade_overwrite_files_subdirs"): {"p1.ipynb": UNCHANGED, "timestamp.txt": late(15),
                                                   "subdir/data.csv": b"some,other,data\n",
                                                   "subdir/helper.py": b"print('this is different!')\n"},
        ("foo", "force"): {"p1.ipynb": UNCHANGED, "foo.txt": b"foo", "data/bar.txt": b"bar", "blah.pyc": b"asdf"},
        ("foo", "side_effects"): {"p1.ipynb": fixture("side-effects.ipynb")},
        ("foo", "skip_extra_notebooks"): {"p1 copy.ipynb": UNCHANGED, "p1.ipynb": CHANGED},
        ("foo", "hidden_tests_single_notebook"): {"p1.ipynb": RELEASED},
        ("foo", "hidden_tests_autotest"): {"p1.ipynb": fixture("autotest-hidden-unchanged.ipynb")},
        ("bar", "hidden_tests_autotest"): {"p1.ipynb": fixture("autotest-hidden-changed-wrong.ipynb")},
        ("baz", "hidden_tests_autotest"): {"p1.ipynb": fixture("autotest-hidden-changed-right.ipynb")},
        ("bar", "handle_failure"): {"p1.ipynb": empty(), "p2.ipynb": fixture("test.ipynb")},
        ("foo", "handle_failure"): {"p1.ipynb": empty(), "p2.ipynb": empty()},
        ("foo", "missing_source_kernelspec"): {"p1.ipynb": empty("python")},
        ("bar", "missing_source_kernelspec"): {"p1.ipynb": empty("blarg")},
        ("foo", "incorrect_submitted_kernelspec"): {"p1.ipynb": empty("blah")},
        ("foo", "missing_files"): {"p1.ipynb": empty()},
        ("bar", "missing_files"): {},
        ("foo", "grade_missing_notebook"): {"p1.ipynb": CHANGED},
        ("foo", "grade_with_validating_envvar"): {"p1.ipynb": fixture("validating-environment-variable.ipynb")},
        ("foo", "notebooks_hidden_from_the_kernel"): {"p1.ipynb": NOTHING_VISIBLE, "p2.ipynb": NOTHING_VISIBLE},
        ("foo", "autograde_timeout"): {"p1.ipynb": fixture("timeout.ipynb")},  # nbgrader's cell time limit: passes
    },
)

# Where we differ from nbgrader on purpose, each a row of docs/parity.md's table: (student,
# assignment) -> our outcome.
DIFFERENCES = {
    # "files the notebook writes": they stay in its sandbox, never in autograded/.
    ("foo", "side_effects"): {"late": False, "notebooks": {"p1": (0.0, 0.0, False, None)},
                              "files": {"p1.ipynb": "-r--r--r--"}},
    # "the kernel runs beside the submission's notebooks": ours sees none of them.
    ("foo", "notebooks_hidden_from_the_kernel"): {
        "late": False, "notebooks": {"p1": (1.0, 1.0, False, None), "p2": (1.0, 1.0, False, None)},
        "files": {"p1.ipynb": "-r--r--r--", "p2.ipynb": "-r--r--r--"}},
    # "an empty submission folder": zero, named missing; nbgrader skips it without a word.
    ("bar", "missing_files"): {"late": False, "notebooks": {"p1": (0.0, 0.0, False, None)}},
    # "a submission nbgrader fails on before grading it" (here a timestamp.txt that is not
    # a time): in the gradebook, ungraded and marked for manual grading, so the formgrader
    # lists it; nbgrader leaves no trace of it there.
    ("qux", "grade_timestamp"): {"late": False, "notebooks": {"p1": (0.0, 7.0, True, None)}},
}
# "a notebook nbgrader cannot match to the assignment": nbgrader fails the submission (its
# p2 carries grade cells the assignment does not have); ours grades p1, and scores p2 zero,
# named (in this course, as another assignment's notebook: those cells are that one's).
DIFFERENCES[("bar", "handle_failure")] = {"late": False, "files": {"p1.ipynb": "-r--r--r--"},
                                          "notebooks": {"p1": (0.0, 0.0, False, None), "p2": (0.0, 0.0, False, None)}}
FAILED_ONLY_UNDER_NBGRADER = {("bar", "handle_failure")}


def test_every_scenario_of_nbgrader_grades_as_nbgrader_grades_it(tmp_path):
    plain, copy = copies(tmp_path, MAIN)
    (expected, plain_failed), (got, our_failed) = graded_both_ways(plain, copy, [], ours(), parts=2)
    for key, ours_instead in DIFFERENCES.items():
        assert expected.get(key) != ours_instead, f"{key} is listed as a difference but is nbgrader's"
        expected[key] = ours_instead
    assert plain_failed & FAILED_ONLY_UNDER_NBGRADER == FAILED_ONLY_UNDER_NBGRADER
    assert mismatches(got, expected) == {}
    assert our_failed == plain_failed - FAILED_ONLY_UNDER_NBGRADER
    assert expected[("late", "late_submission_penalty")]["notebooks"]["p1"][3] == 1  # an hour late: the plugin's
    # beyond nbgrader's autograde: a feedback page for each notebook graded, a test named with its notebook
    assert [page.name for page in sorted((copy / "feedback" / "foo" / "handle_failure").iterdir())] == [
        "p1.html", "p2.html"]
    assert [page.name for page in (copy / "feedback" / "foo" / "grade_missing_notebook").iterdir()] == ["p1.html"]
    tests = write_reports(copy, Records(copy / "grading" / "records.json")).tests_csv.read_text()
    rows = [row for row in csv.reader(io.StringIO(tests)) if row[:2] == ["foo", "grade_missing_notebook"]]
    assert sorted({row[2].split("/")[0] for row in rows}) == ["p1", "p2"] and all(
        float(row[3]) == 0 for row in rows if row[2].startswith("p2/"))

    # A second run, for one student, with a 2 s cell time limit: test_late_submission_penalty_zero's
    # (no longer late: no penalty), test_autograde_timeout's (a cell past the limit fails)
    # and test_infinite_loop's (the notebook is graded all the same). nbgrader runs it in
    # the whole course (the first run graded copies of its parts), ours where it graded.
    for course in (plain, copy):
        submitted = course / "submitted" / "late"
        (submitted / "late_submission_penalty" / "timestamp.txt").write_bytes(late(14))
        for assignment, notebook in (("autograde_timeout", "timeout.ipynb"), ("infinite_loop", "infinite-loop.ipynb")):
            (submitted / assignment).mkdir()
            (submitted / assignment / "p1.ipynb").write_bytes(fixture(notebook))
    (expected, _), (got, _) = graded_both_ways(plain, copy, ["--student", "late", "--force", "--Execute.timeout=2"],
                                               ours(("late",), force=True, Execute={"timeout": 2}))
    late_ones = {key: outcome for key, outcome in expected.items() if key[0] == "late"}
    assert late_ones == {key: outcome for key, outcome in got.items() if key[0] == "late"}
    assert [late_ones[("late", name)]["notebooks"]["p1"][0] for name in ("autograde_timeout", "infinite_loop")] == [
        0.0, 0.0]
    assert late_ones[("late", "late_submission_penalty")]["notebooks"]["p1"][3] is None


def mismatches(got: dict, expected: dict) -> dict:
    return {key: {"ours": got.get(key), "nbgrader": expected.get(key)}
            for key in got.keys() | expected.keys() if got.get(key) != expected.get(key)}


# Who is graded: excluded students are left alone, unknown ones refused (create_student
# off), and the gradebook is the one configured outside the course, not a stale one in it.
PEOPLE = Scenarios(
    config=("import os\nhere = os.path.dirname(os.path.abspath(__file__))\n"
            "c.CourseDirectory.db_url = 'sqlite:///' + here + '-gradebook.db'\n"
            "c.CourseDirectory.student_id_exclude = 'bar,quux'\n"
            "c.Autograde.create_student = False\n"),
    course_files={"gradebook.db": fixture("gradebook.db")},
    sources={"ps1": {"p1.ipynb": UNCHANGED}},
    submitted={("foo", "ps1"): {"p1.ipynb": UNCHANGED}, ("bar", "ps1"): {"p1.ipynb": CHANGED},
               ("baz", "ps1"): {"p1.ipynb": CHANGED}},
)


def test_excluded_unknown_and_configured_elsewhere_as_under_nbgrader(tmp_path):
    """test_student_id_exclude, test_missing_student, and a gradebook outside the course."""
    plain, copy = copies(tmp_path, PEOPLE)
    (expected, plain_failed), got = graded_both_ways(plain, copy, [], ours())
    assert got == (expected, plain_failed)
    assert set(expected) == {("foo", "ps1")} and plain_failed == {("baz", "ps1")}
    assert (tmp_path / "ours-gradebook.db").is_file()


KERNEL = Scenarios(config="c.ClearSolutions.code_stub = {'python': '## Answer', 'blah': '## Answer'}\n",
                   sources={"ps1": {"p1.ipynb": empty("blah")}}, submitted={("foo", "ps1"): {"p1.ipynb": empty()}})


def test_a_source_whose_kernel_is_not_installed_fails_every_submission_or_is_refused(tmp_path):
    """test_incorrect_source_kernelspec: nbgrader fails each submission; ours refuses the
    course by name before anything runs (docs/parity.md: "a kernel that is not installed")."""
    plain, copy = copies(tmp_path, KERNEL)
    assert graded_by_nbgrader(plain)[1] == {("foo", "ps1")}
    with pytest.raises(SystemExit, match="its kernel 'blah' is not installed"):
        graded_by_us(copy)
