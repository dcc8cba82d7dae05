"""Tests of what a run leaves for the TA (autograder/reports/)."""
