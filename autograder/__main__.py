"""Command line: ``python -m autograder grade ...`` (see ``--help``)."""

from autograder.cli import main

main()
