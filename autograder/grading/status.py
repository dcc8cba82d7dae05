"""What happened to one submission folder: the words a TA reads in every report."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    GRADED = "graded"
    # Graded, but its code broke the course's policy: a person decides (``policy``).
    HELD = "held for review"
    MISSING = "missing notebook"
    UNREADABLE = "unreadable notebook"
    EMPTY = "empty notebook"
    WRONG_ASSIGNMENT = "notebook from another assignment"
    TIMED_OUT = "timed out"
    KERNEL_DIED = "kernel died"
    TAMPERED = "tampered with grading"
    UNKNOWN_ASSIGNMENT = "not an assignment of this course"
    REFUSED = "submission refused"
    FAILED = "grading failed"

