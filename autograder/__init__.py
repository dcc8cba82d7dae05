"""Checks and grading machinery for the PyTorch in-place operations course."""
