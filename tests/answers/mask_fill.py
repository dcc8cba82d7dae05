"""Answers to `mask_fill(x, mask, value)`: value where mask is True, x elsewhere."""

import torch


def right_masked_fill(x, mask, value):
    """The out-of-place method made for this."""
    return x.masked_fill(mask, value)


def right_where(x, mask, value):
    """torch.where picks from value or x, element by element."""
    return torch.where(mask, value, x)


def right_where_full_like(x, mask, value):
    """torch.where with value spelled out as a tensor of x's shape and dtype."""
    return torch.where(mask, torch.full_like(x, value), x)


def right_clone_then_assign(x, mask, value):
    """Copy first; assigning through the mask then writes into the copy only."""
    result = x.clone()
    result[mask] = value
    return result


def right_tensor_method_where(x, mask, value):
    """Tensor.where keeps x where its condition holds: the condition is the kept entries."""
    return x.where(~mask, value)


def right_where_value_tensor_in_x_dtype(x, mask, value):
    """value as a 0-dim tensor made in x's dtype, so it is rounded once, as x's dtype holds it."""
    return torch.where(mask, torch.tensor(value, dtype=x.dtype), x)


def right_clone_then_masked_fill_(x, mask, value):
    """The in-place method, on a copy of its own."""
    return x.clone().masked_fill_(mask, value)


def right_fill_built_under_no_grad_block(x, mask, value):
    """The constant fill made under a `with torch.no_grad():` block, which restores the
    caller's grad mode when it ends; the selection itself is recorded as usual."""
    with torch.no_grad():
        fill = torch.full_like(x, value)
    return torch.where(mask, fill, x)


def wrong_assigns_into_x(x, mask, value):
    """Mask assignment writes into x itself (and fails on a leaf that requires grad)."""
    x[mask] = value
    return x


def wrong_masked_fill_in_place(x, mask, value):
    """The in-place method: modifies the caller's x."""
    return x.masked_fill_(mask, value)


def wrong_mask_arithmetic(x, mask, value):
    """Arithmetic with the mask: inf * 0 is nan, so an infinite value leaks into the entries
    mask keeps (and inf in x under the mask poisons the entries it replaces)."""
    return x * ~mask + value * mask


def wrong_interpolation(x, mask, value):
    """x + mask * (value - x): nan for an infinite value or inf under the mask, and inexact
    for large x."""
    return x + mask * (value - x)


def wrong_zero_then_add_value(x, mask, value):
    """Zeroes the masked entries with where (so inf in x there is gone), then adds
    value * mask: an infinite value times False is nan, and -0.0 + 0.0 is 0.0, in the
    entries mask keeps."""
    return torch.where(mask, 0.0, x) + value * mask


def wrong_copies_by_adding_zero(x, mask, value):
    """Copies x with `x + 0` before filling: the right numbers, but -0.0 + 0 is 0.0, so a
    kept -0.0 loses its sign (the result must hold x's entries bit for bit)."""
    result = x + 0
    result[mask] = value
    return result


def wrong_copies_by_multiplying_by_one(x, mask, value):
    """Copies x with `x * 1.0`: a float times an integer tensor is a float tensor, so an
    int64 x comes back as float32."""
    result = x * 1.0
    result[mask] = value
    return result


def wrong_value_rounded_through_float32(x, mask, value):
    """torch.tensor(value) is a float32 tensor (the default dtype): for a float64 x the
    filled entries are value rounded to float32 first (0.1 becomes 0.10000000149...)."""
    return torch.where(mask, torch.tensor(value), x)


def wrong_through_float64(x, mask, value):
    """Works in float64 'so that any value fits' and casts back to x's dtype: int64 entries
    beyond 2**53 come back rounded."""
    return torch.where(mask, value, x.to(torch.float64)).to(x.dtype)


def wrong_reads_copy_then_fills(x, mask, value):
    """x[mask] reads a copy, so filling it changes nothing in the result."""
    result = x.clone()
    result[mask].fill_(value)
    return result


def wrong_detached(x, mask, value):
    """Detaches x 'to avoid the in-place error': no gradient reaches x any more."""
    return torch.where(mask, value, x.detach())


def wrong_fills_through_data(x, mask, value):
    """Writes into the copy through .data 'so autograd does not complain': autograd never
    sees the fill, so the gradient is 1 at the masked entries instead of 0."""
    result = x.clone()
    result.data[mask] = value
    return result


def wrong_returns_x_when_nothing_masked(x, mask, value):
    """Skips the work when nothing is masked and returns x itself: a caller that later
    writes into the result writes into x."""
    if not mask.any():
        return x
    return x.masked_fill(mask, value)


def wrong_inverts_mask_in_place(x, mask, value):
    """Flips the mask in place to get the entries to keep 'without a new tensor': the
    caller's mask is inverted afterwards."""
    keep = mask.logical_not_()
    return torch.where(keep, x, value)


def wrong_fill_built_with_grad_off(x, mask, value):
    """Builds the constant fill with grad mode switched off and then on again, copying the
    no_grad-initialization pattern without its `with` block: called under the caller's
    torch.no_grad(), it leaves grad mode on for every line the caller runs next."""
    torch.set_grad_enabled(False)
    fill = torch.full_like(x, value)
    torch.set_grad_enabled(True)
    return torch.where(mask, fill, x)


def wrong_grad_mode_follows_x(x, mask, value):
    """Sets grad mode from x.requires_grad 'to record only what is needed': called with an
    x that does not require grad, it switches grad mode off for its caller (and on under
    the caller's torch.no_grad() when x requires grad)."""
    torch.set_grad_enabled(x.requires_grad)
    return x.masked_fill(mask, value)


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_assigns_into_x": "`mask_fill` modified its input `x` in place (`x._version` went from 0 to",
    "wrong_copies_by_adding_zero": "`mask_fill`: the result for torch.float32 x and value -inf: at index (0",
    "wrong_copies_by_multiplying_by_one": "`mask_fill`: the result for torch.int64 every other column tensors of",
    "wrong_detached": "`mask_fill`: called with grad mode on, its result is cut off from autograd",
    "wrong_fill_built_with_grad_off": "`mask_fill` changed grad mode (torch.is_grad_enabled()) from False to True",
    "wrong_fills_through_data": "After `mask_fill`, the gradient with respect to `x` is wrong: 3 of 5",
    "wrong_grad_mode_follows_x": "`mask_fill` changed grad mode (torch.is_grad_enabled()) from True to False",
    "wrong_interpolation": "`mask_fill`: the result for torch.float32 x and value -inf: at index (0",
    "wrong_inverts_mask_in_place": "`mask_fill` modified its input `mask` in place (`mask._version` went from",
    "wrong_mask_arithmetic": "`mask_fill`: the result for torch.float32 x and value -inf: at index (0",
    "wrong_masked_fill_in_place": "`mask_fill` modified its input `x` in place (`x._version` went from 0 to",
    "wrong_reads_copy_then_fills": "`mask_fill`: the result for a call under torch.enable_grad(): at index",
    "wrong_returns_x_when_nothing_masked": "`mask_fill` returned its input `x` itself; it must return a new tensor and",
    "wrong_through_float64": "`mask_fill`: the result for int64 x with entries beyond 2**53: at index",
    "wrong_value_rounded_through_float32": "`mask_fill`: the result for torch.float64 transposed tensors of shape (2",
    "wrong_zero_then_add_value": "`mask_fill`: the result for torch.float32 x and value -inf: at index (0",
}
