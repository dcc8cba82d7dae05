"""Cells other nbgrader courses have and this one does not, each in a one-notebook run of
the grading kernel: a hand-graded code answer, figures drawn after a test cell, images
and raw bytes in outputs."""

from __future__ import annotations

import pytest

from autograder.preprocessors.guarded_execute import TamperedError
from tests.helpers.grading_kernel import MANUAL, errors, graded

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_zygote_left")]


def test_a_hand_graded_answer_keeps_the_value_it_shows_and_the_names_it_binds():
    """The person grading reads the value; the cells after it use its names."""
    cells = graded(("counts = [[3, 1], [0, 4]]\ncounts", MANUAL),
                   ("assert counts[0][0] == 3", True))
    assert [output.output_type for output in cells[0].outputs] == ["execute_result"]
    assert cells[0].outputs[0].data["text/plain"] == "[[3, 1], [0, 4]]"
    assert errors(cells[1]) == []


def _figures(cell) -> int:
    return sum("image/png" in output.get("data", {}) for output in cell.outputs)


def test_figures_after_a_test_cell_are_shown_and_the_inline_backends_flush_is_no_note():
    """Matplotlib registers its callbacks when a cell first plots: out while a test runs
    (a test that plots too), back for the cells after it, and never a note."""
    events = []
    cells = graded(("import matplotlib.pyplot as plt\nx = [1, 2]\nplt.plot(x)", False),
                   ("import matplotlib.pyplot as plt\nplt.plot(x)\nplt.close('all')\nassert x == [1, 2]", True),
                   ("plt.plot([2, 1])", False),
                   ("assert True", True),
                   ("plt.figure()\nplt.plot([3, 4])", MANUAL),
                   events=events)
    assert errors(cells[1]) == errors(cells[3]) == []
    assert _figures(cells[0]) == _figures(cells[2]) == _figures(cells[4]) == 1
    assert [event for event in events if "restored" in event or "tampered" in event] == []


def test_a_callback_registered_during_a_test_is_tampering_whatever_module_it_claims():
    """Code run after a test's last line could hide its error: a callback the test's run
    registered, even one named as matplotlib's in a module a cell put in its place, is
    tampering, as before matplotlib's were given back."""
    fake = ("import sys, types\ndef flush_figures():\n    print('after the test')\n"
            "fake = types.ModuleType('matplotlib_inline.backend_inline')\nfake.flush_figures = flush_figures\n"
            "sys.modules['matplotlib_inline.backend_inline'] = fake\n"
            "def answer():\n    get_ipython().events.register('post_execute', flush_figures)\n    return 1")
    with pytest.raises(TamperedError, match="shell.events.callbacks"):
        graded((fake, False), ("assert answer() == 1", True))


def test_a_callback_of_the_students_own_is_still_put_back_before_a_test():
    events = []
    cells = graded(("import matplotlib.pyplot as plt\nplt.plot([1])\n"
                    "get_ipython().events.register('post_execute', lambda: print('mine'))", False),
                   ("assert True", True), ("plt.plot([2])", False), events=events)
    assert errors(cells[1]) == [] and _figures(cells[2]) == 1
    assert [event["restored"] for event in events if "restored" in event] == [["shell.events.callbacks"]]


def test_a_test_cell_that_draws_text_writes_no_error_which_nbgrader_would_fail():
    """Fontconfig finds its configuration in the sandbox: no "Fontconfig error" on standard
    error, which nbgrader scores as a failed test (and a feedback page shows)."""
    cells = graded(("import matplotlib.pyplot as plt\nplt.plot([0])\nx = 1", False),
                   ("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.title('a title')\n"
                    "plt.gcf().canvas.draw()\nassert x == 1", True))
    assert [output.text for output in cells[1].outputs if output.get("name") == "stderr"] == []
    assert errors(cells[1]) == []


def test_an_error_a_test_showed_fails_it_even_when_a_clear_output_takes_it_away():
    """Code that runs after an error a test showed (here, the student's function, which
    shows one and clears it) cannot clear it into a pass: the grader keeps the first error
    each test cell showed."""
    clears = ("import IPython.display\n"
              "def answer():\n"
              "    get_ipython().showtraceback(exc_tuple=(AssertionError, AssertionError('wrong'), None))\n"
              "    IPython.display.clear_output()\n"
              "    return 1")
    cells = graded((clears, False), ("assert answer() == 1", True))
    assert [error.split(" (")[0] for error in errors(cells[1])] == [
        "ErrorCleared: test_1 showed an error that was cleared afterwards"]


def test_images_and_raw_bytes_a_test_shows_are_outputs_within_the_caps_never_a_failure():
    """A PIL image (its PNG as bytes), raw bytes under a MIME type of their own, and an
    image over the per-output cap (cut to a notice): each test still passes."""
    noise = ("import numpy as np\n"
             "big = Image.fromarray(np.random.default_rng(0).integers(0, 255, (1200, 1200, 3), 'uint8'))")
    cells = graded(("from PIL import Image\nimg = Image.new('RGB', (8, 8), 'red')\n" + noise, False),
                   ("display(img)\nassert img.size == (8, 8)", True),
                   ("display({'application/octet-stream': b'\\x00\\xff', 'text/plain': 'two bytes'}, raw=True)", True),
                   ("display(big)\nassert big.size == (1200, 1200)", True))
    assert [errors(cell) for cell in cells[1:]] == [[], [], []]
    assert "image/png" in cells[1].outputs[0].data
    assert cells[2].outputs[0].data["application/octet-stream"]
    assert "[output cut" in cells[3].outputs[0].data["text/plain"]


def _printed(cell) -> str:
    return "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")


def test_a_module_the_notebook_writes_is_never_what_a_test_imports():
    """A student's code writes ``grading_tools.py`` beside the notebook (any library that
    saves a file can) before a test imports a module of that name (installed where the
    tests run, say): the notebook's file is never what the import finds."""
    shadow = "with open('grading_tools.py', 'w') as f:\n    f.write('def check(*args):\\n    return True\\n')"
    cells = graded((shadow, False), ("try:\n    import grading_tools\nexcept ModuleNotFoundError:\n    pass\n"
                                     "else:\n    raise AssertionError('the notebook wrote it')", True))
    assert errors(cells[1]) == []


def test_the_folders_modules_are_imported_as_they_were_when_the_kernel_started():
    """The instructor's module beside the notebook is importable, as it was: rewriting it
    first changes nothing (its copy was taken before any student code)."""
    rewrite = "with open('helpers.py', 'w') as f:\n    f.write('SCALE = 100\\n')"
    cells = graded((rewrite, False), ("from helpers import SCALE\nassert SCALE == 2", True),
                   files={"helpers.py": "SCALE = 2\n"})
    assert errors(cells[1]) == []


def test_a_magic_without_its_percent_is_python_not_a_magic():
    """IPython's automagic would run ``run evil.py`` as ``%run``: the grading kernel has it off."""
    cells = graded(("run evil.py", False), ("assert True", True), files={"evil.py": "print('evil ran')\n"})
    assert "evil ran" not in _printed(cells[0]) and errors(cells[0])
