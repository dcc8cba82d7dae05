"""The policy scan: no right answer of the answer suite and no honest demo student trips
it; every forbidden construct, written directly or with its name built from strings, does."""

from __future__ import annotations

import importlib
import inspect
import re

import nbformat
import pytest

from attacks import HARM_ATTACKS, SCORE_ATTACKS, UNDOABLE_ATTACKS
from autograder.cli import DEMO_CLASS
from autograder.grading.policy import Assignment, PolicyScan
from autograder.grading.repair import repair
from autograder.nbgrader_api import course_config
from course import REPO, assignments, graded_functions, release_notebook, source_notebook

A01 = "01-inplace-basics"
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


def test_no_right_answer_trips_it():
    sources = [
        inspect.getsource(answer)
        for function in graded_functions()
        for name, answer in vars(importlib.import_module(f"answers.{function.name}")).items()
        if name.startswith("right_")
    ]
    assert len(sources) > 30
    assert findings(*sources) == []


@pytest.mark.parametrize("student", HONEST)
def test_no_honest_demo_student_trips_it(student):
    for path in sorted((DEMO_CLASS / student).glob("*/*.ipynb")):
        assignment = path.parent.name
        if path.name == "scratch.ipynb":
            continue
        notebook = nbformat.read(path, as_version=4)
        repair(notebook, nbformat.read(release_notebook(assignment), as_version=4))
        source = Assignment(nbformat.read(source_notebook(assignment), as_version=4))
        assert POLICY.findings(notebook, source) == [], path


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
    "%time x = 1": "get_ipython reaches into IPython",
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


@pytest.mark.parametrize("code", FORBIDDEN)
def test_each_forbidden_construct_is_caught(code):
    found = findings(code)
    assert any(FORBIDDEN[code] in line for line in found), found


ALLOWED = [
    "import torch", "from torch import nn", "from autograder import checks", "import math, copy",
    "import torch.nn.functional as F", "x._version", "x._base is None", "torch._foreach_lerp_([a], [b], 0.1)",
    "a.untyped_storage()._cdata", "super().__init__()", "print(torch.__version__)", "x.__iadd__(1)",
    "type(m).__name__", "type(x)", "for _ in range(3):\n    pass", "sum = 0", "def f():\n    isinstance = 1",
    "def f(layer):\n    layer.weight.grad = None\n    return layer", "class B(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.forward_count = 0", "def f(pairs):\n    return pairs[0]",
    "def f(x):\n    result = x * 2\n    return result",
    "model.modules()", "display(x)", "'{0.__class__}'.format(x)",
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
    found = POLICY.file_findings("helpers.py", "import torch\nx = torch.sys.modules\n", ASSIGNMENT)
    assert found == ["helpers.py, line 2: sys reaches a module that gives access to the interpreter or the machine: "
                     "x = torch.sys.modules"]


def test_a_declared_file_may_be_imported_and_the_course_may_allow_more():
    assert findings("import helpers")
    def notebook(code):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    assert POLICY.findings(notebook("import helpers"), ASSIGNMENT, {"helpers"}) == []
    assert PolicyScan(allowed_imports=["torch", "os"]).findings(notebook("import os"), ASSIGNMENT) == []
    assert PolicyScan().findings(notebook("import copy"), ASSIGNMENT)


def test_every_assignment_tells_students_what_the_policy_allows():
    """The modules each assignment's introduction lists are the course's allowed imports."""
    for assignment in assignments():
        intro = nbformat.read(release_notebook(assignment), as_version=4).cells[0].source
        listed = intro.split("**What your code may use.**")[1].split("Code that reaches")[0]
        assert set(re.findall(r"`(\w+)`", listed)) == set(POLICY.allowed_imports), assignment


def test_a_test_may_rebind_what_students_are_asked_to_define():
    """nbgrader's test-hidden-tests.ipynb: a test replaces the student's squares to check that
    sum_of_squares calls it; reading one's own answer is not reading the tests' names."""
    marks = {"solution": {"solution": True, "grade": False, "grade_id": "squares", "locked": False},
             "test": {"solution": False, "grade": True, "grade_id": "uses_squares", "locked": True, "points": 1}}
    cells = [nbformat.v4.new_code_cell("def squares(n):\n    return []", metadata={"nbgrader": marks["solution"]}),
             nbformat.v4.new_code_cell("saved = squares\ndel squares\nsquares = saved\n%time squares(1)",
                                       metadata={"nbgrader": marks["test"]})]
    source = Assignment(nbformat.v4.new_notebook(cells=cells))
    assert source.test_names == {"saved"}
    student = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"def total(n):\n    return sum({name}(n))") for name in ("squares", "saved")])
    assert [line.split(": ", 1)[1] for line in POLICY.findings(student, source)] == [
        "reads saved, which the tests define: a function that runs inside a test reaches it: return sum(saved(n))"]
