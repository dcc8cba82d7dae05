"""Tests of the student edition (autograder/edition/)."""
