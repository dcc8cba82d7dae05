"""The student editions in Korean, Chinese and Japanese (``make student EDITION=ko``): the
English edition's files with the lectures, the assignments and the README translated (the
Markdown only), JupyterLab's language pack pinned and selected, nothing of the instructor's;
(``make check`` on a solved Korean notebook: ``test_student_edition.py``)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from autograder.edition import build as edition
from autograder.edition.withheld import leaks, secret_lines
from autograder.course import Course
from autograder.message_language import text_language
from autograder.translation import catalogues
from autograder.translation.catalogues import LANGUAGES
from tests.helpers.assignments import COURSE, REPO
from tests.helpers.translated import all_but_markdown

pytestmark = pytest.mark.slow  # each edition is built whole (a second or so a language)

# What an edition in another language changes of the English one.
TRANSLATED = ("README.md", "notebooks/", "release/")
ABOUT_THE_LANGUAGE = ("pyproject.toml", "environment.yml", edition.LAB_LANGUAGE_SETTING)


@pytest.fixture(scope="module")
def english() -> dict[str, bytes]:
    return edition.edition_files(COURSE)


@pytest.fixture(scope="module", params=sorted(LANGUAGES))
def translated(request) -> tuple[str, dict[str, bytes]]:
    return request.param, edition.edition_files(COURSE, request.param)


def test_an_edition_in_another_language_changes_only_its_words_and_its_language(english, translated):
    language, files = translated
    changed = {name for name in files.keys() | english.keys() if files.get(name) != english.get(name)}
    checks_messages = {"autograder/locale/EDITION", f"autograder/locale/{language}/LC_MESSAGES/checks.mo"}
    assert changed == {name for name in files if name.startswith(TRANSLATED) and name.endswith((".ipynb", ".md"))
                       } | set(ABOUT_THE_LANGUAGE) | checks_messages
    assert files["autograder/locale/EDITION"] == f"{language}\n".encode()
    for name in changed:
        if name.endswith(".ipynb"):
            assert all_but_markdown(files[name]) == all_but_markdown(english[name]), name


def test_its_jupyterlab_shows_the_language_pack_it_installs(translated):
    language, files = translated
    locale = LANGUAGES[language][1]
    assert json.loads(files[edition.LAB_LANGUAGE_SETTING]) == {"locale": locale}
    pins = tomllib.loads(files["pyproject.toml"].decode())["project"]["dependencies"]
    assert f"jupyterlab-language-pack-{locale.replace('_', '-')}==4.5.post3" in pins


def test_it_shows_no_solution_hidden_test_or_answer(translated):
    _, files = translated
    assert leaks(files, secret_lines(COURSE, edition.public_material(COURSE))) == {}


@pytest.mark.parametrize("document", [Path("notebooks/04-ema.ipynb"), catalogues.CHECKS], ids=["lecture", "checks"])
def test_a_fuzzy_translation_stops_the_build_and_is_named(tmp_path, document):
    """A paragraph or a check's message whose English changed since it was translated
    (fuzzy) is never shipped."""
    for name in ("notebooks", "source", "release", "student-edition", "translations"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in ("nbgrader_config.py", "pyproject.toml", "LICENSE"):
        shutil.copy(REPO / name, tmp_path / name)
    path = catalogues.catalogue_path(tmp_path, "ja", document)
    catalog = catalogues.read(path)
    message = next(message for message in catalog if message.id)
    message.flags.add("fuzzy")
    catalogues.write(path, catalog)
    with pytest.raises(ValueError, match=f"{path.name}: 1 paragraph") as refused:
        edition.edition_files(Course(tmp_path), "ja")
    assert message.id[:40] in str(refused.value)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_make_lab_points_jupyterlab_at_the_language_setting_only_in_a_translated_edition(language, tmp_path):
    files = edition.edition_files(COURSE, language)
    edition.write_folder(files, tmp_path / "student")
    make = subprocess.run(["make", "--no-print-directory", "-n", "lab"], cwd=tmp_path / "student", check=True,
                          capture_output=True, text=True).stdout
    command = shlex.split(next(line for line in make.splitlines() if "-m jupyterlab" in line))
    settings = dict(word.split("=", 1) for word in command if word.startswith("JUPYTERLAB_SETTINGS_DIR="))
    if language == "en":
        assert settings == {}
    else:
        folder = Path(settings["JUPYTERLAB_SETTINGS_DIR"])
        assert (folder / "@jupyterlab/translation-extension/plugin.jupyterlab-settings").is_file()


def test_its_checks_speak_its_language_without_being_told(translated, tmp_path):
    """The edition's own package, alone on the path and with no COURSE_LANGUAGE: a failing
    check says its message in the edition's language (its locale files ship with it)."""
    language, files = translated
    for name, data in files.items():
        if name.startswith("autograder/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(data)
    probe = ("import torch\nfrom autograder import checks\nx = torch.ones(3)\nbefore = checks.snapshot(x, 'x')\n"
             "try:\n    checks.assert_updated_in_place(x + 1, before, 'f')\nexcept AssertionError as failed:\n"
             "    print(checks.__file__)\n    print(failed)\n")
    environment = {key: value for key, value in os.environ.items() if key not in {"COURSE_LANGUAGE", "PYTHONPATH"}}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True,
                          env={**environment, "PYTHONPATH": str(tmp_path)})
    where, said = done.stdout.split("\n", 1)
    assert Path(where).is_relative_to(tmp_path)
    assert text_language(said) == language and "`f`" in said and "`x`" in said
