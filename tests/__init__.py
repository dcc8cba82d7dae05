"""The tests, laid out as the package is: a folder per folder of ``autograder/``."""
