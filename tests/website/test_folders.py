"""What ``make site`` may replace (``project.publish`` and the project's own folder): a
folder it wrote, never the repository or a folder of someone else's files."""

from __future__ import annotations

import pytest

from autograder.website import project


@pytest.fixture
def built(tmp_path):
    site = tmp_path / "built"
    (site / "ko" / "ema").mkdir(parents=True)
    (site / "ko" / "ema" / "index.html").write_text('<html lang="en"><body>ko</body></html>')
    return site


def test_the_site_replaces_the_site_it_wrote(tmp_path, built):
    into = tmp_path / "site"
    assert project.publish(built, into, tmp_path / "repo") == 1
    (into / "stale.html").write_text("from the last run")
    project.publish(built, into, tmp_path / "repo")
    assert sorted(path.relative_to(into).as_posix() for path in into.rglob("*") if path.is_file()) == [
        project.MARK, "ko/ema/index.html"]
    assert (into / "ko" / "ema" / "index.html").read_text().startswith('<html lang="ko-KR"')


def test_a_folder_of_other_files_is_refused_and_left_as_it_was(tmp_path, built):
    into = tmp_path / "dist"
    (into / "student").mkdir(parents=True)
    (into / "student" / "README.md").write_text("the student edition")
    with pytest.raises(project.FolderRefused, match="holds files that make site did not write"):
        project.publish(built, into, tmp_path / "repo")
    assert (into / "student" / "README.md").read_text() == "the student edition"


@pytest.mark.parametrize("where", [".", ".."], ids=["the repository", "a folder holding it"])
def test_the_repository_is_never_the_sites_folder(tmp_path, built, where):
    repo = tmp_path / "repo"
    repo.mkdir()
    with pytest.raises(project.FolderRefused, match="the course's repository"):
        project.publish(built, repo / where, repo)
    assert repo.is_dir() and built.is_dir()


def test_the_build_cannot_be_inside_the_sites_folder(tmp_path, built, tmp_path_factory):
    with pytest.raises(project.FolderRefused, match="holds the build itself"):
        project.publish(built, tmp_path, tmp_path_factory.mktemp("elsewhere") / "repo")
    assert (built / "ko" / "ema" / "index.html").is_file()
