"""The site's own words (``autograder.website.words``), in each language from its catalogue."""

from __future__ import annotations

import shutil

import pytest

from autograder.translation import build, catalogues
from autograder.website import words
from tests.helpers.assignments import REPO


def test_every_phrase_is_marked_for_the_catalogues():
    catalog = catalogues.template(REPO, catalogues.WEBSITE_WORDS)
    assert sorted(message.id for message in catalog if message.id) == sorted(words.PHRASES)


def test_a_phrase_without_a_finished_translation_stops_the_site_named(tmp_path):
    path = catalogues.catalogue_path(tmp_path, "ja", catalogues.WEBSITE_WORDS)
    path.parent.mkdir(parents=True)
    shutil.copy(catalogues.catalogue_path(REPO, "ja", catalogues.WEBSITE_WORDS), path)
    catalog = catalogues.read(path)
    catalog[words.STATIC_WIDGET].flags.add("fuzzy")
    catalogues.write(path, catalog)
    with pytest.raises(build.Untranslated) as stopped:
        words.in_language(tmp_path, "ja")
    assert stopped.value.missing == [words.STATIC_WIDGET]
    assert words.in_language(tmp_path, "en")(words.STATIC_WIDGET) == words.STATIC_WIDGET
