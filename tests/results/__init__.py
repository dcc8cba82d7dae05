"""Tests of what grading produced, read back (autograder/results/)."""
