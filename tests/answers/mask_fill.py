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


def wrong_assigns_into_x(x, mask, value):
    """Mask assignment writes into x itself (and fails on a leaf that requires grad)."""
    x[mask] = value
    return x


def wrong_masked_fill_in_place(x, mask, value):
    """The in-place method: modifies the caller's x."""
    return x.masked_fill_(mask, value)


def wrong_mask_arithmetic(x, mask, value):
    """Arithmetic with the mask: 0 * inf is nan, so inf under the mask poisons the result."""
    return x * ~mask + value * mask


def wrong_interpolation(x, mask, value):
    """x + mask * (value - x): nan for inf under the mask, and inexact for large x."""
    return x + mask * (value - x)


def wrong_reads_copy_then_fills(x, mask, value):
    """x[mask] reads a copy, so filling it changes nothing in the result."""
    result = x.clone()
    result[mask].fill_(value)
    return result


def wrong_detached(x, mask, value):
    """Detaches x 'to avoid the in-place error': no gradient reaches x any more."""
    return torch.where(mask, value, x.detach())
