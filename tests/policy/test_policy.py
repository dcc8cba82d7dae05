"""The policy scan: no right answer of the answer suite, no solution cell and no honest demo
student trips it; every forbidden construct, written directly or with its name built from
strings, does, and so does every name of a module the course does not allow."""

from __future__ import annotations

import ast
import importlib
import re

import nbformat
import pytest

from tests.helpers.attacks import HARM_ATTACKS, SCORE_ATTACKS, UNDOABLE_ATTACKS
from autograder.course import DEMO_CLASS
from autograder.policy.scan import Assignment, PolicyScan
from autograder.policy.names import Names
from autograder.policy.scopes import Scopes
from autograder.intake.repair import repair
from autograder.nbgrader_api import course_config
from tests.helpers.assignments import REPO, assignments, graded_functions, release_notebook, source_notebook
from tests.helpers.submissions import answered_release

A01 = "01-inplace-basics"
SOURCES = {assignment: Assignment(nbformat.read(source_notebook(assignment), as_version=4))
           for assignment in assignments()}
ASSIGNMENT = Assignment(nbformat.read(source_notebook(A01), as_version=4))
ASSIGNMENT.protected |= {"isinstance": None, "nn": "torch.nn"}
POLICY = PolicyScan(config=course_config(REPO, {}))  # the course's own policy
QUIET_ATTACKS = ("attack-memory",)  # plain torch: the sandbox's job
HONEST = ("all-right", "partial", "unanswered", "renamed-notebook", "extra-files", "huge-output", "split-cells",
          "duplicated-cells", "deleted-test-cell", "cleared-metadata", "corrupted-metadata", "slow-notebook",
          "infinite-loop")


def findings(*sources: str, grade_id: str | None = None) -> list[str]:
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    if grade_id:
        cells[0].metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "solution": False}
    return POLICY.findings(nbformat.v4.new_notebook(cells=cells), ASSIGNMENT)


def findings_in(assignment: Assignment, *sources: str) -> list[str]:
    return POLICY.findings(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), assignment)


def test_no_right_answer_trips_it():
    """Each right answer as the answer suite submits it: in its assignment's released
    notebook, after the imports its module needs (so every name it reads from a module is
    read through the import, as in a student's notebook)."""
    answers = [(function, answer) for function in graded_functions()
               for name, answer in vars(importlib.import_module(f"tests.answers.{function.name}")).items()
               if name.startswith("right_")]
    assert len(answers) > 30
    found = [(function.name, answer.__name__, line) for function, answer in answers
             for line in POLICY.findings(answered_release(function.assignment, {function.name: answer}),
                                         SOURCES[function.assignment])]
    assert found == []


@pytest.mark.parametrize("assignment", assignments())
def test_no_solution_cell_trips_it(assignment):
    """The instructor's own solutions, scanned as a student's cells would be."""
    assert POLICY.findings(nbformat.read(source_notebook(assignment), as_version=4), SOURCES[assignment]) == []


@pytest.mark.parametrize("student", HONEST)
def test_no_honest_demo_student_trips_it(student):
    for path in sorted((DEMO_CLASS / student).glob("*/*.ipynb")):
        assignment = path.parent.name
        if path.name == "scratch.ipynb":
            continue
        notebook = nbformat.read(path, as_version=4)
        repair(notebook, nbformat.read(release_notebook(assignment), as_version=4))
        assert POLICY.findings(notebook, SOURCES[assignment]) == [], path


@pytest.mark.parametrize("student", sorted({**SCORE_ATTACKS, **HARM_ATTACKS, **UNDOABLE_ATTACKS}))
def test_every_attack_fixture_trips_it(student):
    code = {**SCORE_ATTACKS, **HARM_ATTACKS, **UNDOABLE_ATTACKS}[student]
    assert bool(findings(code)) is (student not in QUIET_ATTACKS)


FORBIDDEN = {
    # imports outside the course's list, however spelled
    "import os": "imports os",
    "from os import system": "imports from os",
    "import importlib; importlib.import_module('o' + 's')": "imports importlib",
    "from . import helper": "imports from .,",
    "from torch.overrides import TorchFunctionMode": "changes what torch operations do",
    # names reached at run time
    "getattr(get_ipython(), 'show' + 'traceback')": "getattr reaches attributes",
    "f = getattr": "getattr reaches attributes",
    "setattr(torch, 'eq' + 'ual', len)": "setattr reaches attributes",
    "vars(torch)['equal']": "vars reaches attributes",
    "globals()['tor' + 'ch']": "globals reaches attributes",
    "locals()": "locals reaches attributes",
    "exec('x = 1')": "exec runs code",
    "eval('1 + 1')": "eval runs code",
    "compile('1', 'f', 'eval')": "compile runs code",
    "__import__('o' + 's')": "__import__ reaches attributes",
    "T = type('T', (torch.Tensor,), {'__torch_' + 'function__': staticmethod(len)})": "type(...) with more than one",
    "maker = type": "type(...) with more than one",
    # dunder access
    "x.__class__ = bool": "uses the special attribute __class__",
    "type(x).__dict__['a']": "uses the special attribute __dict__",
    "object.__getattribute__(x, 'sh' + 'ape')": "uses the special attribute __getattribute__",
    "f.__code__ = g.__code__": "uses the special attribute __code__",
    "__builtins__": "uses the special name __builtins__",
    "torch.Tensor.__torch_function__": "uses the special attribute __torch_function__",
    # private attributes
    "torch._C._set_grad_enabled(True)": "reads the private attribute _C",
    "torch._dynamo.reset()": "reads the private attribute _dynamo",
    "x._version = 3": "writes the private attribute _version",
    "from torch import _C": "imports the private name _C",
    # IPython, the kernel, history
    "get_ipython()": "get_ipython reaches into IPython",
    "%time x = 1": "uses the magic %time, which the course does not allow",
    "!ls": "get_ipython reaches into IPython",
    "In[-1]": "In reads IPython's history",
    "_ih[-1]": "_ih reads IPython's history",
    "_i3": "_i3 reads IPython's history",
    "Out[2]": "Out reads IPython's history",
    "y = _": "_ reads IPython's history",
    "display.kernel": "kernel reaches into IPython",
    # modules reached through an allowed one
    "torch.sys.modules['autograder.checks']": "sys reaches a module",
    "torch.os.system('ls')": "os reaches a module",
    "np.ctypeslib.as_array(0, (1,))": "ctypeslib reaches a module",
    "functools.partial(torch.inspect.stack)": "inspect reaches a module",
    # frames, hooks, deserialising, subclasses
    "frame.f_back.f_locals": "f_back inspects or traces",
    "error.__traceback__.tb_frame": "tb_frame inspects or traces",
    "x.register_hook(lambda grad: grad * 0)": "register_hook registers code",
    "block.register_forward_hook(lambda *args: None)": "register_forward_hook registers code",
    "torch.load('weights.pt')": "load deserialises objects",
    "x.as_subclass(Agreeable)": "as_subclass changes what torch operations do",
    "torch.library.impl('aten::eq', 'CPU')": "library changes what torch operations do",
    "class Agreeable(torch.Tensor):\n    pass": "defines a subclass of torch.Tensor",
    "class P(nn.Parameter):\n    pass": "defines a subclass of nn.Parameter",
    "class Fake:\n    def __eq__(self, other):\n        return True": "defines the special method __eq__",
    "class M(metaclass=Meta):\n    pass": "defines a class with its own metaclass",
    # rebinding what the tests use, at a cell's top level
    "isinstance = lambda *args: True": "rebinds isinstance",
    "def print(*args):\n    pass": "rebinds print",
    "import numpy as torch": "rebinds torch",
    "checks = None": "rebinds checks",
    "for torch in []:\n    pass": "rebinds torch",
    "def f():\n    global checks\n    checks = None": "declares checks global",
    # the tests' own names, reached from a function that runs inside a test
    "def shares_storage(a, b):\n    pairs.clear()\n    return True": "reads pairs, which the tests define",
    "def f(layer):\n    global check_xavier_layer\n    return layer": "declares check_xavier_layer global",
    # a class or a method replaced, deleted, or an object made at run time changed
    "def residual(x, block):\n    type(block).forward = f\n    return x": "an attribute of an object made at run time",
    "Linear = nn.Linear\nLinear.named_modules = f": "puts a function in place of a torch method",
    "def f(x):\n    x.detach = g\n    return x": "puts a function in place of a torch method",
    "def f(block):\n    del block.extra_repr": "puts a function in place of a torch method",
    "def f(x):\n    del x.note": "deletes x.note",
    # what reads the running cells' source
    "torch.autograd.set_detect_anomaly(True)": "set_detect_anomaly reads the source",
    "node.metadata['traceback_']": "metadata reads the source",
    "torch.equal = lambda a, b: True": "replaces torch.equal",
    # text that turns into code or attributes through an allowed module
    "typing.get_type_hints(carrier)": "get_type_hints turns text into code",
    "from typing import get_type_hints": "imports get_type_hints",
    "from typing import *\nget_type_hints(carrier)": "get_type_hints turns text into code",
    "def carrier(x: 'exec(P)'):\n    pass": "annotates with a string",
    "def carrier() -> typing.List['P']:\n    pass": "annotates with a string",
    "value: 'exec(P)' = 1": "annotates with a string",
    "torch.utils.benchmark.Timer(stmt='print(1)').timeit(1)": "benchmark turns text into code",
    "import torch.utils.benchmark": "imports torch.utils.benchmark",
    "torch.compile(f)": "compile turns text into code",
    "dataclasses.make_dataclass('T', [], bases=(torch.Tensor,))": "make_dataclass turns text into code",
    "functools.update_wrapper(w, torch.isclose)": "update_wrapper reaches or copies attributes",
    "import string": "imports string",
    "import warnings": "imports warnings",
    # a private module, and patching what an import bound
    "from torch.testing._comparison import TensorLikePair": "imports from the private module",
    "import torch.testing._comparison as comparison": "imports from the private module",
    "from torch.testing import _comparison": "imports the private name _comparison",
    "from torch.testing._comparison import TensorLikePair\nTensorLikePair.compare = f": "part of an imported module",
    "import torch as T\nT.isclose = f": "part of an imported module",
    "checks.assert_untouched = print": "replaces checks.assert_untouched",
    "del torch.testing": "replaces torch.testing",
}




# Issue 25: text turned into code through names of allowed modules, and rebinding by
# Python's scoping rules; each got past the scan that allowed whole modules.
DISPATCH = "import functools\nP = 'exec(PAYLOAD)'\ndef carrier(x: P):\n    pass\n"
THROUGH_NAMES = {
    DISPATCH + "functools.singledispatch(print).register(carrier)": "singledispatch evaluates annotations",
    DISPATCH: "annotates with P, which is not the name of a type",
    "from functools import singledispatch as s": "imports singledispatch",
    "import functools\nfunctools.singledispatchmethod(f)": "singledispatchmethod evaluates annotations",
    "def carrier(x: make_type()):\n    pass": "annotates with make_type(), which is not the name of a type",
    "torch.utils.model_zoo.load_url('file:///tmp/payload.pt')": "uses torch.utils.model_zoo.load_url, which the",
    "torch.utils.collect_env.run('id')": "uses torch.utils.collect_env.run, which the course does not allow",
    "import torch.utils.model_zoo as mz\nmz.load_url(url)": "imports torch.utils.model_zoo, which the course",
    "import torch.utils.model_zoo": "imports torch.utils.model_zoo, which the course does not allow",
    "from torch.utils import model_zoo": "imports torch.utils.model_zoo, which the course does not allow",
    "u = torch.utils\nu.model_zoo.load_url(url)": "uses torch.utils, which the course does not allow",
    "class A:\n    if False:\n        torch = None\n    zoo = torch.utils.model_zoo": "uses torch.utils.model_zoo",
    "def f(m=torch):\n    return m.utils": "uses the module torch as a value",
    "import torch.nn.functional as F\nF.torch.utils.model_zoo.load_url(url)": "uses torch.utils.model_zoo.load_url",
    "torch.nn.utils.parametrize.register_parametrization(layer, 'weight', P())": "uses torch.nn.utils.parametrize.",
    "torch.set_default_device('meta')": "uses torch.set_default_device, which the course does not allow",
    "checks.TOLERANCES.update({torch.float32: (1.0, 1.0)})": "uses autograder.checks.TOLERANCES, which the",
    "x.untyped_storage().type('anti' + 'gravity')": ".type(...) with anything but a torch type",
    "from functools import *": "imports every name of functools",
    "open('/tmp/notes.txt')": "uses the built-in open, which the course does not allow",
    "help('modules')": "uses the built-in help, which the course does not allow",
}
# zip is a built-in 04-ema's tests call: the walrus binds it in the notebook's namespace.
REBINDINGS = {
    "[(zip := fake) for _ in (0,)]": "rebinds zip, which the tests use",
    "if True:\n    [(zip := fake) for _ in (0,)]": "rebinds zip, which the tests use",
    "for _ in range(1):\n    with nothing():\n        total = sum((zip := fake) for _ in (0,))": "rebinds zip",
    "try:\n    pass\nexcept Exception as zip:\n    pass": "rebinds zip, which the tests use",
    "match pair:\n    case [first, *zip]:\n        pass": "rebinds zip, which the tests use",
    "(first, *zip) = pairs": "rebinds zip, which the tests use",
    "with nothing() as (first, zip):\n    pass": "rebinds zip, which the tests use",
    "del zip": "rebinds zip, which the tests use",
}


@pytest.mark.parametrize(("code", "reason"), [*FORBIDDEN.items(), *THROUGH_NAMES.items()])
def test_each_forbidden_construct_and_name_is_caught(code, reason):
    found = findings(code)
    assert any(reason in line for line in found), found


@pytest.mark.parametrize("code", REBINDINGS)
def test_a_rebinding_in_the_notebooks_namespace_is_caught_at_any_depth(code):
    found = findings_in(SOURCES["04-ema"], code)
    assert any(REBINDINGS[code] in line for line in found), found


def test_an_annotation_may_name_the_instructors_classes():
    assert findings_in(SOURCES["06-diagnose-and-measure"], "def f(model: TwoLayerNet) -> float:\n    return 0.0") == []
    rebound = findings_in(SOURCES["06-diagnose-and-measure"], "TwoLayerNet = 'exec(PAYLOAD)'",
                          "def f(model: TwoLayerNet):\n    pass")
    assert [line.split(": ")[1] for line in rebound] == ["annotates with TwoLayerNet, which is not the name of a type"]


def test_the_names_a_cell_binds_follow_pythons_scoping_rules():
    cell = """\
import torch.nn as tnn
for a in []:
    if a:
        [(b := 1) for _ in (0,)]
def f(c, *d):
    global e
    e = g = 1
    [(h := 2) for _ in (0,)]
    return lambda i: (j := i)
class K:
    m = 1
    def n(self):
        nonlocal_free = [o for o in ()]
try:
    p = 1
except Exception as q:
    pass
with open_it() as (r, *s):
    t += 1
match u:
    case {"v": v, **w} if (x := v):
        del y
"""
    assert set(Scopes(ast.parse(cell)).module.bound) == set("tnn a b f e K p q r s t v w x y".split())


def test_the_allowlist_matches_one_part_per_star_and_takes_back_with_a_bang():
    names = Names(("torch.*", "!torch.load", "torch.nn.*", "json.loads"), frozenset({"torch", "json"}), frozenset())
    assert names.allowed("torch.add") and names.allowed("torch.nn.Linear") and names.named("json.loads")
    assert not names.allowed("torch.load") and not names.allowed("torch.nn.utils.parametrize.x")
    assert not names.named("torch.add")  # allowed by a glob only: the attribute rules still apply to its name
    assert names.resolve(["torch", "nn", "functional", "torch", "utils"]) == ("torch.utils", True, 5)
    assert names.resolve(["torch", "Tensor", "add_"]) == ("torch.Tensor", False, 2)
    assert names.under("torch.nn") and not names.under("torch.utils")
    assert not Names(("os.*",), frozenset({"torch"}), frozenset()).allowed("os.system")  # not importable


def test_a_course_may_allow_more_names_and_built_ins():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import torch.utils.model_zoo as mz\nmz.load_url(url)\nprint(open)")])
    assert len(POLICY.findings(notebook, ASSIGNMENT)) == 3
    generous = PolicyScan(allowed_names=["torch.utils.model_zoo.*"], allowed_builtins=["print", "open"])
    assert generous.findings(notebook, ASSIGNMENT) == []


ALLOWED = [
    "import torch", "from torch import nn", "from autograder import checks", "import math, copy",
    "import torch.nn.functional as F", "x._version", "x._base is None", "torch._foreach_lerp_([a], [b], 0.1)",
    "a.untyped_storage()._cdata", "super().__init__()", "print(torch.__version__)", "x.__iadd__(1)",
    "type(m).__name__", "type(x)", "for _ in range(3):\n    pass", "sum = 0", "def f():\n    isinstance = 1",
    "def f(layer):\n    layer.weight.grad = None\n    return layer", "class B(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.forward_count = 0", "def f(pairs):\n    return pairs[0]",
    "def f(x):\n    result = x * 2\n    return result",
    "model.modules()", "display(x)", "'{0.__class__}'.format(x)",
    # names of allowed modules, annotations that name types, and what binds only locally
    "import json\njson.loads('[1]')", "from json import loads", "import torch.nn.functional as F\nF.relu(x)",
    "from torch.nn import functional\nfunctional.relu(x)", "math.pi * math.sqrt(2.0)",
    "import functools\nfunctools.partial(f, 1)", "torch.autograd.grad(y, [x])", "torch.nn.init.zeros_(w)",
    "from typing import Optional\ndef f(x: torch.Tensor, n: int = 1) -> Optional[torch.Tensor]:\n    return x",
    "import dataclasses\n@dataclasses.dataclass\nclass Step:\n    size: float = 0.1\n"
    "    bias: torch.Tensor | None = None",
    "class A:\n    pass\ndef f(a: A, b: list[A]) -> dict[str, A]:\n    return {}",
    "def f():\n    [(isinstance := 1) for _ in (0,)]\n    return isinstance", "f = lambda: (isinstance := 1)",
    "class C:\n    isinstance = 1",
    "def f(input):\n    return input", "with torch.no_grad():\n    x.zero_()",
    "class Twice(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2",
]


@pytest.mark.parametrize("code", ALLOWED)
def test_honest_constructs_pass(code):
    assert findings(code) == []


def test_only_cells_with_the_instructors_ids_are_skipped():
    attack = SCORE_ATTACKS["attack-input-transformer"]
    assert findings(attack, grade_id="test_add_scaled") == []
    forged = findings(attack, grade_id="my-own-test")
    assert forged and forged[0].startswith("cell 1 (my-own-test), line 3: get_ipython")


def test_a_submitted_python_file_is_scanned_as_well():
    found = POLICY.file_findings("helpers.py", b"import torch\nx = torch.sys.modules\n", ASSIGNMENT)
    assert found == ["helpers.py, line 2: sys reaches a module that gives access to the interpreter or the machine: "
                     "x = torch.sys.modules"]


def test_a_submitted_file_is_read_as_python_reads_it_or_is_a_finding():
    """A ``coding:`` line makes Python read other code than a UTF-8 reading shows (UTF-7
    turns ``+AAo-`` into a line break); a file that does not parse hides what it holds."""
    hidden = b"# coding: utf-7\nSCALE = 2  # harmless +AAo-import torch; x = torch.sys.modules\n"
    assert POLICY.file_findings("helpers.py", hidden, ASSIGNMENT) == [
        "helpers.py, line 1: is written in the utf-7 encoding, which the scan does not read"]
    assert POLICY.file_findings("helpers.py", b"def f(:\n", ASSIGNMENT) == [
        "helpers.py, line 1: does not parse, so the scan cannot read it"]
    assert POLICY.file_findings("helpers.py", b"\xef\xbb\xbfSCALE = 2\n", ASSIGNMENT) == []  # UTF-8 with a BOM


def test_a_declared_file_may_be_imported_and_the_course_may_allow_more():
    assert findings("import helpers")
    def notebook(code):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    assert POLICY.findings(notebook("import helpers"), ASSIGNMENT, {"helpers"}) == []
    assert PolicyScan(allowed_imports=["torch", "os"]).findings(notebook("import os"), ASSIGNMENT) == []
    assert PolicyScan().findings(notebook("import os"), ASSIGNMENT)  # the default: torch and the curated modules


def test_a_name_read_through_a_students_own_module_is_read_as_the_name_it_is():
    helpers = {"helpers": "import torch\nfrom torch import utils as tools\ndef scale(x):\n    return 2 * x\n"}
    def scanned(code):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
        return [line.split(": ")[1] for line in POLICY.findings(notebook, ASSIGNMENT, helpers)]
    assert scanned("import helpers\nhelpers.scale(helpers.torch.ones(2))") == []
    assert scanned("import helpers\nhelpers.torch.utils.model_zoo.load_url(url)") == [
        "uses torch.utils.model_zoo.load_url, which the course does not allow"]
    assert scanned("import helpers\nhelpers.tools.collect_env.run('id')") == [
        "uses torch.utils.collect_env.run, which the course does not allow"]
    assert scanned("from helpers import torch as t\nt.load(path)") == [
        "load deserialises objects (unpickling can run any code)"]
    assert scanned("from helpers import tools") == ["imports torch.utils, which the course does not allow"]


def test_every_assignment_tells_students_what_the_policy_allows():
    """The modules each assignment's introduction lists are the course's allowed imports."""
    for assignment in assignments():
        intro = nbformat.read(release_notebook(assignment), as_version=4).cells[0].source
        listed = intro.split("**What your code may use.**")[1].split("Code that reaches")[0]
        assert set(re.findall(r"`(\w+)`", listed)) == set(POLICY.allowed_imports), assignment


def solution_and_test(solution: str, test: str) -> Assignment:
    """An instructor's notebook of one solution cell and one test cell."""
    marks = {"solution": {"solution": True, "grade": False, "grade_id": "answer", "locked": False},
             "test": {"solution": False, "grade": True, "grade_id": "test_answer", "locked": True, "points": 1}}
    return Assignment(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(solution, metadata={"nbgrader": marks["solution"]}),
        nbformat.v4.new_code_cell(test, metadata={"nbgrader": marks["test"]})]))


def test_a_test_may_rebind_what_students_are_asked_to_define():
    """nbgrader's test-hidden-tests.ipynb: a test replaces the student's squares to check that
    sum_of_squares calls it; reading one's own answer is not reading the tests' names."""
    source = solution_and_test("def squares(n):\n    return []",
                               "saved = squares\ndel squares\nsquares = saved\n%time squares(1)")
    assert source.test_names == {"saved"}
    student = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"def total(n):\n    return sum({name}(n))") for name in ("squares", "saved")])
    assert [line.split(": ", 1)[1] for line in POLICY.findings(student, source)] == [
        "reads saved, which the tests define: a function that runs inside a test reaches it: return sum(saved(n))"]


def test_a_function_students_are_asked_to_write_may_share_a_name_a_test_imports():
    """A test cell that imports the name of the function a solution cell asks for (to
    compare with a library's own, say) does not make the student's definition a rebinding."""
    source = solution_and_test("def norm(x):\n    return abs(x)",
                               "saved = norm\nfrom math import fabs as norm\nassert saved(-1) == norm(-1)")
    student = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def norm(x):\n    return -x if x < 0 else x")])
    assert POLICY.findings(student, source) == []
