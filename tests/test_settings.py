"""Grading settings have one path: the course's nbgrader_config.py (over the TA's Jupyter
config), then the flags given for one run, read alike by the grader and by each job's
guarded executor."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from autograder.cli import _parser, overrides
from autograder.course import Course
from autograder.preprocessors.guarded_execute import GuardedExecute
from autograder.settings import GradingSettings
from autograder.sandbox.limits import GiB, MiB, Limits


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course whose file sets a memory limit and a cell timeout; the TA's Jupyter config
    (an empty folder unless a test writes there) sets nothing."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter"))
    (tmp_path / "jupyter").mkdir()
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()\nc.GradingSettings.memory_limit = 2 * 2**30\n"
                                             "c.Execute.timeout = 60\n")
    return root


def test_a_limit_in_the_course_file_reaches_the_kernel_limits(course):
    settings = GradingSettings(config=Course(course).config)
    assert settings.limits() == Limits(memory_bytes=2 * GiB)
    assert GuardedExecute(config=Course(course).config).settings.limits() == Limits(memory_bytes=2 * GiB)


def test_flags_override_only_what_they_give(course):
    given = overrides(_parser().parse_args(["grade", "--cpu-limit", "5", "--disk-limit", "100", "--no-sandbox"]))
    assert given == {"GradingSettings": {"cpu_limit": 5, "disk_limit": 100 * MiB, "sandbox": False}}
    settings = GradingSettings(config=Course(course, given).config)
    assert (settings.memory_limit, settings.cpu_limit, settings.sandbox) == (2 * GiB, 5, False)
    assert overrides(_parser().parse_args(["grade"])) == {}


def test_the_cell_timeout_flag_is_nbgraders_own_setting(course):
    given = overrides(_parser().parse_args(["grade", "--cell-timeout", "7"]))
    assert Course(course, given).config.Execute.timeout == 7
    assert GradingSettings(config=Course(course).config).in_force()["Execute.timeout"] == 60
    assert GradingSettings(config=Course(course, given).config).in_force()["Execute.timeout"] == 7


def test_the_tas_jupyter_config_applies_under_the_course_file(course, tmp_path):
    (tmp_path / "jupyter" / "nbgrader_config.py").write_text(
        "c = get_config()\nc.GradingSettings.cpu_limit = 33\nc.GradingSettings.memory_limit = 2**30\n")
    settings = GradingSettings(config=Course(course).config)
    assert (settings.cpu_limit, settings.memory_limit) == (33, 2 * GiB)


def test_limits_that_contradict_each_other_stop_the_run(course):
    settings = GradingSettings(config=Course(course, {"GradingSettings": {"disk_limit": 3 * GiB}}).config)
    with pytest.raises(ValueError, match="must be smaller than its memory"):
        settings.limits()


def test_a_json_config_file_counts_as_nbgraders_own_commands_count_it(course):
    (course / "nbgrader_config.json").write_text('{"GradingSettings": {"process_limit": 12}}')
    assert GradingSettings(config=Course(course).config).process_limit == 12


def test_a_setting_out_of_range_is_refused_by_name(course):
    with pytest.raises(TraitError, match="workers"):
        GradingSettings(config=Course(course, {"GradingSettings": {"workers": -1}}).config)
