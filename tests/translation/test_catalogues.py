"""The catalogues: current with the English, complete, clean, and fuzzy where the English
changed."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.translation import build, catalogues, glossary, review
from tests.helpers.assignments import REPO

CATALOGUES = [pytest.param(language, document, id=f"{language}-{document.with_suffix('').as_posix()}")
              for language in sorted(catalogues.LANGUAGES) for document in catalogues.catalogued(REPO)]


@functools.cache
def committed(language: str, document: Path):
    """The repository's catalogue, read once per test process (the tests below only read it)."""
    return catalogues.read(catalogues.catalogue_path(REPO, language, document))


@pytest.mark.parametrize(("language", "document"), CATALOGUES)
def test_each_catalogue_holds_the_english_as_it_is_now(language, document):
    """Fails after an English edit until `make translations` has merged it."""
    wanted = [message.id for message in catalogues.template(REPO, document) if message.id]
    assert [message.id for message in committed(language, document) if message.id] == wanted


@pytest.mark.parametrize(("language", "document"), CATALOGUES)
def test_each_catalogue_is_translated_with_nothing_fuzzy(language, document):
    counts = catalogues.counts(committed(language, document))
    assert (counts.fuzzy, counts.untranslated) == (0, 0)


@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
def test_each_translation_keeps_the_code_the_glossary_and_no_english_sentence(language):
    terms = glossary.read(catalogues.glossary_path(REPO, language))
    assert terms.checked and "pytorch" in terms.kept_words
    found = [f"{document}: {problem}: {english[:80]!r}" for document in catalogues.catalogued(REPO)
             for english, problem in review.problems(committed(language, document), terms)]
    assert found == []


@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
def test_the_checks_read_their_messages_compiled_from_the_catalogue_as_it_is(language):
    """Fails after a translation of a check's message changed until `make translations`
    compiled it again."""
    catalog = catalogues.read(catalogues.catalogue_path(REPO, language, catalogues.CHECKS))
    assert catalogues.compiled_path(REPO, language).read_bytes() == catalogues.compiled(catalog)
    assert len(catalogues.usable(catalog)) == sum(1 for message in catalog if message.id) > 40


def test_a_changed_english_paragraph_keeps_its_translation_marked_fuzzy_and_is_not_used(tmp_path):
    document = Path("notebooks", "lecture.ipynb")
    (tmp_path / "notebooks").mkdir()
    english = new_notebook(cells=[new_markdown_cell("# Views\n\nA view shares\nits storage."),
                                  new_code_cell("x = torch.ones(3)")])
    nbformat.write(english, tmp_path / document)
    assert catalogues.update(tmp_path, "ko", document) == catalogues.Counts(0, 0, 2)
    path = catalogues.catalogue_path(tmp_path, "ko", document)
    catalog = catalogues.read(path)
    catalog["# Views"].string, catalog["A view shares\nits storage."].string = "# 뷰", "뷰는 스토리지를 공유합니다."
    catalogues.write(path, catalog)
    translated = build.translate_file(tmp_path / document, "ko", tmp_path)
    assert translated.cells[0].source == "# 뷰\n\n뷰는 스토리지를 공유합니다."

    english.cells[0].source = "# Views\n\nA view shares\nits storage with its base."
    nbformat.write(english, tmp_path / document)
    assert catalogues.update(tmp_path, "ko", document) == catalogues.Counts(1, 1, 0)
    changed = catalogues.read(path)["A view shares\nits storage with its base."]
    assert changed.fuzzy and changed.string == "뷰는 스토리지를 공유합니다."
    assert changed.previous_id == ["A view shares\nits storage."]
    assert '#| msgid ""\n#| "A view shares\\n"\n#| "its storage."\nmsgid ""' in path.read_text(encoding="utf-8")
    catalogues.update(tmp_path, "ko", document)  # a second merge keeps the previous English
    kept = catalogues.read(path)["A view shares\nits storage with its base."]
    assert kept.previous_id == ["A view shares\nits storage."]
    with pytest.raises(build.Untranslated, match="1 paragraph"):
        build.translate_file(tmp_path / document, "ko", tmp_path)


def test_an_english_paragraph_changed_twice_keeps_the_english_its_translation_was_made_from(tmp_path):
    """A translator compares the fuzzy translation with the English it translated, not
    with an edit nobody translated; a removed paragraph's translation stays, obsolete."""
    document = Path("notebooks", "lecture.ipynb")
    (tmp_path / "notebooks").mkdir()
    versions = ["A view shares its storage.", "A view shares the storage.", "A view shares the storage of its base."]
    english = new_notebook(cells=[new_markdown_cell(versions[0]), new_markdown_cell("Removed later.")])
    nbformat.write(english, tmp_path / document)
    catalogues.update(tmp_path, "ko", document)
    path = catalogues.catalogue_path(tmp_path, "ko", document)
    catalog = catalogues.read(path)
    catalog[versions[0]].string, catalog["Removed later."].string = "뷰는 스토리지를 공유합니다.", "나중에 지워집니다."
    catalogues.write(path, catalog)
    for version in versions[1:]:
        english.cells = [new_markdown_cell(version)]
        nbformat.write(english, tmp_path / document)
        catalogues.update(tmp_path, "ko", document)
    catalog = catalogues.read(path)
    assert catalog[versions[2]].fuzzy and catalog[versions[2]].previous_id == [versions[0]]
    assert catalog[versions[2]].string == "뷰는 스토리지를 공유합니다."
    assert catalog.obsolete["Removed later."].string == "나중에 지워집니다."
    assert "#~ msgid \"Removed later.\"" in path.read_text(encoding="utf-8")


def test_updating_a_current_catalogue_changes_no_byte(tmp_path):
    for document in (Path("notebooks/00-start-here.ipynb"), Path("student-edition/README.md")):
        copied = catalogues.catalogue_path(tmp_path, "ja", document)
        for source, target in ((REPO / document, tmp_path / document),
                               (catalogues.catalogue_path(REPO, "ja", document), copied)):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
        before = copied.read_bytes()
        catalogues.update(tmp_path, "ja", document)
        assert copied.read_bytes() == before
