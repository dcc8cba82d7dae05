"""Bringing a folder's outcome into the course: what the gradebook holds for a folder that
could not be graded, and for a student the course does not create."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook, MissingEntry

from autograder import gradebook as gradebook_module
from autograder.course import Course
from autograder.gradebook import register_assignments
from autograder.grading import collect, jobs
from autograder.grading.jobs import JobResult
from autograder.results.records import Record, Records
from autograder.status import Status

pytestmark = pytest.mark.slow  # each test makes a course and its gradebook through nbgrader: about half a second

TEST_CELL = {"grade": True, "grade_id": "check", "locked": True, "points": 2, "schema_version": 3, "solution": False}


@pytest.fixture
def course(tmp_path):
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[new_code_cell("assert True", metadata={"nbgrader": TEST_CELL})]),
                   tmp_path / "source" / "ps1" / "p1.ipynb")
    return tmp_path


def saved(root, status: Status):
    course = Course(root)
    register_assignments(course)
    collect.save(course, Records(root / "records.json"), Record("eve", "ps1", status, "why"))
    with Gradebook(course.gradebook_url) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook("p1", "ps1", "eve")
        except MissingEntry:
            return None
        return notebook.score, notebook.max_score, notebook.needs_manual_grade


def test_a_folder_that_could_not_be_graded_is_left_for_a_person_as_nbgrader_leaves_it(course):
    assert saved(course, Status.KERNEL_DIED) == (0.0, 2.0, True)


def test_a_folder_with_nothing_to_grade_scores_zero(course):
    assert saved(course, Status.MISSING) == (0.0, 2.0, False)


def test_a_student_the_course_does_not_create_never_reaches_the_gradebook(course):
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.Autograde.create_student = False\n")
    assert saved(course, Status.REFUSED) is None
    assert Records(course / "records.json").get("eve", "ps1").status is Status.REFUSED


def test_a_grader_error_changes_nothing_but_its_record_and_is_graded_again(course):
    """A kernel that never started says nothing of the student: the gradebook and the
    feedback page keep what the last grading gave, and the record has no fingerprint,
    so the next run grades the folder again."""
    assert saved(course, Status.MISSING) == (0.0, 2.0, False)
    page = Course(course).folder("feedback", "eve", "ps1") / "p1.html"
    page.parent.mkdir(parents=True)
    page.write_text("the last feedback")
    records = Records(course / "records.json")
    planned = Record("eve", "ps1", Status.GRADED, fingerprint="files and source")
    result = JobResult("eve", "ps1", Status.GRADER_ERROR, "a grading kernel never became ready", 1.0)
    assert collect.finish(Course(course), records, planned, None, result) is Status.GRADER_ERROR
    with Gradebook(Course(course).gradebook_url) as gradebook:
        notebook = gradebook.find_submission_notebook("p1", "ps1", "eve")
        assert (notebook.score, notebook.needs_manual_grade) == (0.0, False)
    assert page.read_text() == "the last feedback"
    record = Records(course / "records.json").get("eve", "ps1")
    assert (record.status, record.fingerprint) == (Status.GRADER_ERROR, "")


@pytest.fixture
def job_course(course, tmp_path_factory) -> Course:
    """A grading job's scratch course after nbgrader's autograde: its gradebook (a copy of
    the course's) holds eve's graded submission, its ``autograded/`` her graded notebook."""
    register_assignments(Course(course))
    root = tmp_path_factory.mktemp("job")
    shutil.copytree(course, root, dirs_exist_ok=True)
    job = Course(root)
    with Gradebook(job.gradebook_url) as gradebook:
        gradebook.update_or_create_student("eve")
        gradebook.update_or_create_submission("ps1", "eve", timestamp="2026-11-27 10:00:00")
        grade = gradebook.find_grade("check", "p1", "ps1", "eve")
        grade.auto_score, grade.needs_manual_grade = 2.0, False
        gradebook.find_submission_notebook("p1", "ps1", "eve").late_submission_penalty = 0.5
        gradebook.db.commit()
    graded = job.folder("autograded", "eve", "ps1")
    graded.mkdir(parents=True)
    (graded / "p1.ipynb").write_text("the graded notebook")
    (graded / "leak").symlink_to("/etc/hostname")
    return job


def test_a_jobs_rows_come_over_as_nbgrader_wrote_them(course, job_course):
    """A grade a person gave since the run began is marked for review (as nbgrader's
    autograde marks it)."""
    main = Course(course)
    with Gradebook(main.gradebook_url) as gradebook:
        gradebook.update_or_create_student("eve")
        gradebook.update_or_create_submission("ps1", "eve")
        gradebook.find_grade("check", "p1", "ps1", "eve").manual_score = 1.0
        gradebook.db.commit()
    rows = gradebook_module.submission_rows(job_course, "ps1", "eve")
    gradebook_module.merge_rows(main, "ps1", "eve", rows, ran={"p1"})
    with Gradebook(main.gradebook_url) as gradebook:
        notebook = gradebook.find_submission_notebook("p1", "ps1", "eve")
        grade = gradebook.find_grade("check", "p1", "ps1", "eve")
        assert (grade.auto_score, grade.manual_score, grade.needs_manual_grade) == (2.0, 1.0, True)
        assert notebook.late_submission_penalty == 0.5
        assert str(gradebook.find_submission("ps1", "eve").timestamp).startswith("2026-11-27 10:00:00")


def test_a_jobs_graded_folder_is_read_without_a_link_followed_and_replaces_the_last(course, job_course):
    main = Course(course)
    stale = main.folder("autograded", "eve", "ps1")
    stale.mkdir(parents=True)
    (stale / "old.ipynb").write_text("last run's")
    place = SimpleNamespace(graded=job_course.folder("autograded", "eve", "ps1"))
    (place.graded / "p1.ipynb").chmod(0o4755)
    read = jobs._graded_folder(place)
    assert read == {"p1.ipynb": (b"the graded notebook", 0o755)}  # the link left out, no setuid bit
    collect._write_graded_folder(read, stale)
    assert [path.name for path in stale.iterdir()] == ["p1.ipynb"]
    assert (stale / "p1.ipynb").read_text() == "the graded notebook"


def test_a_graded_file_whose_name_leaves_its_folder_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="leaves its folder"):
        collect._write_graded_folder({"../escaped": (b"x", 0o644)}, tmp_path / "graded")
    assert not (tmp_path / "escaped").exists()


def test_a_job_of_a_student_the_course_does_not_know_is_not_merged(course, job_course):
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.Autograde.create_student = False\n")
    with pytest.raises(RuntimeError, match="No student with ID 'eve'"):
        gradebook_module.merge_rows(Course(course), "ps1", "eve",
                                    gradebook_module.submission_rows(job_course, "ps1", "eve"), ran={"p1"})


def test_a_held_notebook_has_its_scoring_tests_marked_and_nothing_else(tmp_path):
    """Held for review: in the notebook the scan flagged, the tests that scored need a
    person (a forgery only adds points); the other notebook of the folder and the tests
    that scored nothing keep their autograde, so the formgrader points at the right cells."""
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    for name in ("p1", "p2"):
        cells = [new_code_cell("assert True", metadata={"nbgrader": {**TEST_CELL, "grade_id": f"{name}_{test}"}})
                 for test in ("a", "b")]
        nbformat.write(new_notebook(cells=cells), tmp_path / "source" / "ps1" / f"{name}.ipynb")
    course = Course(tmp_path)
    register_assignments(course)
    gradebook_module.record_zero(course, "ps1", "eve")
    rows = {"scores": {("p1", "p1_a"): (2.0, False), ("p1", "p1_b"): (0.0, False),
                       ("p2", "p2_a"): (2.0, False), ("p2", "p2_b"): (2.0, False)}}
    review = collect._to_review(["p1.ipynb"], {}, rows)
    assert review == {"p1": ["p1_a"]}
    def marked_after(cells):
        gradebook_module.hold_for_review(course, "ps1", "eve", cells)
        with Gradebook(course.gradebook_url) as gradebook:
            return {grade.name for notebook in gradebook.find_submission("ps1", "eve").notebooks
                    for grade in notebook.grades if grade.needs_manual_grade}
    assert marked_after(review) == {"p1_a"}
    # a cell the gradebook does not know (a name that went wrong): every grade, never none
    assert marked_after({"p2": ["no_such_test"]}) == {"p1_a", "p1_b", "p2_a", "p2_b"}


def test_what_a_person_must_grade_in_a_held_folder():
    rows = {"scores": {("p1", "a"): (1.0, False), ("p1", "b"): (0.0, False), ("p2", "c"): (0.0, False)}}
    assert collect._to_review(["p2.ipynb"], {"p1.ipynb": ["b"]}, rows) == {"p2": [], "p1": ["b"]}  # []: every cell
    assert collect._to_review(["p1.ipynb"], {"p1.ipynb": ["b"]}, rows) == {"p1": ["a", "b"]}
    assert collect._to_review(["p1.ipynb"], {}, None) == {}  # nothing merged: the whole folder
