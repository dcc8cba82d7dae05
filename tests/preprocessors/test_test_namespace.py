"""How the grader runs a test cell (``GuardedExecute`` with the kernel's guard): in a
namespace the student did not shape, and with its hidden tests' outputs marked."""

from __future__ import annotations

import functools
import tempfile

import nbformat
import pytest
from traitlets.config import Config

from autograder.preprocessors.guarded_execute import GuardedExecute, is_set_up, printed_whole
from autograder.preprocessors.hidden_tests import HIDDEN_OUTPUTS_FROM
from tests.helpers.grading_kernel import errors, graded

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_zygote_left")]


def test_a_builtin_the_notebook_rebound_does_not_reach_a_test():
    """A walrus in a comprehension binds in the notebook's namespace: during a test the
    built-in is the real one (for the student's functions too); their own later cells find
    the notebook as they left it."""
    rebinds = "[(len := lambda *args: 0) for _ in (0,)]\ndef answer():\n    return len([1, 2, 3])"
    cells = graded((rebinds, False),
                   ("assert len([1, 2]) == 2, 'the fake len'\nassert answer() == 3", True),
                   ("print(len([1, 2]))", False))
    assert errors(cells[1]) == []
    assert cells[2].outputs[0].text == "0\n", "the notebook's own cells keep what they bound"


def test_a_test_sees_what_earlier_tests_defined_however_the_notebook_rebinds_it():
    cells = graded(("def helper():\n    return 'the test helper'", True),
                   ("helper = lambda: 'the student helper'", False),
                   ("assert helper() == 'the test helper', helper()", True),
                   ("print(helper())", False))
    assert errors(cells[2]) == []
    assert cells[3].outputs[0].text == "the student helper\n"  # the notebook's own cells keep what they bound


def test_a_test_may_take_a_students_function_away_to_see_whether_another_uses_it():
    """nbgrader's own idiom (its test-hidden-tests notebook): the test runs in the notebook's namespace."""
    cells = graded(("def squares(n):\n    return [i * i for i in range(1, n + 1)]\n"
                    "def total(n):\n    return sum(squares(n))", False),
                   ("kept = squares\ndel squares\ntry:\n    total(2)\nexcept NameError:\n    pass\nelse:\n"
                    "    raise AssertionError('total does not use squares')\nfinally:\n    squares = kept", True))
    assert errors(cells[1]) == []


def test_what_a_test_defines_stays_out_of_the_notebook():
    """Its hidden part's cases and helpers would be there for a later student cell to print."""
    cells = graded(("x = 1", False), ("### BEGIN HIDDEN TESTS\nsecret_case = [3, 5]\n### END HIDDEN TESTS", True),
                   ("print('secret_case' in globals())", False))
    assert cells[2].outputs[0].text == "False\n"


def test_the_outputs_of_a_test_cells_hidden_tests_are_marked():
    test = ('print("visible")\n### BEGIN HIDDEN TESTS\nprint("hidden")\nfor i in range(3):\n    print(i)\n'
            "### END HIDDEN TESTS")
    cells = graded(("x = 1", False), (test, True), ('print("no hidden part")', True))
    with_hidden, without = cells[1], cells[2]
    texts = [output.text for output in with_hidden.outputs]
    start = with_hidden.metadata["autograder"][HIDDEN_OUTPUTS_FROM]
    assert "".join(texts[:start]) == "visible\n" and "".join(texts[start:]) == "hidden\n0\n1\n2\n"
    assert without.metadata["autograder"][HIDDEN_OUTPUTS_FROM] == len(without.outputs) == 1


def test_a_test_that_never_showed_where_its_hidden_tests_begin_shows_none_of_its_outputs():
    """Its visible part failed first, or a flood cut the mark out of the message that held it."""
    cells = graded(('print("visible")\nraise AssertionError("visible test fails")\n### BEGIN HIDDEN TESTS\n'
                    'print("hidden")\n### END HIDDEN TESTS', True))
    assert cells[0].metadata["autograder"] == {HIDDEN_OUTPUTS_FROM: 0}


def test_a_display_keeps_what_it_showed_when_it_was_sent():
    """An update by display id (from any cell, the hidden tests' run included) changes nothing."""
    cells = graded(('display("shown", display_id="slot")', False),
                   ('display("changed", display_id="slot", update=True)\ndisplay("again", display_id="slot")', True))
    assert cells[0].outputs[0].data["text/plain"] == "'shown'"
    assert [output.data["text/plain"] for output in cells[1].outputs] == ["'again'"]


def test_a_students_claim_on_where_the_hidden_outputs_begin_is_overwritten():
    notebook_cells = graded(('print("visible")\n### BEGIN HIDDEN TESTS\nprint("hidden")\n### END HIDDEN TESTS', True))
    assert notebook_cells[0].metadata["autograder"] == {HIDDEN_OUTPUTS_FROM: 1}


def set_up_cell(source: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"locked": True, "grade": False, "solution": False, "grade_id": "set-up"}
    return cell


def test_a_test_gets_the_modules_functions_and_classes_of_the_locked_set_up_cells():
    """A student's cell that rebinds ``copy`` (or a helper the instructor defined) changes
    nothing a test uses; data the set-up made stays the notebook's to rebind."""
    notebook = nbformat.v4.new_notebook(cells=[
        set_up_cell("import copy\ndef helper():\n    return 'the instructor'\nresult = None"),
        nbformat.v4.new_code_cell("class FakeCopy:\n    deepcopy = staticmethod(lambda value: 'forged')\n"
                                  "copy = FakeCopy()\nhelper = lambda: 'the student'\nresult = 42"),
    ])
    test = nbformat.v4.new_code_cell("assert copy.deepcopy([1]) == [1], 'the fake copy'\n"
                                     "assert helper() == 'the instructor', helper()\nassert result == 42")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_set_up", "points": 1}
    notebook.cells += [test, nbformat.v4.new_code_cell("print(helper())")]
    with tempfile.TemporaryDirectory(prefix="assignment-") as folder:
        GuardedExecute(config=Config({"GradingSettings": {"sandbox": True}}), timeout=60).preprocess(
            notebook, {"metadata": {"path": folder}})
    assert errors(notebook.cells[2]) == []
    assert notebook.cells[3].outputs[0].text == "the student\n"  # the notebook's own cells keep what they bound


@pytest.mark.parametrize(("marks", "set_up"), [
    ({"locked": True, "grade": False, "solution": False, "grade_id": "imports"}, True),
    # a student's own cell marked locked: nbgrader leaves it so, with no id it knows
    ({"locked": True}, False),
    ({"locked": True, "grade": True, "solution": False, "grade_id": "test_f", "points": 1}, False),
    ({"locked": False, "grade": False, "solution": True, "grade_id": "f"}, False),
])
def test_only_the_instructors_locked_cells_are_set_up_cells(marks, set_up):
    """Their bindings become the tests': a cell that only claims to be locked must not."""
    assert is_set_up(nbformat.v4.new_code_cell("import copy", metadata={"nbgrader": marks})) is set_up


def test_what_a_student_did_before_the_set_up_cell_does_not_reach_its_imports():
    """A fake module planted before the set-up cell runs is put back before it imports, and
    a name the student bound to the same module first is still the test's afterwards."""
    plant = ("import copy\nimport sys, types\nimport autograder\nfake = types.ModuleType('autograder.checks')\n"
             "fake.forged = True\nautograder.checks = fake\nsys.modules['autograder.checks'] = fake")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(plant),
        set_up_cell("import copy\nfrom autograder import checks"),
        nbformat.v4.new_code_cell("copy = None"),
    ])
    test = nbformat.v4.new_code_cell("assert not hasattr(checks, 'forged'), 'the planted checks'\n"
                                     "assert copy.deepcopy([1]) == [1]")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_plant", "points": 1}
    notebook.cells.append(test)
    with tempfile.TemporaryDirectory(prefix="assignment-") as folder:
        GuardedExecute(config=Config({"GradingSettings": {"sandbox": True}}), timeout=60).preprocess(
            notebook, {"metadata": {"path": folder}})
    assert errors(notebook.cells[3]) == []


def test_a_marker_line_is_printed_in_one_write_with_its_newline():
    """A kernel flushes its output between writes when it is busy: a marker written apart
    from its newline reached the grader in two messages under load, and a test that ran to
    its end was scored incomplete (seen once in a full `make test`)."""
    writes = []

    class Recorder:
        def write(self, text):
            writes.append(text)

    exec(printed_whole("[test ran to its end: 0123]"), {"print": functools.partial(print, file=Recorder())})
    assert [text for text in writes if text] == ["[test ran to its end: 0123]\n"]
