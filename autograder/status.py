"""What happened to one submission folder: the words a TA reads in every report."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    GRADED = "graded"
    # Graded, but its code broke the course's policy: a person decides (``policy.scan``).
    HELD = "held for review"
    MISSING = "missing notebook"
    UNREADABLE = "unreadable notebook"
    EMPTY = "empty notebook"
    WRONG_ASSIGNMENT = "notebook from another assignment"
    # A cell ran past the per-cell limit: it scores zero, the rest of the notebook was graded.
    TIMED_OUT = "timed out"
    # The whole submission ran past its time limit and was stopped: nothing graded.
    STOPPED = "stopped at the time limit"
    KERNEL_DIED = "kernel died"
    TAMPERED = "tampered with grading"
    UNKNOWN_ASSIGNMENT = "not an assignment of this course"
    UNKNOWN_STUDENT = "not a student of this course"
    REFUSED = "submission refused"
    FAILED = "grading failed"
    # The grading environment failed (a kernel never started): the notebook is not scored,
    # the gradebook keeps what it had, and the next run grades the folder again.
    GRADER_ERROR = "grader error"


# Folders that could not be graded (as opposed to those graded as zero because nothing was
# there to grade): the command exits non-zero while one is left, and the gradebook marks
# them for manual grading, as nbgrader leaves the submissions it failed on (but a grader
# error, which leaves the gradebook alone).
NOT_GRADED = frozenset({Status.UNREADABLE, Status.STOPPED, Status.KERNEL_DIED, Status.TAMPERED,
                        Status.UNKNOWN_ASSIGNMENT, Status.UNKNOWN_STUDENT, Status.REFUSED, Status.FAILED,
                        Status.GRADER_ERROR})
