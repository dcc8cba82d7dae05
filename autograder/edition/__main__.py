"""``python -m autograder.edition``: write the student edition (``build.main``)."""

from autograder.edition.build import main

main()
