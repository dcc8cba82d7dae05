"""Tests of the grading kernel's sandbox and bounds (autograder/sandbox/)."""
