"""A learning platform as a plug-in, chosen by ``c.Lms.format`` (``--lms`` for one run), as
nbgrader's ``ZipCollectApp.collector_plugin`` and ``ExportApp.plugin_class`` choose
theirs. A format says what the platform's download looks like and who each of its files
is (``read``), what its grade upload holds (``grade_tables``), and how feedback is named
for its bulk upload (``feedback_name``).

A format only reads names and lays out rows. What every platform shares stays out of it,
so that a new format cannot weaken it: ``imports`` reads the download defensively (caps,
plain ids, each student imported whole or not at all, nothing nested unpacked, no link
followed; a format may only declare how many folders deep its students' files are),
``class_grades`` says which scores are final, ``exports`` writes every CSV file through
``csv_files.write_csv``, and ``feedback_archives`` packs only final scores' pages.

This package has ``canvas`` (the default) and ``moodle``; another is a subclass of
``LmsFormat``, named in ``BUILT_IN`` or installed as an entry point of the
``autograder.lms_formats`` group, the way ``grading/schedulers.py`` finds schedulers
(docs/lms.md says how).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from traitlets import TraitError, Unicode
from traitlets.config import Config, Configurable

from autograder.course import Course
from autograder.results.class_grades import ClassGrades, Standing
from autograder.results.lms_records import LmsRecords

GROUP = "autograder.lms_formats"
BUILT_IN = {"canvas": "autograder.lms.canvas:Canvas", "moodle": "autograder.lms.moodle:Moodle"}


class Lms(Configurable):
    """The course's learning platform."""

    format = Unicode("canvas", help=(
        "The learning platform whose download 'python -m autograder grade --zip' imports and whose files "
        "'python -m autograder export' writes: canvas or moodle (or an installed format plug-in); the --lms flag "
        "of either command overrides it for one run.")).tag(config=True)


@dataclass(frozen=True)
class Entry:
    """Who one file of a download is, as the platform's name for it says."""

    student: str  # the student id the name gives (namesakes are told apart later, by their user ids)
    user_id: str  # the platform's id of the student, "" when the name gives none
    late: bool  # the platform marked the file late
    file: str  # the file's own name, as it is imported
    prefix: str  # the platform's name up to the file's own name: feedback named with it finds the student


@dataclass(frozen=True)
class Table:
    """One CSV file of the platform's grade upload, before it is written."""

    file_name: str
    header: tuple[str, ...]
    rows: list[list]


class LmsFormat(ABC):
    """One platform's download, grade upload and feedback names."""

    name = ""  # as c.Lms.format and --lms name it
    title = ""  # as a TA reads it
    # Where the download keeps students' files, as a TA reads it: "in a folder: only LAYOUT is read".
    layout = "the archive's top level"
    # How many folders deep a student's file may be: 0, the archive's top level only; 1,
    # inside one folder per student. Anything deeper is named and left alone.
    folder_depth = 0
    # Whether the platform's user id is the student's in one assignment only (Moodle's
    # participant numbers), not in the whole course (Canvas' user ids): an earlier import
    # of another assignment then says nothing of whose id is whose.
    ids_per_assignment = False
    # What a TA can do when two users' files would share a student id (ends that line).
    apart_hint = ""
    # The grade upload, as a TA reads it: "withheld from GRADE_UPLOAD and the feedback archives".
    grade_upload = ""

    def __init__(self, pattern: str | None = None):
        """``pattern`` (``--zip-pattern``) is for a format whose names one regular
        expression reads; this one reads its own."""
        if pattern is not None:
            raise SystemExit(f"--zip-pattern does not apply to {self.title}'s download, whose names the "
                             f"{self.name} format reads itself")

    @abstractmethod
    def read(self, name: str) -> Entry | str:
        """Who the file ``name`` of a download is, or why it is not imported."""

    @abstractmethod
    def grade_tables(self, course: Course, grades: ClassGrades, lms: LmsRecords) -> tuple[list[Table], list[str]]:
        """The grade upload's files, and every score left out of them (``STUDENT/ASSIGNMENT: why``)."""

    def feedback_name(self, prefixes: dict[str, str], page: str) -> str:
        """The name in the feedback archive of ``page`` (a notebook's feedback) of a student
        whose files the platform named with ``prefixes`` (each file -> its name up to the
        file's own): the platform's name for the page's notebook (else the first notebook,
        else the first file: any of them maps back to the student) with the page's name in
        place of the file's."""
        notebook = f"{Path(page).stem}.ipynb"
        if notebook in prefixes:
            return prefixes[notebook] + page
        notebooks = sorted(name for name in prefixes if name.endswith(".ipynb"))
        return prefixes[(notebooks or sorted(prefixes))[0]] + page


def chosen_format(config: Config, name: str | None = None, pattern: str | None = None) -> LmsFormat:
    """The format ``name`` names (``--lms``), else the course's (``c.Lms.format``); an unknown
    one is refused, with the known ones."""
    try:
        name = name or Lms(config=config).format
    except TraitError as problem:
        raise SystemExit(f"c.Lms.format cannot be used: {problem}") from None
    known = plugins()
    if name not in known:
        raise SystemExit(f"no LMS format {name!r} (c.Lms.format, --lms): the known ones are {', '.join(known)}")
    return known[name].load()(pattern)


def plugins() -> dict[str, EntryPoint]:
    """Every format by name: the built-in ones first (found even before the package's entry
    points are installed), then the other installed ones by name."""
    installed = {entry.name: entry for entry in entry_points(group=GROUP)}
    built_in = {name: installed.pop(name, EntryPoint(name, target, GROUP)) for name, target in BUILT_IN.items()}
    return built_in | dict(sorted(installed.items()))


def shared_users(lms: LmsRecords) -> dict[tuple[str, str], str]:
    """(student, assignment) -> why nothing of theirs may go back to the platform, for each
    platform user whose files of one assignment are kept under two student ids (a name
    changed between two imports, a folder moved by hand): a row or a feedback page for that
    user would carry one student's work to the other, so neither goes back, and a TA
    settles it in the platform."""
    owners: dict[tuple[str, str], set[str]] = {}
    for (student, assignment), kept in lms.by_key.items():
        if kept.user_id:
            owners.setdefault((kept.user_id, assignment), set()).add(student)
    return {(student, assignment): (f"the platform's user {user} of {assignment} is kept under "
                                    f"{len(students)} student ids ({', '.join(sorted(students))}): "
                                    "nothing of theirs is written back; enter their grades in the platform")
            for (user, assignment), students in owners.items() if len(students) > 1 for student in students}


def final_score(cell: Standing) -> float | None:
    """A cell's score as students may see it: none while it is not final."""
    return None if cell.not_final else cell.score
