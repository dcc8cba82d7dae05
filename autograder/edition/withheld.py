"""What the student edition must never hold: the lines only the instructor's material has.

A secret line is a line of a solution or of a hidden test in ``source/`` (between the
delimiters nbgrader is configured with, or a whole solution cell that has none), stripped
of its indentation, that students do not see anyway. Lines they see are public: what the
source notebooks show outside those regions (the student version is made of it), and the
course's student material shipped as it is, the lecture notebooks and the checks the
visible tests import (``with torch.no_grad():`` is in a solution and in a lecture); and so
is a line that names nothing of its own (brackets, a bare ``else:``). A secret line found
in any file of the edition, anywhere in a notebook (a cell, an output, its metadata), is a
leak.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterable, Iterator, Mapping

from nbgrader import utils
from nbgrader.preprocessors import ClearSolutions

from autograder.course import Course, split_hidden


def secret_lines(course: Course, public_files: Mapping[str, bytes], also: Iterable[str] = ()) -> frozenset[str]:
    """The course's secret lines: its solutions' and hidden tests' lines, and the lines of
    ``also`` (other instructor material, such as an answer suite), less every public line,
    those of the source notebooks outside their regions and those of ``public_files``."""
    instructor, shown = _source_lines(course)
    public = shown | {line for name, data in public_files.items() for line in file_lines(name, data)}
    candidates = instructor | {line.strip() for line in also}
    return frozenset(line for line in candidates - public if informative(line))


def leaks(files: Mapping[str, bytes], secrets: frozenset[str]) -> dict[str, list[str]]:
    """Each file (by name) that holds a secret line, with the secret lines it holds."""
    found = {name: sorted(file_lines(name, data) & secrets) for name, data in sorted(files.items())}
    return {name: lines for name, lines in found.items() if lines}


def file_lines(name: str, data: bytes) -> set[str]:
    """Every stripped line a file holds: of a notebook, the lines of every string in its
    JSON (sources, outputs, metadata); of any other file, the lines of its text."""
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".ipynb"):
        try:
            return {line.strip() for string in _strings(json.loads(text)) for line in string.splitlines()}
        except ValueError:
            pass  # not JSON: searched as the text it is
    return {line.strip() for line in text.splitlines()}


def _source_lines(course: Course) -> tuple[set[str], set[str]]:
    """The stripped lines of every source notebook, as (inside a solution or hidden-test
    region, outside them)."""
    clear = ClearSolutions(config=course.config)
    solution_delimiters = (clear.begin_solution_delimeter, clear.end_solution_delimeter)
    inside, outside = set(), set()
    for assignment in course.assignments():
        for name in course.notebook_names(assignment):
            for cell in course.read("source", assignment, name=name).cells:
                if utils.is_solution(cell) and solution_delimiters[0] not in cell.source:
                    inside.update(line.strip() for line in cell.source.splitlines())
                    continue
                rest, solutions = split_hidden(cell.source, solution_delimiters)
                shown, hidden = split_hidden("\n".join(rest), course.hidden_delimiters)
                inside.update(line.strip() for line in solutions + hidden)
                outside.update(line.strip() for line in shown)
    return inside, outside


def informative(line: str) -> bool:
    """Whether a line names anything of its own: not only brackets and punctuation, not a
    bare keyword (``else:``, ``pass``, ``try:``)."""
    return any(char.isalnum() for char in line) and not keyword.iskeyword(line.rstrip(":").strip())


def _strings(value) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
