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

from autograder.grading.nbgrader_run import generate_assignment



def assignments(course: Path) -> list[str]:
    """Every assignment of the course: the folders of its ``source/``, in order."""
    return sorted(path.name for path in (course / "source").iterdir() if path.is_dir())


def generate(course: Path, into: Path) -> list[Path]:
    """Write the student version of every assignment under ``into``; return the notebooks."""
    course, into = course.resolve(), into.resolve()
    with tempfile.TemporaryDirectory(prefix="release-gradebook-") as scratch:
        for assignment in assignments(course):
            generate_assignment(course, assignment, {"CourseDirectory": {
                "release_directory": str(into), "db_url": f"sqlite:///{scratch}/gradebook.db",
            }})
    return sorted(into.glob("*/*.ipynb"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="course root")
    parser.add_argument("--into", type=Path, help="where to write (default: COURSE/release)")
    args = parser.parse_args(argv)
    for notebook in generate(args.course, args.into or args.course / "release"):
        print(f"wrote {notebook}")


if __name__ == "__main__":
    main()
