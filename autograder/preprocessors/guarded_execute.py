"""nbgrader's Execute step, run in a grading kernel and guarded around every graded cell.

Configured in place of nbgrader's ``Execute`` (``Autograde.autograde_preprocessors``),
it leaves the rest of nbgrader's autograding as it is and changes what decides a score:

- **The kernel.** It starts the course's grading kernel spec (``autograder/sandbox/
  kernels``): sandboxed in bubblewrap, or, when the TA turned the sandbox off
  (``GradingSettings.sandbox``), unsandboxed but still limited and guarded.
  jupyter_client talks to it over Unix sockets in a folder of its own, since a sandboxed
  kernel has no network; no message it sends can be larger
  than ``MAX_MESSAGE_BYTES``, and its outputs are capped as they arrive (``OutputBudget``,
  every byte of every message counted): a notebook that spends its budget is stopped.
- **The guard.** Before each graded cell it asks the kernel to put back every hook a
  student cell could have hijacked (``autograder.sandbox.guard``), then runs an error probe
  cell that must fail, proving errors still reach the notebook. After the graded cell it
  asks again: anything hijacked *during* a test means the test's result cannot be
  trusted. Either way, or when the kernel does not answer the guard at all, the notebook
  is scored as tampered (``TamperedError``). A test cell runs in the notebook's namespace
  made clean by the guard (no name hides a built-in or an earlier test's name), which is
  put back as it was afterwards.
- **Pass or fail.** A test cell passes only when it runs to its end: the grader appends
  a line printing a secret made for that run of that cell, and a cell whose output lacks
  it has failed, whether or not an error was shown (an error hidden from the display
  cannot make a test pass). Its ``execute_result`` is shown but scores nothing, unless
  the instructor marked the cell for partial credit (``partial_credit_cells``), which
  nbgrader then scores by that value as usual.
- **Hidden outputs.** A line printing another secret marks where a test cell's hidden
  tests begin; the cell's metadata says which of its outputs came after it
  (``HIDDEN_OUTPUTS_FROM``), and its feedback page shows none of those.

What the grader observed (a kernel started and ready, guard repairs, cut outputs, timeouts,
a dead kernel, tampering) is written to ``events_log`` as JSON lines: the job's verdict is read from there, never
from the notebook or its logs, which the student's code can write into.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import shutil
import time
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, Execute
from traitlets import Bool, List, Unicode, default

from autograder.course import grade_id, hidden_delimiters
from autograder.settings import GradingSettings
from autograder.preprocessors.hidden_tests import HIDDEN_OUTPUTS_FROM
from autograder.sandbox.outputs import MAX_MESSAGE_BYTES, OutputBudget, OutputBudgetSpent
from autograder.sandbox.kernel_manager import SANDBOXED_KERNEL, UNSANDBOXED_KERNEL, GradingKernelManager
from autograder.sandbox.guard import GUARD_TORCH_VARIABLE
from autograder.message_language import LANGUAGE_VARIABLE

GUARD_EXPRESSION = "__import__('autograder.sandbox.guard', fromlist=['restore']).restore({})"
SET_UP_EXPRESSION = "__import__('autograder.sandbox.guard', fromlist=['set_up']).set_up({})"


class TamperedError(Exception):
    """The notebook interfered with the grading; its results cannot be trusted."""


class StoppedError(Exception):
    """The notebook was stopped before its end (it spent its output budget)."""


# nbgrader's own word to the notebook on what is running it (``utils.setenv`` in Autograde).
NBGRADER_VARIABLES = ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING")


class GuardedExecute(Execute):
    partial_credit_cells = List(Unicode(), help="grade_ids of test cells whose execute_result is "
                                                "their score (nbgrader's partial credit).").tag(config=True)
    events_log = Unicode("", help="File that receives one JSON line per event the grader observed.").tag(config=True)
    guard_torch = Bool(True, help="Whether the kernel's guard snapshots torch (the assignment uses it)."
                       ).tag(config=True)
    message_language = Unicode("", help="The language the checks speak in the kernel ('ko', 'zh', 'ja'; empty: "
                                        "English): the notebook's own, so that its feedback is.").tag(config=True)

    @default("iopub_timeout")
    def _output_lag(self) -> int:
        """How long a cell's output may come after its reply (nbclient's 4 s): longer than a
        loaded machine's lag (a kernel reclaiming memory under its cap once took more in the
        test suite, and its output was called lost), a third of the course's cell limit."""
        return 20

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)
        super().__init__(*args, **kwargs)
        self.settings = GradingSettings(parent=self)
        self._budget = OutputBudget(self.settings.output_limit, self.settings.notebook_output_limit)
        # The secret lines of the test cell now running (its hidden tests begin, it ended),
        # whether its output showed the end, and which of its outputs came from its hidden tests.
        self._token: str | None = None
        self._boundary: str | None = None
        self._ran_to_end = False
        self._error_shown: str | None = None  # the first error a test cell showed, whatever became of it
        self._hidden_from: int | None = None
        self._kernel_folder: Path | None = None
        self.on_notebook_start = self._kernel_ready

    @default("kernel_name")
    def _grading_kernel(self) -> str:
        return SANDBOXED_KERNEL if GradingSettings(parent=self).sandbox else UNSANDBOXED_KERNEL

    @default("store_widget_state")
    def _no_widget_state(self) -> bool:
        return False

    @default("shutdown_kernel")
    def _killed_at_the_end(self) -> str:
        # Every output is in by then, and nothing in a grading kernel needs a graceful end:
        # jupyter_client waits at least a tenth of a second for one.
        return "immediate"

    def create_kernel_manager(self):
        """The grading kernel's manager, its environment set. No student code runs until the
        kernel is ready (``on_notebook_start``): a start that never gets there is the
        grading environment's failure, never the notebook's."""
        km = super().create_kernel_manager()
        # A clean environment, sandboxed or not (the TA's may hold secrets), but for the limits
        # and what nbgrader tells notebooks: NBGRADER_EXECUTION=autograde while it grades.
        told = {name: os.environ[name] for name in NBGRADER_VARIABLES if name in os.environ}
        km.kernel_environment = {**told, **self.settings.limits().to_environment(),
                                 GUARD_TORCH_VARIABLE: "1" if self.guard_torch else "0",
                                 **({LANGUAGE_VARIABLE: self.message_language} if self.message_language else {})}
        # Known before the start, so that a kernel that never starts leaves no folder either.
        self._kernel_folder = Path(km.connection_file).parent
        self._event(kernel_starting=True)
        return km

    def _kernel_ready(self, notebook) -> None:
        self._event(kernel_ready=True)

    def preprocess(self, nb, resources=None, km=None):
        self._budget = OutputBudget(self.settings.output_limit, self.settings.notebook_output_limit)
        try:
            return super().preprocess(nb, resources, km)
        except DeadKernelError:
            self._event(kernel_died=True)
            raise
        except TamperedError as tampered:
            self._event(tampered=str(tampered))
            raise
        except OutputBudgetSpent as spent:
            self._event(stopped=f"its outputs reached {spent}: the notebook was stopped there")
            raise StoppedError(str(spent)) from None
        finally:
            for note in self._budget.notes:
                self._event(problem=note)
            if self._kernel_folder:  # the kernel's private folder, whichever way the kernel ended
                shutil.rmtree(self._kernel_folder, ignore_errors=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and is_set_up(cell):
            name = f"set-up cell {grade_id(cell)}"
            restored = self._restore(name, expression=SET_UP_EXPRESSION.format(""))
            if restored:
                self._event(cell=name, restored=restored)
            cell, resources = self._timed(cell, resources, index)
            self._restore(f"the cell after {name}", expression=SET_UP_EXPRESSION.format(bound_names(cell.source)))
            return cell, resources
        if not (cell.cell_type == "code" and utils.is_grade(cell)) or utils.is_solution(cell):
            # A hand-graded answer (a graded solution cell) is the student's code, scored by a
            # person from what it shows (nbgrader gives it no automatic score): it runs as
            # written, its value and its figures shown, its names kept for the cells after it.
            return self._timed(cell, resources, index)
        name = grade_id(cell) or f"cell {index}"
        restored = self._restore(name, test=True)
        if restored:
            self._event(cell=name, restored=restored)
        self._run_error_probe(name, resources, index)
        cell.metadata.pop("autograder", None)  # the grader's to write: a student's copy could claim anything
        if name in self.partial_credit_cells:
            cell, resources = self._marked(name, cell, resources, index, ends=False)
        else:
            cell, resources = self._pass_or_fail(name, cell, resources, index)
        if self._hidden_from is not None:
            start = min(self._hidden_from, len(cell.outputs))
        else:  # never reached its hidden tests, or their mark was lost (cut with a flood before it): show none
            start = 0 if hidden_delimiters(ClearHiddenTests(parent=self))[0] in cell.source else len(cell.outputs)
        cell.metadata["autograder"] = {HIDDEN_OUTPUTS_FROM: start}
        during = self._restore(name)
        if during:
            raise TamperedError(f"while {name} ran, the notebook changed {', '.join(during)}")
        return cell, resources

    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"].startswith("comm") or msg["msg_type"] == "update_display_data":
            # Widgets: nothing to grade, and their state would bypass the caps. Updates of a
            # display (by its id, in any cell) could rewrite what a page shows with what the
            # hidden tests' run made: every display stays as it was sent.
            return None
        transient = msg["content"].get("transient")
        if isinstance(transient, dict):
            transient.pop("display_id", None)
        boundary = self._boundary and f"{self._boundary}\n"
        if boundary and self._hidden_from is None and msg["msg_type"] == "stream" \
                and boundary in msg["content"].get("text", ""):
            before, _, after = msg["content"]["text"].partition(boundary)
            if before:
                self._kept({**msg, "content": {**msg["content"], "text": before}}, cell, cell_index)
            self._hidden_from = len(cell.outputs)
            if not after:
                return None
            msg = {**msg, "content": {**msg["content"], "text": after}}
        elif boundary and self._hidden_from is not None and msg["msg_type"] == "clear_output":
            self._hidden_from = 0  # it could rewrite what the visible tests showed
        return self._kept(msg, cell, cell_index)

    def _kept(self, msg, cell, cell_index):
        """The message into the cell's outputs, through the output budget; the line that
        ends a test (printed alone: the cell's source, which a leak may print, holds it in quotes) noted,
        and so is the first error a test shows (a ``clear_output`` after it cannot take it back)."""
        if self._token and msg["msg_type"] == "error" and self._error_shown is None:
            self._error_shown = f"{msg['content'].get('ename')}: {msg['content'].get('evalue')}"[:300]
        ended = self._token and f"{self._token}\n"
        if ended and msg["msg_type"] == "stream" and ended in msg["content"].get("text", ""):
            msg["content"]["text"] = msg["content"]["text"].replace(ended, "")
            self._ran_to_end = True
        content = self._budget.admit(msg["msg_type"], msg["content"])
        if content is None:
            return None
        msg["content"] = content
        return super().process_message(msg, cell, cell_index)

    def _timed(self, cell, resources, index):
        """Run a cell; note it when it ran into the per-cell timeout, or when its output was
        lost (a message over ``MAX_MESSAGE_BYTES`` is dropped unread, and the cell's
        closing message may go with it): then it ends with an error, so a test fails."""
        name = grade_id(cell) or f"cell {index}"
        started = time.monotonic()
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:  # only raised when the output stops coming (raise_on_iopub_timeout)
            lost = (f"the output of {name} was lost: it had not ended {self.iopub_timeout} s after the cell's reply "
                    f"(a message over {MAX_MESSAGE_BYTES // 2**20} MiB is dropped unread; or the kernel was too slow)")
            self._event(problem=lost)
            cell.outputs.append(nbformat.v4.new_output("error", ename="OutputLost", evalue=lost,
                                                       traceback=[f"OutputLost: {lost}"]))
            return cell, resources
        if self.timeout and cell.cell_type == "code" and time.monotonic() - started >= self.timeout:
            self._event(timed_out=name)
        return cell, resources

    def _marked(self, name: str, cell, resources, index, ends: bool):
        """Run a test cell with a line that tells where its hidden tests begin and, if
        ``ends``, a last line that proves it ran to its end."""
        source = cell.source
        self._boundary = f"[{name}: hidden tests from here: {secrets.token_hex(16)}]"
        self._token = f"[{name} ran to its end: {secrets.token_hex(16)}]" if ends else None
        self._ran_to_end, self._hidden_from, self._error_shown = False, None, None
        cell.source = with_boundary(source, self._boundary, hidden_delimiters(ClearHiddenTests(parent=self)))
        if ends:
            cell.source += f"\n{printed_whole(self._token)}"
        try:
            return self._timed(cell, resources, index)
        finally:
            cell.source, self._token, self._boundary = source, None, None

    def _pass_or_fail(self, name: str, cell, resources, index):
        """Run a test cell with a line that proves it ran to its end; score it pass/fail."""
        cell, resources = self._marked(name, cell, resources, index, ends=True)
        cell.outputs = [output for output in cell.outputs
                        if not (output.output_type == "stream" and output.text == "")]
        for output in cell.outputs:
            if output.output_type == "execute_result":
                output.output_type = "display_data"
                output.pop("execution_count", None)
        failed = any(output.output_type == "error" for output in cell.outputs)
        if self._error_shown is not None and not failed:  # shown, then cleared: it failed all the same
            cleared = f"{name} showed an error that was cleared afterwards ({self._error_shown})"
            cell.outputs.append(nbformat.v4.new_output("error", ename="ErrorCleared", evalue=cleared,
                                                       traceback=[f"ErrorCleared: {cleared}"]))
            self._event(problem=f"{name} showed an error that was cleared afterwards", hidden_error=name)
            failed = True
        if not self._ran_to_end and not failed:
            cell.outputs.append(nbformat.v4.new_output(
                "error", ename="TestIncomplete", evalue=f"{name} stopped before its end without showing an error",
                traceback=[f"TestIncomplete: {name} stopped before its end without showing an error"]))
            self._event(problem=f"{name} stopped before its end without showing an error (an error was hidden?)",
                        hidden_error=name)
        return cell, resources

    def _restore(self, name: str, test: bool = False, expression: str | None = None) -> list[str]:
        """Ask the kernel's guard to put everything back (and, with ``test``, to make the
        notebook's namespace clean for the test cell that runs next), or to evaluate another
        of its ``expression``s; return what it put back."""
        expression = expression or GUARD_EXPRESSION.format("True" if test else "")
        msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"guard": expression})
        try:
            answer = self.wait_for_reply(msg_id)["content"]["user_expressions"]["guard"]
        except DeadKernelError:
            raise
        except Exception as failure:  # noqa: BLE001 (any way the answer fails to come is the same verdict)
            raise TamperedError(f"the kernel did not run the grader's guard before {name} "
                                f"({type(failure).__name__})") from None
        if answer.get("status") != "ok":
            raise TamperedError(f"the grader's guard failed before {name}: "
                                f"{answer.get('ename')}: {answer.get('evalue')}")
        report = json.loads(_unquoted(answer["data"]["text/plain"]))
        restored, tampered = list(report["restored"]), list(report["tampered"])
        if tampered:
            raise TamperedError(f"before {name}: {', '.join(tampered)}")
        return restored

    def _run_error_probe(self, name: str, resources, index: int) -> None:
        """A cell that raises must still end with an error: otherwise errors are hidden."""
        token = secrets.token_hex(8)
        probe = nbformat.v4.new_code_cell(f"raise AssertionError('error probe {token}')")
        try:
            self.execute_cell(probe, index, store_history=False)
        except DeadKernelError:
            raise
        except Exception as failure:  # noqa: BLE001 (a kernel that stops answering is not trusted)
            raise TamperedError(f"the kernel stopped answering before {name} ({type(failure).__name__})") from None
        if not any(output.output_type == "error" for output in probe.outputs):
            raise TamperedError(f"before {name}, a failing cell no longer showed its error")

    def _event(self, **event) -> None:
        if self.events_log:
            with open(self.events_log, "a", encoding="utf-8") as log:
                log.write(json.dumps(event) + "\n")


def bound_names(source: str) -> list[str]:
    """The names a cell's top-level statements bind: imports, definitions, assignments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def is_set_up(cell) -> bool:
    """A locked cell of the instructor's that is neither a test nor an answer. Its id is
    what makes it the instructor's: nbgrader's autograde has put back the instructor's
    source of every locked cell with an id the gradebook knows, and taken the id off any
    other; a student's own cell marked locked, without an id, is an ordinary cell."""
    marks = cell.metadata.get("nbgrader", {})
    return (bool(marks.get("locked")) and bool(marks.get("grade_id"))
            and not marks.get("grade") and not marks.get("solution"))


def _unquoted(shown: str) -> str:
    """The string whose repr IPython sent (the guard's answer: ASCII JSON), without
    ``ast.literal_eval``: CPython 3.11's ast raised a ``SystemError`` (recursion depth
    mismatch) deep in nbgrader's stack, failing one notebook in eighty."""
    return shown[1:-1].encode("ascii").decode("unicode_escape")


def printed_whole(line: str) -> str:
    """A statement that prints ``line`` and its newline in one write. ``print(line)``
    writes them apart, and a kernel under load may flush its output between the two
    writes: the line then comes in one message and its newline in the next, and a marker
    looked for with its newline (so that a printed cell source, where it stands in quotes,
    is no marker) goes unseen: a test that ran to its end would be scored incomplete."""
    return f"print({line + chr(10)!r}, end='')"


def with_boundary(source: str, line: str, delimiters: tuple[str, str]) -> str:
    """``source`` with a statement printing ``line`` just before its hidden tests begin
    (indented as their first line), or unchanged when it has none."""
    lines = source.split("\n")
    for number, text in enumerate(lines):
        if delimiters[0] in text:
            indent = text[:len(text) - len(text.lstrip())]
            return "\n".join([*lines[:number], f"{indent}{printed_whole(line)}", *lines[number:]])
    return source
