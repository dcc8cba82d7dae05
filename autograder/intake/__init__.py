"""Submission folders as they arrive: who and what each folder is, which of its files the
grader takes, which notebook of it is graded and why not, and notebooks repaired against
the released version."""
