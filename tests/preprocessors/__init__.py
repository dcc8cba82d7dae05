"""Tests of nbgrader steps of our own (autograder/preprocessors/)."""
