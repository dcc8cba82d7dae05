"""The lectures' shape: each one readable in about 45 minutes, each ending with a questionnaire
whose every question has an answer the student can reveal, and no test machinery in sight.

nbval (run by every ``make test``) checks what the lectures' cells print; these tests check
what a reader sees around them.
"""

import re

import nbformat
import pytest

from tests.helpers.assignments import LECTURES

NUMBERED = sorted(LECTURES.glob("0[1-9]-*.ipynb"))  # 00-start-here is a page, not a lecture
MAX_CELLS = 70
# Words of the main text: markdown outside <details> boxes. What a box holds (the
# questionnaire's answers, further reading) is there for whoever opens it.
MAX_WORDS = 2_200
MIN_QUESTIONS = 5
QUESTIONNAIRE = "## Questionnaire"
DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
# A question is a paragraph that starts with its bold number; its answer is the box after it.
QUESTION = re.compile(r"^\*\*(\d+)\.\*\*\s+\S", re.MULTILINE)
ANSWER = re.compile(r"<details>\s*<summary>Answer</summary>(.*?)</details>", re.DOTALL)


def cells(path):
    return nbformat.read(path, as_version=4).cells


def markdown(path):
    return [cell.source for cell in cells(path) if cell.cell_type == "markdown"]


def main_text_words(path) -> int:
    return sum(len(re.findall(r"\w+", DETAILS.sub(" ", source))) for source in markdown(path))


def questionnaire(path) -> str:
    """The markdown from the questionnaire's heading to the next heading of its level."""
    text = "\n\n".join(markdown(path))
    start = text.find(QUESTIONNAIRE)
    assert start >= 0, f"{path.name} has no '{QUESTIONNAIRE}' section"
    end = text.find("\n## ", start + len(QUESTIONNAIRE))
    return text[start:end if end >= 0 else len(text)]


def test_there_are_lectures():
    assert len(NUMBERED) >= 5


@pytest.mark.parametrize("path", NUMBERED, ids=lambda path: path.stem)
def test_a_lecture_fits_in_45_minutes(path):
    assert len(cells(path)) <= MAX_CELLS
    assert main_text_words(path) <= MAX_WORDS


@pytest.mark.parametrize("path", NUMBERED, ids=lambda path: path.stem)
def test_every_question_has_an_answer_to_reveal(path):
    section = questionnaire(path)
    numbers = [int(number) for number in QUESTION.findall(section)]
    assert len(numbers) >= MIN_QUESTIONS
    assert numbers == list(range(1, len(numbers) + 1)), "questions are numbered 1, 2, 3, ..."
    # Each question's paragraph is followed by exactly one answer box with something in it.
    blocks = QUESTION.split(section)[1:]
    for number, block in zip(blocks[::2], blocks[1::2], strict=True):
        answers = ANSWER.findall(block)
        assert len(answers) == 1, f"question {number} needs one <details><summary>Answer</summary> box"
        assert len(re.findall(r"\w+", answers[0])) >= 3, f"question {number}'s answer is empty"


@pytest.mark.parametrize("path", sorted(LECTURES.glob("*.ipynb")), ids=lambda path: path.stem)
def test_no_test_machinery_in_the_text(path):
    """nbval's markers go in cell tags, where students do not read them."""
    for cell in cells(path):
        assert "NBVAL" not in cell.source, cell.source[:80]


def test_the_start_page_links_to_every_lecture_and_assignment():
    """Links, relative to the page, so they open in JupyterLab wherever the course lies."""
    page = LECTURES / "00-start-here.ipynb"
    targets = [target for source in markdown(page) for target in re.findall(r"\]\(([^)\s]+\.ipynb)\)", source)]
    assert {(page.parent / target).resolve() for target in targets} >= {path.resolve() for path in NUMBERED}
    for target in targets:
        assert (page.parent / target).is_file(), target
    assert sum("/release/" in target for target in targets) == len(NUMBERED)


WORDS_A_MINUTE = 200  # reading; and a minute for each code cell, to run it and read what it shows


def reading_minutes(path) -> int:
    """The start page's estimate for a lecture, rounded to 5 minutes."""
    code_cells = sum(cell.cell_type == "code" for cell in cells(path))
    return 5 * round((main_text_words(path) / WORDS_A_MINUTE + code_cells) / 5)


def test_the_start_page_gives_each_lectures_reading_time():
    """Its table says how long each lecture takes, as the lectures are now (an edit that
    lengthens one must update the table)."""
    page = "\n".join(markdown(LECTURES / "00-start-here.ipynb"))
    for path in NUMBERED:
        row = next(line for line in page.splitlines() if line.startswith("|") and f"[{path.stem}](" in line)
        assert re.search(rf"about {reading_minutes(path)} min\b", row), (path.stem, reading_minutes(path), row)
        assert reading_minutes(path) <= 45, f"{path.stem} takes about {reading_minutes(path)} minutes"


def test_every_lecture_links_to_the_decision_procedure():
    for path in NUMBERED:
        assert "00-start-here.ipynb#May-I-write-in-place-here?" in markdown(path)[0], path.stem
