"""The TA's command: grade a class's submissions with one call.

    python -m autograder grade                      # the bundled demo class, in a scratch course
    python -m autograder grade --course COURSE      # COURSE/submitted/STUDENT/ASSIGNMENT/
    python -m autograder grade --course COURSE --student alice --force
    python -m autograder grade --course COURSE --zip download.zip --assignment 01-inplace-basics
    python -m autograder grade --course COURSE --lms moodle --zip download.zip --assignment 01-inplace-basics
    python -m autograder export --course COURSE     # grades and feedback to upload to the LMS
"""

from __future__ import annotations

import argparse
import difflib
import shutil
from pathlib import Path

from autograder.course import DEMO_CLASS, Course, scratch_course
from autograder.lms.exports import write_exports
from autograder.lms.formats import chosen_format
from autograder.lms.download import collect_zip
from autograder.grading.pipeline import Options, grade_course
from autograder.results.records import Record, Records
from autograder.reports.write import write_reports
from autograder.status import NOT_GRADED, Status
from autograder.nbgrader_api import quiet_nbgrader_internals
from autograder.sandbox.limits import GiB, MiB
from autograder.terminal import printable

# Command-line flags for grading settings: flag -> (configurable, trait, type, bytes per unit, meaning).
SETTING_FLAGS = {
    "--workers": ("GradingSettings", "workers", int, 1, "notebooks graded at once; 0 for one per core"),
    "--scheduler": ("GradingSettings", "scheduler", str, 1, "where jobs are graded: local, dask-local:N, or a Dask "
                                                           "scheduler's tcp:// or tls:// address"),
    "--notebook-timeout": ("GradingSettings", "notebook_timeout", float, 1, "seconds one notebook may run in all"),
    "--cell-timeout": ("Execute", "timeout", int, 1, "seconds one cell may run"),
    "--memory-limit": ("GradingSettings", "memory_limit", float, GiB, "GiB of memory per kernel, its /tmp included"),
    "--disk-limit": ("GradingSettings", "disk_limit", float, MiB, "MiB a kernel may write to its /tmp"),
    "--file-count-limit": ("GradingSettings", "file_count_limit", int, 1, "files and folders a kernel may create"),
    "--file-size-limit": ("GradingSettings", "file_size_limit", float, MiB, "MiB per file a kernel writes"),
    "--cpu-limit": ("GradingSettings", "cpu_limit", int, 1, "CPU seconds per kernel"),
    "--cpu-cores": ("GradingSettings", "cpu_cores", float, 1, "cores a kernel and its processes may use at once"),
    "--process-limit": ("GradingSettings", "process_limit", int, 1, "processes and threads per sandbox"),
}


LMS_HELP = "overrides c.Lms.format for this run (canvas, the default, or moodle): the learning platform"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade a class.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde every submission, write grades and reports")
    grade.add_argument("--course", type=Path,
                       help="course folder (nbgrader_config.py, source/, submitted/); "
                            "default: a scratch copy of this course with the demo class")
    grade.add_argument("--zip", type=Path, dest="archive",
                       help="an LMS download (a zip of every student's file) to import first (needs --assignment)")
    grade.add_argument("--assignment", help="grade only this assignment (and the one the zip holds)")
    grade.add_argument("--lms", metavar="FORMAT", help=LMS_HELP + " the --zip download comes from")
    grade.add_argument("--zip-pattern",
                       help="regular expression with student_id and file_id groups (and optionally lms_user_id "
                            "and late), matched against the name of each file at the archive's top level "
                            "(default: Canvas' names; for the canvas format only)")
    settings = grade.add_argument_group(
        "settings", "each overrides, for this run, c.GradingSettings.<name> (or c.Execute.timeout) of the "
                    "course's nbgrader_config.py; the report lists every setting in force")
    for flag, (section, trait, kind, scale, meaning) in SETTING_FLAGS.items():
        unit = f", in units of {scale:,} bytes" if scale > 1 else ""
        settings.add_argument(flag, type=kind, dest=trait, metavar=kind.__name__.upper(),
                              help=f"{meaning} ({section}.{trait}{unit})")
    grade.add_argument("--student", action="append", default=[],
                       help="grade only this student (repeatable)")
    grade.add_argument("--force", action="store_true", help="regrade even what is already graded")
    grade.add_argument("--quiet", action="store_true", help="no progress bar (for CI logs)")
    settings.add_argument("--no-sandbox", dest="sandbox", action="store_false", default=None,
                          help="run kernels outside bubblewrap (they are still limited and guarded)")
    settings.add_argument("--insecure", action="store_true", default=None,
                          help="let jobs travel unencrypted to a tcp:// Dask scheduler off this machine")
    export = commands.add_parser("export", help="write grades and feedback to upload to the learning platform "
                                                "into COURSE/grading/exports/")
    export.add_argument("--course", type=Path, required=True, help="course folder, graded")
    export.add_argument("--assignment", action="append", default=[], metavar="NAME",
                        help="export this assignment (repeat for more; default: every one handed out: "
                             "submitted by someone, or past its due date)")
    export.add_argument("--lms", metavar="FORMAT", help=LMS_HELP + " to write the files for")
    return parser


def overrides(args: argparse.Namespace) -> dict:
    """The settings given on the command line, as nbgrader configuration ({Class: {trait: value}})."""
    given: dict[str, dict] = {}
    for section, trait, _, scale, _ in SETTING_FLAGS.values():
        value = getattr(args, trait)
        if value is not None:
            given.setdefault(section, {})[trait] = int(value * scale) if scale > 1 else value
    if args.sandbox is False:
        given.setdefault("GradingSettings", {})["sandbox"] = False
    if args.insecure:
        given.setdefault("GradingSettings", {})["insecure"] = True
    return given


def demo_course(repo: Path, into: Path) -> Path:
    """A scratch course: this course's config and sources, and the bundled demo class
    (both only in the course's repository: an installed grader needs ``--course``)."""
    if not (DEMO_CLASS.is_dir() and Course(repo).assignments()):
        raise SystemExit(f"no --course given, and {repo} is not the course's repository (whose demo class is "
                         "graded without --course): name your course folder with --course")
    if into.exists():
        shutil.rmtree(into)
    course = scratch_course(Course(repo), into)
    shutil.copytree(DEMO_CLASS, course.folder("submitted"))
    return into


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    quiet_nbgrader_internals()
    if args.course and not args.course.is_dir():
        raise SystemExit(f"{args.course} is not a folder: --course names a course folder "
                         "(nbgrader_config.py, source/, submitted/)")
    if args.command == "export":
        export(args.course, args.assignment, args.lms)
        return
    course = args.course or demo_course(Path.cwd(), Path.cwd() / "grading-demo")
    if args.assignment:
        _known(args.assignment, Course(course).assignments(), "assignment", "source/")
    if args.lms and not args.archive:
        raise SystemExit("--lms says which platform the --zip download comes from: give --zip too")
    if args.archive:
        if not args.assignment:
            raise SystemExit("--zip needs --assignment: which assignment the archive holds")
        platform = chosen_format(Course(course).config, args.lms, args.zip_pattern)
        collected = collect_zip(course, args.archive, args.assignment, platform)
        print(f"imported {len(collected.placed)} files of {len({s for s, _ in collected.placed})} students")
        for line in collected.left_out:
            print(printable(f"not imported: {line}"))
        for line in collected.notes:
            print(printable(f"note: {line}"))
    submitted = Course(course).folder("submitted")
    for student in args.student:
        _known(student, sorted(path.name for path in submitted.iterdir()) if submitted.is_dir() else [],
               "student", "submitted/")
    options = Options(force=args.force, students=tuple(args.student), quiet=args.quiet, overrides=overrides(args),
                      assignments=(args.assignment,) if args.assignment else ())
    try:
        run = grade_course(course, options)
    except KeyboardInterrupt:
        raise SystemExit("interrupted: every folder graded so far is saved (grading/records.json); "
                         "run the same command again to grade the rest") from None
    outputs = write_reports(course, run.records, run.settings, run.graded_now)
    for line in outputs.summary_lines():
        print(printable(line))
    if run.unsandboxed_because:
        print(printable(f"WARNING: student code ran UNSANDBOXED ({run.unsandboxed_because})."))
    failed = not_graded(run.records)
    for record in failed:
        label = "GRADER ERROR" if record.status is Status.GRADER_ERROR else "NOT GRADED"
        print(printable(f"{label}: {record.key}: {record.detail}"))
    grader_errors = sum(record.status is Status.GRADER_ERROR for record in failed)
    if failed:
        raise SystemExit(f"{len(failed)} submission folder(s) could not be graded (listed above)"
                         + (f", {grader_errors} of them for a grader error: not scored, the gradebook keeps what "
                            "it had, and the next run grades them again" if grader_errors else "")
                         + "; every other folder was graded")


def export(course: Path, assignments: list[str], lms: str | None = None) -> None:
    """Write the exports for the platform ``lms`` names (default: the course's), and name
    every score they withhold: a TA uploads them knowing what is missing."""
    platform = chosen_format(Course(course).config, lms)
    exported = write_exports(course, chosen=assignments, platform=platform)
    for path in exported.written:
        print(printable(f"wrote: {path}"))
    for line in exported.left_out:
        print(printable(f"not exported: {line}"))
    for line in exported.not_final:
        print(printable(f"NOT FINAL, withheld from {platform.grade_upload} and the feedback archives: {line}"))


def _known(name: str, known: list[str], what: str, where: str) -> None:
    """A one-line error, with the nearest names, when the course has no such ``what``."""
    if name in known:
        return
    near = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; it has {', '.join(known[:10]) or 'none'}"
    raise SystemExit(printable(f"no {what} {name!r} in the course's {where}{hint}"))


def not_graded(records: Records) -> list[Record]:
    """The folders that could not be graded (``status.NOT_GRADED``): the command exits
    non-zero while any is left, as nbgrader's autograde does."""
    return [record for record in records.all() if record.status in NOT_GRADED]
