"""Tests of the grading run (autograder/grading/) and nbgrader parity, end to end."""
