"""The TA's command: grade a class's submissions with one call.

    python -m autograder grade                      # the bundled demo class, in a scratch course
    python -m autograder grade --course COURSE      # COURSE/submitted/STUDENT/ASSIGNMENT/
    python -m autograder grade --course COURSE --student alice --force
    python -m autograder grade --course COURSE --zip download.zip --assignment 01-inplace-basics
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from autograder.grading.lms import DEFAULT_PATTERN, collect_zip
from autograder.grading.nbgrader_run import quiet_nbgrader_internals
from autograder.grading.pipeline import Options, grade_course
from autograder.grading.reports import write_reports
from autograder.sandbox.limits import GiB, Limits
from autograder.terminal import printable

DEMO_CLASS = Path(__file__).parent / "demo_class"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade a class.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde every submission, write grades and reports")
    grade.add_argument("--course", type=Path,
                       help="course folder (nbgrader_config.py, source/, submitted/); "
                            "default: a scratch copy of this course with the demo class")
    grade.add_argument("--zip", type=Path, dest="archive",
                       help="an LMS download (a zip of every student's file) to import first (needs --assignment)")
    grade.add_argument("--assignment", help="the assignment the zip holds")
    grade.add_argument("--zip-pattern", default=DEFAULT_PATTERN,
                       help="regular expression with student_id and file_id groups, matched against the "
                            "name of each file at the archive's top level (default: Canvas-style names)")
    grade.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                       help="notebooks graded at once (default: one per core)")
    grade.add_argument("--notebook-timeout", type=float, default=600.0,
                       help="seconds one notebook may run in all (default 600; per cell: nbgrader_config.py)")
    grade.add_argument("--cell-timeout", type=int,
                       help="seconds one cell may run (default: Execute.timeout in nbgrader_config.py)")
    grade.add_argument("--student", action="append", default=[],
                       help="grade only this student (repeatable)")
    grade.add_argument("--force", action="store_true", help="regrade even what is already graded")
    grade.add_argument("--quiet", action="store_true", help="no progress bar (for CI logs)")
    grade.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                       help="run kernels outside bubblewrap (they are still limited and guarded)")
    grade.add_argument("--memory-limit", type=float, default=Limits.memory_bytes / GiB,
                       help="GiB of memory per kernel (default %(default)g)")
    return parser


def demo_course(repo: Path, into: Path) -> Path:
    """A scratch course: this course's config and sources, and the bundled demo class."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    shutil.copy(repo / "nbgrader_config.py", into)
    shutil.copytree(repo / "source", into / "source")
    shutil.copytree(DEMO_CLASS, into / "submitted")
    return into


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    quiet_nbgrader_internals()
    course = args.course or demo_course(Path.cwd(), Path.cwd() / "grading-demo")
    if args.archive:
        if not args.assignment:
            raise SystemExit("--zip needs --assignment: which assignment the archive holds")
        collected = collect_zip(course, args.archive, args.assignment, args.zip_pattern)
        print(f"imported {len(collected.placed)} files of {len({s for s, _ in collected.placed})} students")
        for line in collected.left_out:
            print(printable(f"not imported: {line}"))
    options = Options(workers=args.workers, notebook_timeout=args.notebook_timeout,
                      cell_timeout=args.cell_timeout,
                      force=args.force, students=tuple(args.student), quiet=args.quiet,
                      sandbox=args.sandbox, limits=Limits(memory_bytes=int(args.memory_limit * GiB)))
    run = grade_course(course, options)
    outputs = write_reports(course, run.records)
    for line in outputs.summary_lines():
        print(printable(line))
    if run.unsandboxed_because:
        print(printable(f"WARNING: student code ran UNSANDBOXED ({run.unsandboxed_because})."))
