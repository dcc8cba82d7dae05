"""Answers to every graded function, right ones in several styles and plausible wrong ones.

Module ``tests.answers.<function>`` holds functions named ``right_*`` (must pass every test)
and ``wrong_*`` (must fail at least one hidden test); each docstring says what a student
who wrote it had in mind.
"""
