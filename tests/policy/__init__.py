"""Tests of the static scan of student code (autograder/policy/)."""
