"""The second witness's verdict, in the TA's process: where the grading kernel said a
test passed and the student's record differs from the reference's (or never came), the
test cell gets an error output saying so (it then scores zero, in the gradebook and on
the feedback page) and the notebook is held for review, the difference named for the TA.
A test that failed in the kernel stays failed, whatever the records say."""

from __future__ import annotations

import nbformat

from autograder import witness
from autograder.course import grade_id
from autograder.grading import witness_runs

WITNESS_ERROR = "WitnessDisagreement"


def disagreements(graded: nbformat.NotebookNode, references: dict[str, dict],
                  records: dict[str, dict]) -> dict[str, list[str]]:
    """test cell id -> what differs, for each test that passed in the grading kernel
    whose record disagrees with the reference's (or never came)."""
    found = {}
    for test in witness_runs.to_confirm(graded, references):
        student = witness.decode(records[test]) if test in records else \
            witness.Record([], {}, "the witness kernel sent no record (it stopped, or the notebook's code failed)")
        differences = witness.compare(witness.decode(references[test]), student)
        if differences:
            found[test] = differences
    return found


def mark_failed(graded: nbformat.NotebookNode, found: dict[str, list[str]]) -> None:
    """An error output at the end of each test cell in ``found``: it scores zero."""
    for cell in graded.cells:
        if grade_id(cell) in found:
            message = ("the tests passed in your notebook's kernel, but the values your code computed on the hidden "
                       "cases, recorded in a second kernel, differ from the instructor's solution's; a person will "
                       "look at this notebook")
            cell.outputs.append(nbformat.v4.new_output("error", ename=WITNESS_ERROR, evalue=message,
                                                       traceback=[f"{WITNESS_ERROR}: {message}"]))


def held_lines(notebook: str, found: dict[str, list[str]]) -> list[str]:
    """The lines a TA reads for each disagreement (the report's "Code to read")."""
    return [f"{notebook}: {test} passed in the grading kernel, but the second witness recorded other values than "
            f"the reference: {'; '.join(differences)}"[:600] for test, differences in found.items()]
