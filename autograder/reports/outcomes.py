"""How the report counts submission folders: each in exactly one outcome, so that the
headline's numbers add up to the folders there are.

An outcome is read from a folder's status alone (``status.py``), by what it means for the
score, so that a status added there lands in the right outcome without a change here:
held for review (the score stands, not final), not graded (``NOT_GRADED``: no score until
a person grades it), a grader error (not scored, the next run grades it again), or scored
(every other status: a final score, zero where there was nothing to grade). A folder
graded with notes (a repaired cell, a renamed notebook, a file left out) is scored and
graded, and counted once, as graded with notes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from autograder.results.records import Record
from autograder.status import NOT_GRADED, Status

GRADED = "graded"
GRADED_WITH_NOTES = "graded with notes"
SCORED_WITH_A_REASON = "scored with a reason"
HELD = "held for review"
NOT_GRADED_OUTCOME = "not graded"
GRADER_ERROR = "grader error"

# Each outcome, in the order the headline lists them, with what it means for the TA.
MEANINGS = {
    GRADED: "graded; the score is final",
    GRADED_WITH_NOTES: "graded; the score is final; the grader repaired or left out something (Problems)",
    SCORED_WITH_A_REASON: "scored as its status says (a missing, empty or wrong notebook scores zero, a cell "
                          "past its time limit scores zero and the rest counts); the score is final",
    HELD: "scored, not final: read its lines (Code to read), then grade it in the formgrader",
    NOT_GRADED_OUTCOME: "not scored: marked for manual grading in the gradebook; the command exited non-zero",
    GRADER_ERROR: "not scored: the grading environment failed; the gradebook keeps what it had "
                  "and the next run grades the folder again",
}
# The outcomes whose score may reach students as it is.
FINAL = frozenset({GRADED, GRADED_WITH_NOTES, SCORED_WITH_A_REASON})
# What a run can leave unfinished on a folder it ran: the grading itself went wrong.
UNFINISHED = frozenset({Status.GRADER_ERROR, Status.FAILED})


def outcome(record: Record) -> str:
    """The one outcome the report counts ``record``'s folder under."""
    if record.status is Status.GRADED:
        return GRADED_WITH_NOTES if record.problems else GRADED
    if record.status is Status.HELD:
        return HELD
    if record.status is Status.GRADER_ERROR:
        return GRADER_ERROR
    if record.status in NOT_GRADED:
        return NOT_GRADED_OUTCOME
    return SCORED_WITH_A_REASON


@dataclass(frozen=True)
class Tally:
    """One outcome's count, and how many of its folders have each status."""

    outcome: str
    meaning: str
    count: int
    statuses: dict[str, int]


def tallies(records: list[Record]) -> list[Tally]:
    """Every outcome that some folder has, in ``MEANINGS`` order: their counts sum to ``len(records)``."""
    by_outcome: dict[str, Counter] = {name: Counter() for name in MEANINGS}
    for record in records:
        by_outcome[outcome(record)][record.status.value] += 1
    order = {status.value: index for index, status in enumerate(Status)}
    return [Tally(name, MEANINGS[name], sum(statuses.values()),
                  dict(sorted(statuses.items(), key=lambda item: order[item[0]])))
            for name, statuses in by_outcome.items() if statuses]


def this_run(records: list[Record], graded_now: list[str]) -> list[tuple[str, int]]:
    """Each folder once: graded by this run; else run by it and left ungraded (a grader error
    or a failure to grade or save: the next run tries again); else graded by an earlier run
    and not since (a notebook ran then: its time is recorded); else recorded without a
    notebook to run."""
    now = set(graded_now)
    before = [record for record in records if record.key not in now]
    failed = sum(record.key in now and record.status in UNFINISHED for record in records)
    why = Counter(record.why_graded for record in records
                  if record.key in now and record.status not in UNFINISHED and record.why_graded)
    because = "; ".join(f"{count}: {reason}" for reason, count in sorted(why.items(), key=lambda item: -item[1]))
    graded = f"graded by this run ({because})" if because else "graded by this run"
    return [(graded, len(records) - len(before) - failed),
            ("run by this run but not graded (grader error, or grading or saving failed)", failed),
            ("left as an earlier run graded them (unchanged since, or outside this run's --student or "
             "--assignment)", sum(record.seconds > 0 for record in before)),
            ("with no notebook to run (missing, empty, refused...)", sum(not record.seconds for record in before))]
