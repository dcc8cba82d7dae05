"""The policy a course gets from its own notebooks (``policy.course_use``, ``policy.magics``):
a numpy/matplotlib/pandas course's unchanged release and its students' honest answers are
never held, while what turns text into code, the tests' own tools and this package stay
findings; and this course, which sets its lists, keeps them."""

from __future__ import annotations

import copy

import nbformat
import pytest

from autograder.policy.scan import Assignment, PolicyScan, instructor_facts
from autograder.policy.course_use import CourseUse
from autograder.nbgrader_api import course_config
from tests.helpers.assignments import REPO, assignments, source_notebook


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
# The instructor's module beside the notebook, which imports what students may not.
HELPERS = b"import os\n\ndef scale(x):\n    return 2 * x\n"
USE = CourseUse.read([SOURCE], {"helpers.py": HELPERS})
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
    "a query whose columns have built-ins' names": "kept = prices.query(\"close > open and type == 'a'\")",
    "a capture with its options after its variable": "%%capture out --no-stderr\nprint(1)",
    "the other timing magic": "%time np.ones(3)",
    "functions, names and lambdas given to agg and apply":
        "def double(x):\n    return 2 * x\nframe.agg(['sum', 'mean'])\nframe.apply(np.sqrt)\nframe.apply(double)\n"
        "frame.apply(lambda row: row.v * 2, axis=1)",
    "the instructor's module": "import helpers\nhelpers.scale(2)",
    "a built-in type's method given to apply": "lower = frame['name'].apply(str.lower)",
    "a copy of a visible test's assertion": "np.testing.assert_allclose(column_mean(frame, 'v'), 1.5)",
    "warnings switched off": "import warnings\nwarnings.filterwarnings('ignore')",
}
HOSTILE = {
    "a test's tool": ("import nose", "imports nose, which the course does not allow"),
    "this package": ("import autograder.checks", "imports autograder.checks, which the course does not allow"),
    "a query built at run time": ("frame.query(text)", ".query(...) evaluates a text built at run time as code"),
    "a query that reaches a class": ("frame.query('@x.__class__')",
                                     "evaluates a text that uses the special attribute __class__"),
    "code inside a magic": ("%timeit getattr(np, 'load')", "getattr reaches attributes"),
    "a magic the course does not use": ("%prun x = 1", "uses the magic %prun"),
    "a capture that rebinds the checks": ("%%capture checks\nprint(1)", "rebinds checks, which the tests use"),
    "a backend that is a module": ("%matplotlib module://helpers", "names no backend the scan knows"),
    "the instructor's HTML magic": ("%%html\n<script>1</script>", "uses the magic %html"),
    "config, which runs its text": ("%config InlineBackend.x = 1", "uses the magic %config"),
    "a shell command": ("!ls", "get_ipython reaches into IPython"),
    "numpy's loader": ("arrays = np.load('x.npy')", "load deserialises objects"),
    "the setup's names rebound": ("np = None", "rebinds np, which the tests use"),
    "an instructor cell changed": (DECORATOR.replace("@wraps(f)", "@wraps(getattr(f, 'x'))"), "getattr"),
    # what a hostile review found in numpy, matplotlib and pandas
    "numpy's text runner": ("np.testing.measure('import os')", "uses numpy.testing.measure"),
    "numpy's text runner, imported": ("from numpy.testing import runstring", "imports numpy.testing.runstring"),
    "numpy's import by name": ("np.lib.add_newdoc('evil', 'x', 'doc')", "uses numpy.lib.add_newdoc"),
    "numpy's reader of the caller's variables": ("np.bmat('hidden')", "uses numpy.bmat"),
    "timeit options that hide a name": ("%timeit -n1 -r1 -tq (get-q_ipython)().ex('1')", "get_ipython reaches"),
    "time options that hide a call": ("%time -True-exec('1')", "exec runs code built at run time"),
    "a backtick in a query's string": ("frame.query(\"v > 0 or '`' != @get_ipython() != '`'\")",
                                       "cannot read as pandas does"),
    "a query text given by keywords": ("frame.query(**{'expr': text})", "may be given a text the scan cannot see"),
    "a query taken as a value": ("q = frame.query", "takes .query as a value"),
    "a query mapped over texts": ("list(map(frame.query, texts))", "takes .query as a value"),
    "pandas' eval under another name": ("from pandas import eval as ev", "imports pandas.eval"),
    "a method named by a string": ("frame.agg('eval', text)", "could name a method that runs text"),
    "a method named by a variable": ("how = 'ev' + 'al'\nframe.agg(how, text)", "could name a method that runs text"),
    "a backend imported by its name": ("plt.switch_backend('module://evil')", "switch_backend"),
    "matplotlib's settings": ("plt.rcParams['backend'] = 'module://evil'", "changes plt.rcParams"),
    "matplotlib's backend": ("import matplotlib\nmatplotlib.use('module://evil')", "uses matplotlib.use"),
    "matplotlib's test tools": ("import matplotlib.testing", "imports matplotlib.testing"),
    "pandas' unpickler": ("pd.read_pickle('evil.pkl')", "uses pandas.read_pickle"),
    "pandas' plotting backend": ("pd.set_option('plotting.backend', 'evil')", "uses pandas.set_option"),
    "a plot's backend": ("frame.plot(backend='evil')", "names a backend or settings by keyword"),
    "the instructor module's imports": ("import helpers\nhelpers.os.system('id')", "os reaches a module"),
    # and what a second hostile review found
    "a query text's names held to the lists": ("frame.eval(\"@np.testing.measure('x')\")",
                                                "evaluates a text that uses numpy.testing.measure"),
    "a comment that hides a backtick": ("frame.eval(\"w = v * 2 # `\\nz = @get_ipython() # `\")",
                                        "cannot read as pandas does"),
    "agg given its method by keywords": ("frame.agg(**{'func': 'ev' + 'al', 'expr': text})",
                                         "may be given a keyword the scan cannot see"),
    "agg given a special method's name": ("m = frame.agg('__getattribute__', 0, 'eval')",
                                          "could name a method that runs text"),
    "a function's name rebound inside a magic": ("def how(x):\n    return x", "%time how = 'ev' + 'al'",
                                                 "frame.agg(how, 0, text)", "could name a method that runs text"),
    "a timing result bound over the tests' name": ("%timeit -n1 -r1 -q -v pd pass", "rebinds pd, which the tests use"),
    "matplotlib's backend registry": ("plt.backend_registry.load_backend_module('module://evil')",
                                      "uses matplotlib.pyplot.backend_registry"),
    "a template compiled through a Styler": ("frame.style.env.from_string(text).render()", "compiles a template"),
    "a library's test runner": ("np.test(extra_argv=['-p', 'evil'])", "uses numpy.test"),
    "a standard library class a library re-exports": ("import matplotlib as mpl\nmpl.Path('x.py').write_text(text)",
                                                      "uses pathlib.Path"),
    "settings by keyword": ("plt.subplots(**{'figsize': (3, 3)})\nplt.figure(rc={'backend': 'evil'})",
                            "names a backend or settings by keyword"),
    "a library's method replaced for every object": ("A = plt.Axes\nA.get_title = lambda self, loc='': 'Sales'",
                                                     "puts a function in place of a method"),
}


def scanned(policy: PolicyScan, *sources: str) -> list[str]:
    """The findings in a student's notebook: the instructor's setup cell, then ``sources``."""
    notebook = nbformat.v4.new_notebook(cells=[cell(source) for source in (SETUP, *sources)])
    return policy.findings(notebook, ASSIGNMENT)


def test_of_the_standard_library_ipython_and_the_interpreter_no_name_is_derived():
    """An instructor's ``import os`` or ``from IPython.display import Markdown`` lets a
    student import no more than the scan's own list of names allows."""
    setup = cell("import os, sys, pickle\nfrom IPython.display import display, Markdown\nimport autograder")
    use = CourseUse.read([nbformat.v4.new_notebook(cells=[setup])])
    assert (use.modules, use.names) == ({"IPython"}, ())
    policy = PolicyScan(course_use=use)
    found = policy.findings(nbformat.v4.new_notebook(cells=[setup, cell("os.system('id')\nMarkdown('*hi*')")]),
                            Assignment(nbformat.v4.new_notebook()))
    assert {line.split(": ")[1] for line in found} == {
        "imports os, which the course does not allow", "imports sys, which the course does not allow",
        "imports pickle, which the course does not allow", "imports autograder, which the course does not allow",
        "uses os.system, which the course does not allow"}


def test_the_course_use_is_what_the_cells_students_read_and_the_solutions_use():
    assert USE.modules == {"numpy", "matplotlib", "pandas", "functools"}  # not nose: a test's tool
    assert {"numpy.*", "matplotlib.pyplot.*", "pandas.*", "numpy.linalg.*"} <= set(USE.names)
    assert not [name for name in USE.names if name.startswith(("functools", "nose"))]
    assert USE.magics == {"matplotlib", "html", "timeit", "capture"}
    assert {"print", "float"} <= USE.builtins


def test_the_unchanged_release_is_never_held_and_was_held_before():
    release = nbformat.v4.new_notebook(cells=[*(cell(c.source) for c in SOURCE.cells[:5]),
                                              cell("def column_mean(df, name):\n    # YOUR CODE HERE\n"
                                                   "    raise NotImplementedError()", solution=True, grade_id="mean")])
    assert COURSE.findings(release, ASSIGNMENT) == []
    assert PolicyScan().findings(release, Assignment(nbformat.v4.new_notebook())) != []  # without either rule


# Honest answers the grader's defaults allow without the course's use.
WITHOUT_THE_COURSE = ("a pandas query with a variable and a column", "the instructor's setup, copied lower down",
                      "a query whose columns have built-ins' names", "a built-in type's method given to apply",
                      "warnings switched off")


@pytest.mark.parametrize("case", HONEST)
def test_an_honest_answer_in_such_a_course_is_never_held(case):
    assert scanned(COURSE, HONEST[case]) == []
    assert (scanned(STRICT, HONEST[case]) == []) == (case in WITHOUT_THE_COURSE)


@pytest.mark.parametrize("case", HOSTILE)
def test_what_turns_text_into_code_or_reaches_the_tests_stays_a_finding(case):
    *cells, reason = HOSTILE[case]
    found = scanned(COURSE, *cells)
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


def test_the_instructor_facts_are_made_once_per_notebook_and_again_when_it_changes():
    locked = {"nbgrader": {"grade": False, "grade_id": "set-up", "locked": True, "solution": False}}
    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import math as m", metadata=locked)])
    first = instructor_facts(source)
    assert instructor_facts(nbformat.reads(nbformat.writes(source), as_version=4)) is first
    assert first.protected["m"] == "math"
    changed = copy.deepcopy(source)
    changed.cells[0].source += "\nimport fractions as fr\n"
    again = instructor_facts(changed)
    assert again is not first and again.protected["fr"] == "fractions" and "fr" not in first.protected
