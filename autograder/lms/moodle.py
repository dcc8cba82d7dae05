"""Moodle's assignment activity, as its own code reads and writes it (``mod/assign``).

- **The download** ("Download all submissions"): one folder per participant and
  submission plugin, ``John Smith_12345_assignsubmission_file/`` (``..._file_/`` before
  Moodle 4.1), holding the participant's files; with "Download submissions in folders"
  off, the files themselves at the top level, ``John Smith_12345_assignsubmission_file_hw.ipynb``.
  12345 is the participant number Moodle gives the student in this assignment (the
  worksheet's ``Participant 12345``), another in the next assignment. Moodle writes the
  full name with every ``_`` made a space; the student id is made of it as Canvas makes
  its own, its letters and digits in lower case, accents dropped (``johnsmith``), and two
  participants of one name are told apart by their participant numbers
  (``johnsmith-12345``), as Canvas' namesakes are by user id. Only the file plugin's
  files are graded: an online text (``..._assignsubmission_onlinetext/onlinetext.html``)
  is named and left out. Lateness is not in the download. With group submissions Moodle
  names the folder after the group, in the same form, with the group's number where the
  participant's would be: nothing tells the two apart, so such a download must not be
  imported (docs/lms.md says so).
- **The grading worksheet** (``moodle-grading-worksheet-ASSIGNMENT.csv``, for "Upload
  grading worksheet"; the assignment's feedback types need "Offline grading worksheet"):
  the columns of the worksheet Moodle downloads, in its order. Moodle finds them by name
  and needs three: ``Identifier`` (``Participant 12345``), ``Grade`` and
  ``Last modified (grade)``; it reads ``Feedback comments`` into the comment, and ignores
  the others. A row whose grade is empty is skipped, so a score that is not final is left
  empty, never 0. What this grader does not know is left empty: the email address, the
  status, whether the grade can be changed, both times, the comment. An empty
  ``Last modified (grade)`` is older than any grade Moodle holds, which Moodle then keeps
  unless the TA ticks "Allow updating records that have been modified more recently in
  Moodle than in the spreadsheet" (docs/lms.md). One worksheet per assignment, with a row
  for each student its import brought; any other score to report is named, not written.
- **Feedback** ("Upload multiple feedback files in a zip"): each page inside the
  participant's folder of the download (the top-level name, in the flat layout), which
  Moodle reads for the participant number and the plugin.
"""

from __future__ import annotations

import re
import unicodedata

from autograder.course import Course
from autograder.lms.formats import Entry, LmsFormat, Table, final_score, shared_users
from autograder.results.class_grades import ClassGrades
from autograder.results.lms_records import LmsRecords

# The participant's part of a name: full name (no "_" in it), participant number, submission plugin.
PARTICIPANT = r"(?P<full_name>[^/_]+)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)"
# A file of the download: in the participant's folder ("_/" before Moodle 4.1), or beside it (flat).
ENTRY = re.compile(PARTICIPANT + r"(?:_?/|_)(?P<file>[^/]+)")
# The mark after a full name in each name Moodle writes; a full name holding it poses as another participant.
PARTICIPANT_MARK = re.compile(r"_\d+_assignsubmission_")
FILE_PLUGIN = "file"
WORKSHEET_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                     "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                     "Feedback comments")
IDENTIFIER = "Participant {}"  # Moodle's own: its importer strips "Participant " to read the number


class Moodle(LmsFormat):
    name, title = "moodle", "Moodle"
    layout = "what is directly in each participant's folder"
    folder_depth = 1
    ids_per_assignment = True
    apart_hint = "their folders can be copied into submitted/ by hand, each under an id of its own"
    grade_upload = "the Moodle worksheets"

    def read(self, name: str) -> Entry | str:
        match = ENTRY.fullmatch(name)
        if len(PARTICIPANT_MARK.findall(name)) > 1:
            return ("its name holds Moodle's participant mark twice: a full name made to look like another "
                    "participant's folder")
        if match is None:
            return "its name is not one of Moodle's (FULL NAME_PARTICIPANT_assignsubmission_file/FILE)"
        if match["plugin"] != FILE_PLUGIN:
            kind = "an online text" if match["plugin"] == "onlinetext" else f"Moodle's {match['plugin']} submission"
            return f"{kind}, not a file the student handed in: it would not be graded"
        student = student_id(match["full_name"])
        if not student:
            return f"the full name {match['full_name']!r} gives no student id (no letter a to z, no digit)"
        return Entry(student, match["participant"], False, match["file"], name[:match.start("file")])

    def grade_tables(self, course: Course, grades: ClassGrades, lms: LmsRecords) -> tuple[list[Table], list[str]]:
        tables, left_out = [], []
        shared = shared_users(lms)
        for assignment in grades.assignments:
            rows = []
            for student in grades.students:
                cell = grades.standings[(student.id, assignment.name)]
                if (student.id, assignment.name) in shared:
                    left_out.append(f"{student.id}/{assignment.name}: {shared[(student.id, assignment.name)]}")
                    continue
                participant = _participant(lms, student.id, assignment.name)
                if participant is None:
                    score = final_score(cell)
                    if score is not None:
                        left_out.append(f"{student.id}/{assignment.name}: not in the assignment's Moodle download, "
                                        f"so its participant number is unknown: their score {score} is not in "
                                        "the worksheet (enter it in Moodle)")
                    continue
                full_name, number = participant
                rows.append([IDENTIFIER.format(number), full_name, "", "", final_score(cell), assignment.max_score,
                             "", "", "", ""])
            if rows:
                tables.append(Table(f"moodle-grading-worksheet-{assignment.name}.csv", WORKSHEET_COLUMNS, rows))
        return tables, left_out


def student_id(full_name: str) -> str:
    """The id a full name gives: its letters and digits, accents dropped, in lower case."""
    folded = unicodedata.normalize("NFKD", full_name).encode("ascii", "ignore").decode()
    return "".join(char for char in folded.lower() if char.isalnum())


def _participant(lms: LmsRecords, student: str, assignment: str) -> tuple[str, str] | None:
    """(full name, participant number) of ``student`` in ``assignment``, as its Moodle
    import named them; None when no Moodle import brought them."""
    kept = lms.get(student, assignment)
    if kept is None:
        return None
    for prefix in sorted(kept.prefixes.values()):
        match = re.match(PARTICIPANT, prefix)
        if match and match["participant"] == kept.user_id:
            return match["full_name"], kept.user_id
    return None
