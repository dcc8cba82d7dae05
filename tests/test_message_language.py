"""The checks' messages in the student's language: the variable's, else the edition's,
else English; a translation that does not fit its values gives the English, never an
error; and a notebook's language read from its Markdown."""

from __future__ import annotations

import pytest
import torch

from autograder import checks, message_language
from autograder.translation import catalogues
from tests.helpers.assignments import REPO

REBOUND = "`{fn}` returned a new tensor: `{name}` must be updated in place and returned itself; " \
          "the result lives at data_ptr {new}, `{name}` at {old}."


def _rebinding_failure() -> str:
    x = torch.ones(3)
    before = checks.snapshot(x, "x")
    with pytest.raises(checks.CheckFailed) as failed:
        checks.assert_updated_in_place(x + 1, before, "f")
    return str(failed.value)


@pytest.mark.parametrize("language", sorted(catalogues.LANGUAGES))
def test_a_failing_check_speaks_the_language_the_variable_names(monkeypatch, language):
    monkeypatch.setenv(message_language.LANGUAGE_VARIABLE, language)
    said = _rebinding_failure()
    translation = catalogues.read(catalogues.catalogue_path(REPO, language, catalogues.CHECKS))[REBOUND].string
    head = translation.split("{")[0]
    assert translation and said.startswith(head) and "`f`" in said and "`x`" in said and "{" not in said
    assert message_language.text_language(said) == language


def test_without_a_language_the_checks_speak_english(monkeypatch, tmp_path):
    monkeypatch.delenv(message_language.LANGUAGE_VARIABLE, raising=False)
    monkeypatch.setattr(message_language, "EDITION_FILE", tmp_path / "EDITION")  # none here
    assert _rebinding_failure().startswith("`f` returned a new tensor: `x` must be updated in place")


def test_an_editions_language_is_its_file_and_the_variable_overrides_it(monkeypatch, tmp_path):
    edition = tmp_path / "EDITION"
    edition.write_text("ja\n")
    monkeypatch.setattr(message_language, "EDITION_FILE", edition)
    monkeypatch.delenv(message_language.LANGUAGE_VARIABLE, raising=False)
    assert message_language.message_language() == "ja"
    monkeypatch.setenv(message_language.LANGUAGE_VARIABLE, "ko")
    assert message_language.message_language() == "ko"


def test_a_translation_that_does_not_fit_its_values_gives_the_english(monkeypatch):
    class Broken:
        @staticmethod
        def gettext(message):
            return "{no_such_value} " + message

    monkeypatch.setattr(checks, "_translations", lambda language: Broken)
    assert _rebinding_failure().startswith("`f` returned a new tensor")


@pytest.mark.parametrize(("text", "language"), [
    ("`x.add_(1)` 는 in-place 연산입니다. `data_ptr()` 가 그대로입니다.", "ko"),
    ("`x.add_(1)` はインプレース演算です。テンソル `x` 自身を変更します。", "ja"),
    ("`x.add_(1)` 是就地操作，它会修改张量 `x` 本身。", "zh"),
    ("`x.add_(1)` is an in-place operation: it changes `x` itself.", None),
    ("", None),
])
def test_a_texts_language_is_read_from_its_script(text, language):
    assert message_language.text_language(text) == language


def test_a_passing_check_says_nothing(monkeypatch):
    """Messages are made only when a check fails: nothing of theirs (the environment,
    gettext) runs between a student's return and the comparisons."""
    def said(*_, **__):
        raise RuntimeError("a passing check made a message")

    monkeypatch.setattr(checks, "_say", said)
    x, y = torch.ones(3, requires_grad=True), torch.arange(3.0)
    before_x, before_y = checks.snapshot(x, "x"), checks.snapshot(y, "y")
    context = checks.calling_context()
    result = x * 2 + y
    checks.assert_values_close(result, x.detach() * 2 + y, "f")
    checks.assert_new_storage(result, before_x, before_y, fn="f")
    checks.assert_untouched(x, before_x, "f")
    checks.assert_context_kept(context, "f")
    checks.assert_gradients_match(result, x * 2 + y, {"x": x}, "f")
    with torch.no_grad():
        checks.assert_updated_in_place(y.add_(1), before_y, "f")
    checks.assert_answer(True, True, "f", "f(x)")
    model = torch.nn.Linear(2, 2)
    checks.assert_module_kept(model, checks.snapshot_module(model, "model"), "f")
