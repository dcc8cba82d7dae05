"""Compile the student versions (release/) from the instructor notebooks (source/).

This is ``nbgrader generate_assignment`` for every assignment, with a throwaway gradebook
so that compiling never leaves grading state in the course folder. ``make release`` runs
it into ``release/``; the tests run it into a scratch folder and compare.

    python -m autograder.release [--course DIR] [--into DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from autograder.course import Course
from autograder.nbgrader_api import generate_assignment, gradebook_url


def generate(course: Path, into: Path) -> list[Path]:
    """Write the student version of every assignment under ``into``; return the notebooks."""
    course, into = Course(course), into.resolve()
    with tempfile.TemporaryDirectory(prefix="release-gradebook-") as scratch:
        for assignment in course.assignments():
            generate_assignment(course.root, assignment, {"CourseDirectory": {
                "release_directory": str(into), "db_url": gradebook_url(Path(scratch)),
            }})
    return sorted(into.glob("*/*.ipynb"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="course root")
    parser.add_argument("--into", type=Path, help="where to write (default: COURSE/release)")
    args = parser.parse_args(argv)
    for notebook in generate(args.course, args.into or Course(args.course).folder("release")):
        print(f"wrote {notebook}")


if __name__ == "__main__":
    main()
