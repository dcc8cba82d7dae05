"""The policy a course gets from its own notebooks (``policy_course``, ``policy_magics``):
a numpy/matplotlib/pandas course's unchanged release and its students' honest answers are
never held, while what turns text into code, the tests' own tools and this package stay
findings; and this course, which sets its lists, keeps them."""

from __future__ import annotations

import nbformat
import pytest

from autograder.grading.policy import Assignment, PolicyScan
from autograder.grading.policy_course import CourseUse
from autograder.nbgrader_api import course_config
from course import REPO, assignments, source_notebook


def cell(source: str, **marks) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell(source)
    if marks:
        made.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **marks}
    return made


# An instructor's notebook as another course writes it: imports, a magic and a decorator
# in unmarked cells, an HTML cell, a solution that uses numpy and pandas, a hidden test's tool.
SETUP = "%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\nimport pandas as pd"
DECORATOR = ("from functools import wraps\n\ndef logged(f):\n    @wraps(f)\n    def inner(*a):\n"
             "        print(f.__name__)\n        return f(*a)\n    return inner")
HTML = "%%html\n<b>Read this first</b>"
TIMING = "%timeit np.ones(3).sum()"
QUIET = "%%capture\nplt.plot([1, 2])"
SOLUTION = ("def column_mean(df, name):\n    ### BEGIN SOLUTION\n    values = np.asarray(df.query('v > 0')[name])\n"
            "    return float(np.mean(values))\n    ### END SOLUTION")
TEST = "from nose.tools import assert_equal\nassert_equal(column_mean(pd.DataFrame({'v': [1, 2]}), 'v'), 1.5)"
SOURCE = nbformat.v4.new_notebook(cells=[
    cell(SETUP), cell(DECORATOR), cell(HTML), cell(TIMING), cell(QUIET),
    cell(SOLUTION, solution=True, grade_id="mean"),
    cell(TEST, grade=True, grade_id="test_mean", points=1, locked=True),
])
ASSIGNMENT = Assignment(SOURCE)
USE = CourseUse.read([SOURCE])
# Every scan here starts from no list of the course's own: the grader's defaults.
COURSE = PolicyScan(course_use=USE)
STRICT = PolicyScan(course_use=USE, from_course=False)

HONEST = {
    "another numpy function and a submodule":
        "def column_mean(df, name):\n    rng = np.random.default_rng(0)\n    return float(np.linalg.norm(df[name]))",
    "a plot": "fig, ax = plt.subplots()\nax.plot(np.arange(3), np.ones(3))\nplt.show()",
    "a pandas query with a variable and a column": "low = 0\nkept = frame.query('v > @low and `a b` < 3')",
    "a magic whose code is scanned": "%timeit -n 3 np.mean(np.ones(3))",
    "a captured cell": "%%capture printed\nprint(np.ones(2))",
    "the instructor's setup, copied lower down": SETUP,
}
HOSTILE = {
    "a test's tool": ("import nose", "imports nose, which the course does not allow"),
    "this package": ("import autograder.checks", "imports autograder.checks, which the course does not allow"),
    "a query built at run time": ("frame.query(text)", ".query(...) evaluates a text built at run time as code"),
    "a query that reaches a class": ("frame.query('@x.__class__')", "uses the special attribute __class__"),
    "code inside a magic": ("%timeit getattr(np, 'load')", "getattr reaches attributes"),
    "a magic the course does not use": ("%time x = 1", "uses the magic %time"),
    "a capture that rebinds the checks": ("%%capture checks\nprint(1)", "rebinds checks, which the tests use"),
    "a backend that is a module": ("%matplotlib module://helpers", "names no backend the scan knows"),
    "the instructor's HTML magic": ("%%html\n<script>1</script>", "uses the magic %html"),
    "config, which runs its text": ("%config InlineBackend.x = 1", "uses the magic %config"),
    "a shell command": ("!ls", "get_ipython reaches into IPython"),
    "numpy's loader": ("arrays = np.load('x.npy')", "load deserialises objects"),
    "the setup's names rebound": ("np = None", "rebinds np, which the tests use"),
    "an instructor cell changed": (DECORATOR.replace("@wraps(f)", "@wraps(getattr(f, 'x'))"), "getattr"),
}


def scanned(policy: PolicyScan, *sources: str) -> list[str]:
    """The findings in a student's notebook: the instructor's setup cell, then ``sources``."""
    notebook = nbformat.v4.new_notebook(cells=[cell(source) for source in (SETUP, *sources)])
    return policy.findings(notebook, ASSIGNMENT)


def test_the_course_use_is_what_the_cells_students_read_and_the_solutions_use():
    assert USE.modules == {"numpy", "matplotlib", "pandas", "functools"}  # not nose: a test's tool
    assert USE.magics == {"matplotlib", "html", "timeit", "capture"}
    assert {"print", "float"} <= USE.builtins


def test_the_unchanged_release_is_never_held_and_was_held_before():
    release = nbformat.v4.new_notebook(cells=[*(cell(c.source) for c in SOURCE.cells[:5]),
                                              cell("def column_mean(df, name):\n    # YOUR CODE HERE\n"
                                                   "    raise NotImplementedError()", solution=True, grade_id="mean")])
    assert COURSE.findings(release, ASSIGNMENT) == []
    assert PolicyScan().findings(release, Assignment(nbformat.v4.new_notebook())) != []  # without either rule


# Honest answers the grader's defaults allow without the course's use.
WITHOUT_THE_COURSE = ("a pandas query with a variable and a column", "the instructor's setup, copied lower down")


@pytest.mark.parametrize("case", HONEST)
def test_an_honest_answer_in_such_a_course_is_never_held(case):
    assert scanned(COURSE, HONEST[case]) == []
    assert (scanned(STRICT, HONEST[case]) == []) == (case in WITHOUT_THE_COURSE)


@pytest.mark.parametrize("answer, reason", HOSTILE.values(), ids=HOSTILE.keys())
def test_what_turns_text_into_code_or_reaches_the_tests_stays_a_finding(answer, reason):
    found = scanned(COURSE, answer)
    assert any(reason in line for line in found), found


def test_this_course_keeps_its_own_lists_whatever_its_notebooks_use():
    ours = CourseUse.read([nbformat.read(source_notebook(name), as_version=4) for name in assignments()])
    assert "torch" in ours.modules and "autograder" not in ours.modules
    policy = PolicyScan(config=course_config(REPO, {}), course_use=ours)
    assert policy.from_course is False
    probe = ["import copy\nimport torch\nx = copy.deepcopy(torch.zeros(1))", "torch.load('w.pt')", "%timeit 1"]
    assignment = Assignment(nbformat.read(source_notebook(assignments()[0]), as_version=4))
    notebook = nbformat.v4.new_notebook(cells=[cell(source) for source in probe])
    assert policy.findings(notebook, assignment) == PolicyScan(config=course_config(REPO, {})).findings(
        notebook, assignment) != []
