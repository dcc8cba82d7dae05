"""CSV files quote every field and never start a cell with a formula; the terminal shows
control characters instead of obeying them."""

from __future__ import annotations

import csv

from autograder.csv_files import safe_cell, write_csv
from autograder.terminal import printable


def test_a_forged_row_stays_one_field(tmp_path):
    path = tmp_path / "grades.csv"
    student = 'eve",10.0\nmallory,10.0,'
    write_csv(path, ("student", "score"), [(student, 3.0), ("=HYPERLINK(\"http://x\",\"click\")", 1)])
    with path.open(newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows == [["student", "score"], [student, "3.0"], ["'=HYPERLINK(\"http://x\",\"click\")", "1"]]
    assert path.read_text().splitlines()[0] == '"student","score"'


def test_formula_starts_are_neutralised_and_numbers_kept():
    assert [safe_cell(value) for value in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "ada", -1.5, 0, None)] == [
        "'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", "ada", -1.5, 0, ""]


def test_the_terminal_sees_escapes_not_control_characters():
    shown = printable("ada\x1b[2K\x1b]0;owned\x07\u202egnp.exe\nbo")
    assert shown == "ada\\x1b[2K\\x1b]0;owned\\x07\\u202egnp.exe\\nbo"
    assert printable("José, 01-inplace-basics (1).ipynb") == "José, 01-inplace-basics (1).ipynb"
