"""The second witness in a grading run: recorders run in kernels of their own, and a test
that passed in the student's kernel scores only where the values agree with the reference.

For a notebook whose test cells declare recorders (``autograder.witness``):

- **the reference** is recorded once per run, from the instructor's notebook in
  ``source/`` (its set-up and solution cells, then the recorders), in a sandboxed kernel
  no student code reached (as jobs, ``plan.reference_jobs``, at the head of the run's
  queue: no student's result is saved before they are in);
- **the student's record** comes from a second sandboxed kernel per graded notebook, which
  runs the graded notebook's code cells but its tests (the instructor's locked cells as
  nbgrader restored them, the student's answers), then the recorders: no hidden test, no
  verdict logic, nothing the grading kernel's run left behind (``witness_notebook``);
- records come back as the display messages a kernel sends (never a file it wrote), each
  marked with a secret of its recorder's cell (a display the student's own code made
  inside the recorder has none), and are read as data (``witness.decode``);
- the job sends its records back; the run compares them with the references in the TA's
  process (``witness_verdicts``): a test that passed where the records differ, or where
  its record never came (the witness kernel died, ran out of time or failed: unconfirmed
  is not confirmed), scores zero and holds the notebook for review.

This module is what a grading worker runs of it, and imports no torch (``witness_format``).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import nbformat
from nbgrader import utils
from traitlets.config import Config

from autograder import witness_format
from autograder.course import grade_id, split_hidden


def recorders(source: nbformat.NotebookNode, delimiters: tuple[str, str]) -> dict[str, str]:
    """test cell id -> the source of its recorder, for the test cells of ``source`` that have one."""
    found = {}
    for cell in source.cells:
        if cell.cell_type == "code" and _is_test(cell) and grade_id(cell):
            sources = witness_format.recorders_in("\n".join(split_hidden(cell.source, delimiters)[1][1:-1]))
            if sources:
                found[grade_id(cell)] = sources[0]
    return found


def witness_notebook(notebook: nbformat.NotebookNode, test_recorders: dict[str, str]) -> nbformat.NotebookNode:
    """A notebook of ``notebook``'s code cells, outputs cleared, each test cell replaced by
    the cell that runs its recorder (where the test ran: the notebook's later cells do not
    count), which marks its record with a secret of its own. It ends with the last
    recorder: what runs after it cannot change a record (a loop that timed out in the
    grading kernel after the last test that passed is not waited for again)."""
    cells, recorded = [], set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if recorded == test_recorders.keys():
            break
        test = grade_id(cell) if _is_test(cell) else None
        if test is None:
            cells.append(nbformat.v4.new_code_cell(cell.source))
        elif test in test_recorders:
            recorded.add(test)
            secret = secrets.token_hex(16)
            cells.append(nbformat.v4.new_code_cell(
                f"__import__('autograder.witness', fromlist=['run']).run(globals(), "
                f"{ {test: test_recorders[test]}!r}, {secret!r})",
                metadata={"autograder": {"recorder": test, "secret": secret}}))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": notebook.metadata.get("kernelspec", {})})


def run_witness(notebook: nbformat.NotebookNode, folder: Path, config: Config, guard_torch: bool) -> dict[str, dict]:
    """Run a witness notebook in a sandboxed grading kernel (``folder``: the files it may
    see); test cell id -> its record's message data: the one display of its recorder's cell
    that carries the cell's secret (none, or two, is no record). A kernel that could not run
    them all leaves those out, and each is then a difference."""
    from autograder.preprocessors.guarded_execute import GuardedExecute

    executor = GuardedExecute(config=config, guard_torch=guard_torch)
    try:
        executor.preprocess(notebook, {"metadata": {"path": str(folder)}})
    except Exception:  # noqa: BLE001 (a dead, stopped or failing kernel: whatever it recorded so far counts)
        pass
    records = {}
    for cell in notebook.cells:
        mark = cell.metadata.get("autograder", {})
        test, secret = mark.get("recorder"), mark.get("secret")
        if not test:
            continue
        found = [data for output in cell.get("outputs", [])
                 if isinstance(data := output.get("data", {}).get(witness_format.MIME_TYPE), dict)
                 and data.get("secret") == secret and data.get("test") == test]
        if len(found) == 1:
            records[test] = found[0]
    return records


def to_confirm(graded: nbformat.NotebookNode, references: dict[str, dict]) -> list[str]:
    """The test cells of a graded notebook that passed in the grading kernel and have a
    reference record (a test that failed there stays failed, whatever a record says)."""
    return [grade_id(cell) for cell in graded.cells
            if cell.cell_type == "code" and _is_test(cell) and grade_id(cell) in references
            and not any(output.output_type == "error" for output in cell.outputs)]


def _is_test(cell) -> bool:
    return utils.is_grade(cell) and not utils.is_solution(cell)
