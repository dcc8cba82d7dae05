"""Grading a class: triage, parallel autograding with nbgrader, merging, reports."""
