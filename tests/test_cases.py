"""The hidden tests' random inputs: the same on every run, and every dtype and layout."""

from __future__ import annotations

import pytest
import torch

from autograder import cases


def test_a_seed_gives_the_same_cases_every_time():
    first, again = cases.operand_cases(seed=5, count=12), cases.operand_cases(seed=5, count=12)
    assert [case.label for case in first] == [case.label for case in again]
    assert all(torch.equal(a.x, b.x) and a.alpha == b.alpha for a, b in zip(first, again))
    assert [c.label for c in cases.operand_cases(seed=6, count=12)] != [c.label for c in first]


def test_every_dtype_and_layout_comes_up():
    found = cases.operand_cases(seed=1, count=12)
    assert {case.x.dtype for case in found} == set(cases.DTYPES)
    assert {layout for layout in cases.LAYOUTS if any(layout in case.label for case in found)} == set(cases.LAYOUTS)
    assert all(case.x.shape == case.y.shape and case.x.dtype == case.y.dtype for case in found)


@pytest.mark.parametrize(("layout", "contiguous", "offset"), [
    ("contiguous", True, False), ("transposed", False, False),
    ("every other column", False, False), ("slice with an offset", True, True),
])
def test_each_layout_is_the_memory_layout_it_names(layout, contiguous, offset):
    tensor = cases.laid_out((3, 4), torch.float32, layout, torch.Generator().manual_seed(0))
    assert tensor.shape == (3, 4)
    assert tensor.is_contiguous() is contiguous
    assert (tensor.storage_offset() > 0) is offset
    if layout == "every other column":
        assert tensor.stride()[-1] == 2


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="unknown layout"):
        cases.laid_out((2,), torch.float32, "diagonal", torch.Generator())
