"""The student editions in Korean, Chinese and Japanese (``make student EDITION=ko``): the
English edition's files with the lectures, the assignments and the README translated (the
Markdown only), JupyterLab's language pack pinned and selected, nothing of the instructor's;
(``make check`` on a solved Korean notebook: ``test_student_edition.py``)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from autograder.edition import build as edition
from autograder.edition.withheld import leaks, secret_lines
from autograder.course import Course
from autograder.translation import catalogues
from autograder.translation.catalogues import LANGUAGES
from tests.helpers.assignments import COURSE, REPO

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


def _code_and_marks(data: bytes) -> str:
    """A notebook as JSON without its Markdown sources and their checksums."""
    notebook = json.loads(data)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = ""
            cell["metadata"].get("nbgrader", {}).pop("checksum", None)
    return json.dumps(notebook, sort_keys=True)


def test_an_edition_in_another_language_changes_only_its_words_and_its_language(english, translated):
    language, files = translated
    changed = {name for name in files.keys() | english.keys() if files.get(name) != english.get(name)}
    assert changed == {name for name in files if name.startswith(TRANSLATED) and name.endswith((".ipynb", ".md"))
                       } | set(ABOUT_THE_LANGUAGE)
    for name in changed:
        if name.endswith(".ipynb"):
            assert _code_and_marks(files[name]) == _code_and_marks(english[name]), name


def test_its_jupyterlab_shows_the_language_pack_it_installs(translated):
    language, files = translated
    locale = LANGUAGES[language][1]
    assert json.loads(files[edition.LAB_LANGUAGE_SETTING]) == {"locale": locale}
    pins = tomllib.loads(files["pyproject.toml"].decode())["project"]["dependencies"]
    assert f"jupyterlab-language-pack-{locale.replace('_', '-')}==4.5.post3" in pins


def test_it_shows_no_solution_hidden_test_or_answer(translated):
    _, files = translated
    assert leaks(files, secret_lines(COURSE, edition.public_material(COURSE))) == {}


def test_a_fuzzy_translation_stops_the_build_and_is_named(tmp_path):
    """A paragraph whose English changed since it was translated (fuzzy) is never shipped."""
    for name in ("notebooks", "source", "release", "student-edition", "translations"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in ("nbgrader_config.py", "pyproject.toml", "LICENSE"):
        shutil.copy(REPO / name, tmp_path / name)
    path = catalogues.catalogue_path(tmp_path, "ja", Path("notebooks/04-ema.ipynb"))
    catalog = catalogues.read(path)
    message = next(message for message in catalog if message.id)
    message.flags.add("fuzzy")
    catalogues.write(path, catalog)
    with pytest.raises(ValueError, match="04-ema.po: 1 paragraph") as refused:
        edition.edition_files(Course(tmp_path), "ja")
    assert message.id[:60] in str(refused.value)


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
