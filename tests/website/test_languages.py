"""Each built page of a translation says its language (``project.mark_languages``): the
theme writes ``<html lang="en">`` on every page."""

from __future__ import annotations

from autograder.website import project

PAGE = '<!DOCTYPE html><html lang="en" class="light"><head></head><body>x</body></html>'


def test_each_translations_pages_are_marked_with_its_language_and_englishs_left(tmp_path):
    for folder in ("en/ema", "ko/ema", "zh/ema", "ja/ema", "ja/start-here"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "index.html").write_text(PAGE)
    assert project.mark_languages(tmp_path) == 4
    assert {path.parent.relative_to(tmp_path).as_posix(): path.read_text().split(" class")[0]
            for path in tmp_path.rglob("index.html")} == {
        "en/ema": '<!DOCTYPE html><html lang="en"', "ko/ema": '<!DOCTYPE html><html lang="ko-KR"',
        "zh/ema": '<!DOCTYPE html><html lang="zh-CN"', "ja/ema": '<!DOCTYPE html><html lang="ja-JP"',
        "ja/start-here": '<!DOCTYPE html><html lang="ja-JP"'}
    assert project.mark_languages(tmp_path) == 0  # marked once
