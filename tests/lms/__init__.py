"""Tests of learning platforms: imports, formats, exports (autograder/lms/)."""
