"""Tests of submission folders as they arrive (autograder/intake/)."""
