"""What a translation must keep of its English paragraph, and English it must not keep."""

from __future__ import annotations

import pytest

from autograder.translation import faithful

ENGLISH = "## 2. `add_` writes into [the storage](01-inplace-basics.ipynb#Views), where $x_i$ lives <code>x</code>"
KEPT = "## 2. `add_` 는 $x_i$ 가 있는 [스토리지](01-inplace-basics.ipynb#Views) 에 씁니다 <code>x</code>"


def test_a_faithful_translation_may_reorder_what_it_keeps():
    assert faithful.problems(ENGLISH, KEPT) == []


@pytest.mark.parametrize(("broken", "said"), [
    (KEPT.replace("`add_`", "`add`"), "code '`add_`' is missing"),
    (KEPT.replace("#Views", "#뷰"), "target '01-inplace-basics.ipynb#Views' is missing"),
    (KEPT.replace("$x_i$", "x_i"), "math '$x_i$' is missing"),
    (KEPT.replace("<code>x</code>", "x"), "code '<code>x</code>' is missing"),
    (KEPT.replace("<code>x</code>", "<b>x</b>"), "tag '<b>' is not in the English"),
    (KEPT.replace("## 2.", "### 2."), "heading '## ' is missing"),
    (KEPT + " `extra`", "code '`extra`' is not in the English"),
])
def test_each_kept_part_changed_is_named(broken, said):
    assert said in faithful.problems(ENGLISH, broken)


def test_a_sentence_left_in_english_is_found_outside_code_quotes_and_kept_words():
    kept = frozenset({"pytorch", "autograd"})
    assert faithful.english_left("이것은 `x.add_(1)` 입니다. This sentence was never translated.", kept) == (
        "This sentence was never")
    assert faithful.english_left("PyTorch 는 \"a leaf Variable that requires grad\" 라고 말합니다", kept) is None
    assert faithful.english_left("`torch.no_grad()` 안에서 PyTorch autograd 가 기록하지 않습니다", kept) is None
    assert faithful.english_left("[see the lecture notes here](x.ipynb)", kept) == "see the lecture notes"
