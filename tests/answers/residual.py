"""Answers to `residual(x, block)`: block(x) + x for x as it was on entry."""

import torch


def right_clone_into_block(x, block):
    """The block gets a private copy; the skip path uses the caller's x."""
    return block(x.clone()) + x


def right_copy_by_arithmetic(x, block):
    """x * 1 is a new tensor too, with its own memory and a gradient path to x."""
    return torch.add(block(x * 1), x)


def right_identity_first(x, block):
    """Name the skip path first, hand the block a copy, add out of place."""
    identity = x
    out = block(x.clone())
    return out + identity


def wrong_alias(x, block):
    """The textbook formula: an in-place block corrupts x, the sum, and the caller's tensor."""
    return block(x) + x


def wrong_identity_alias(x, block):
    """identity = x is a second name for the same tensor, not a copy."""
    identity = x
    out = block(x)
    return out + identity


def wrong_clones_identity_only(x, block):
    """Protects the sum but not the caller: the block still writes into x itself."""
    identity = x.clone()
    return block(x) + identity


def wrong_adds_in_place(x, block):
    """out += x on the block's output: fine after a norm layer, fatal after a sigmoid."""
    out = block(x.clone())
    out += x
    return out


def wrong_detached_copy(x, block):
    """A detached copy protects x but cuts the gradient path through the block."""
    return block(x.detach().clone()) + x


def wrong_copy_under_no_grad(x, block):
    """Copies under no_grad: the copy does not require grad, so the block path loses x's gradient."""
    with torch.no_grad():
        copy = x.clone()
    return block(copy) + x


def wrong_shadows_forward(x, block):
    """A forgery: the block's forward replaced on the instance, so that a test which calls
    the block afterwards computes the same wrong result as this answer."""
    parameters = list(block.parameters())

    def fake(t):
        out = t * 0
        for parameter in parameters:
            out = out + parameter.sum() * 0
        return out
    block.forward = fake
    return block(x) + x
