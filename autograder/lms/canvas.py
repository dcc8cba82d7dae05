"""Canvas, the default format.

- **The download** ("Download Submissions"): every student's file at the archive's top
  level, named ``smithjohn_LATE_1001_5550_hw.ipynb``: the id Canvas makes of the
  student's name, its late flag, the user id, a file id, the file's own name. A
  ``--zip-pattern`` (a regular expression with ``student_id`` and ``file_id`` groups, and
  optionally ``lms_user_id`` and ``late``) reads other names of that shape.
- **The gradebook import** (``canvas-gradebook.csv``): the columns ``Student``, ``ID``
  (the user id, which Canvas matches first), ``SIS User ID``, ``SIS Login ID`` (the
  student's id in the course, which Canvas matches when the ID is blank), ``Section``,
  then one per assignment, named as in ``source/`` or ``NAME (CANVAS_ID)`` where
  ``c.CanvasExport.assignment_ids`` gives its Canvas id (Canvas then finds it by id; by
  name, a column no assignment has the name of becomes a new assignment); its second row
  is ``Points Possible``. A score that is not final, or that there is nothing to report
  for yet, is blank.
- **Feedback** ("Re-Upload Submissions"): each page at the archive's top level, named as
  Canvas named the student's file up to its own name (``smithjohn_LATE_1001_5550_`` and
  ``hw.html``); Canvas reads the user id and file id there and attaches the page to the
  student's submission as a comment.
"""

from __future__ import annotations

import re

from traitlets import Dict, Int, TraitError, Unicode
from traitlets.config import Configurable

from autograder.course import Course
from autograder.lms.formats import Entry, LmsFormat, Table, final_score
from autograder.results.class_grades import ClassGrades
from autograder.results.lms_records import LmsRecords

DEFAULT_PATTERN = r"(?P<student_id>[^_]+)_(?:(?P<late>(?i:late))_)?(?P<lms_user_id>\d+)_\d+_(?P<file_id>.+)"
CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"


class CanvasExport(Configurable):
    """How the Canvas gradebook CSV names the course's assignments."""

    assignment_ids = Dict(key_trait=Unicode(), value_trait=Int(), help=(
        "Each assignment's id in Canvas (the number in its address), e.g. {'01-inplace-basics': 123456}: "
        "its column is then 'NAME (ID)', which Canvas matches by id")).tag(config=True)


class Canvas(LmsFormat):
    name, title = "canvas", "Canvas"
    apart_hint = "a --zip-pattern whose student_id is the user id tells them apart"
    grade_upload = "the Canvas file"

    def __init__(self, pattern: str | None = None):
        self.pattern = re.compile(pattern or DEFAULT_PATTERN)

    def read(self, name: str) -> Entry | str:
        match = self.pattern.fullmatch(name)
        if match is None:
            return "its name does not fit --zip-pattern"
        said = match.groupdict()
        return Entry(said["student_id"], said.get("lms_user_id") or "", bool(said.get("late")), said["file_id"],
                     name[:match.start("file_id")])

    def grade_tables(self, course: Course, grades: ClassGrades, lms: LmsRecords) -> tuple[list[Table], list[str]]:
        try:
            canvas_ids = CanvasExport(config=course.config).assignment_ids
        except TraitError as problem:
            raise SystemExit(f"c.CanvasExport.assignment_ids cannot be used: {problem}") from None
        header = (*CANVAS_STUDENT_COLUMNS, *(f"{assignment.name} ({canvas_ids[assignment.name]})"
                                             if assignment.name in canvas_ids else assignment.name
                                             for assignment in grades.assignments))
        points = [POINTS_POSSIBLE, "", "", "", "", *(assignment.max_score for assignment in grades.assignments)]
        rows = [[student.name, student.lms_user_id, "", student.id, "",
                 *(final_score(grades.standings[(student.id, assignment.name)]) for assignment in grades.assignments)]
                for student in grades.students]
        return [Table("canvas-gradebook.csv", header, [points, *rows])], []
