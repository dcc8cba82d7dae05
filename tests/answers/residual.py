"""Answers to `residual(x, block)`: block(x) + x for x as it was on entry."""

import copy

import torch


def right_clone_into_block(x, block):
    """The block gets a private copy; the skip path uses the caller's x."""
    return block(x.clone()) + x


def right_copy_by_arithmetic(x, block):
    """x * 1 is a new tensor too, with its own memory and a gradient path to x (and an
    integer x stays integer: 1 is an int)."""
    return torch.add(block(x * 1), x)


def right_identity_first(x, block):
    """Name the skip path first, hand the block a copy, add out of place."""
    identity = x
    out = block(x.clone())
    return out + identity


def right_empty_like_then_copy(x, block):
    """Allocate, then copy_: the copy is recorded (CopyBackwards), so the gradient reaches x."""
    private = torch.empty_like(x).copy_(x)
    return torch.add(block(private), x)


def right_rebinds_x_to_a_copy(x, block):
    """The name x moves to the copy; identity keeps the caller's tensor."""
    identity = x
    x = torch.clone(x, memory_format=torch.contiguous_format)
    out = block(x)
    return out + identity


def right_adds_zero(x, block):
    """x + 0 is a new tensor of x's dtype (0 is an int, so an integer x stays integer)."""
    return block(x + 0) + x


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


def wrong_view_is_not_a_copy(x, block):
    """x[:] looks like a copy (it is one for a Python list), but a tensor slice is a view:
    the block writes through it into x's memory."""
    return block(x[:]) + x


def wrong_contiguous_is_not_a_copy(x, block):
    """contiguous() copies only a non-contiguous tensor; a contiguous x comes back itself."""
    return block(x.contiguous()) + x


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


def wrong_deepcopy_input(x, block):
    """copy.deepcopy(x) (the copy module is allowed) makes a new leaf outside the graph, and
    refuses a non-leaf x outright."""
    return block(copy.deepcopy(x)) + x


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


# Stateful blocks and inputs a probe cannot see through.

def wrong_probe_then_alias(x, block):
    """Saves the copy when it looks unneeded: a probe run on a copy shows whether the block
    changes its input, and only then is the real run given a copy. An in-place ReLU on
    non-negative entries changes no value, so the probe sees nothing and the real run
    writes into the caller's x (and every run moves BatchNorm and Dropout again)."""
    probe = x.clone()
    block(probe)
    if torch.equal(probe, x):
        return block(x) + x
    return block(x.clone()) + x


def wrong_clones_only_if_negative(x, block):
    """A ReLU only changes negative entries, so the copy looks needed only when x has one;
    but relu_ writes into non-negative entries too (the version counter moves), and other
    blocks (Dropout, mul_) write whatever the signs."""
    if bool((x < 0).any()):
        return block(x.clone()) + x
    return block(x) + x


def wrong_probes_with_version_counter(x, block):
    """A probe that cannot be fooled by values: the version counter of a copy says whether
    the block writes. But the probe is a forward pass: BatchNorm's statistics and its
    num_batches_tracked move twice, Dropout draws twice."""
    probe = x.detach().clone()
    with torch.no_grad():
        block(probe)
    if probe._version == 0:
        return block(x) + x
    return block(x.clone()) + x


def wrong_probes_a_deepcopy(x, block):
    """Probes a deep copy of the block, so the block's own BatchNorm statistics move only
    once; but the copy's Dropout draws from the same global generator, so the real run gets
    another mask than one call of the block would."""
    probe = x.detach().clone()
    with torch.no_grad():
        copy.deepcopy(block)(probe)
    if probe._version == 0:
        return block(x) + x
    return block(x.clone()) + x


def wrong_probes_in_eval_mode(x, block):
    """Probes in eval mode under no_grad, where BatchNorm keeps its statistics and Dropout
    draws nothing, then puts the mode back with block.train(mode): that sets every layer to
    the block's mode, so a BatchNorm frozen in eval mode starts training. (And in eval mode
    an in-place Dropout does not write, so the probe misses it.)"""
    mode = block.training
    probe = x.detach().clone()
    block.eval()
    with torch.no_grad():
        block(probe)
    block.train(mode)
    if probe._version == 0:
        return block(x) + x
    return block(x.clone()) + x


# Calling context.

def wrong_leaves_grad_mode_on(x, block):
    """Turns grad mode on so that the gradient always reaches x, and leaves it on for the
    caller, who asked for torch.no_grad()."""
    torch.set_grad_enabled(True)
    return block(x.clone()) + x


def wrong_enables_grad_inside(x, block):
    """Records a graph whatever the caller's mode (`with` puts the mode back, but the result
    of a call under torch.no_grad() now holds a graph and requires grad)."""
    with torch.enable_grad():
        return block(x.clone()) + x


# Dtypes, empty and 0-dim tensors.

def wrong_copy_by_float_arithmetic(x, block):
    """x * 1.0 copies a float tensor, but turns an integer x into float32: the block gets
    another dtype, and large integers are rounded."""
    return block(x * 1.0) + x


def wrong_casts_result_to_input_dtype(x, block):
    """Casts the sum back to x's dtype, "to keep the input's dtype": a block that returns
    float64 gets its result rounded to float32, against type promotion."""
    return (block(x.clone()) + x).to(x.dtype)


def wrong_copies_by_slice_assignment(x, block):
    """Fills a new tensor with copy[:] = x (recorded by autograd as CopySlices), but a
    0-dim tensor has no dimension to slice."""
    private = torch.empty_like(x)
    private[:] = x
    return block(private) + x


def wrong_copy_by_times_zero_plus_x(x, block):
    """Copies x as x * 0 + x: inf * 0 is nan, so an inf in x reaches the block as nan."""
    return block(x * 0 + x) + x


# Memory.

def wrong_clones_both_paths(x, block):
    """Clones the skip path too, "to be safe": right values, but a second copy of x that
    nothing needs (x itself is never written once the block has its own copy)."""
    identity = x.clone()
    return block(x.clone()) + identity


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_adds_in_place": "With only an in-place ReLU and a leaf that requires grad (torch.float32)",
    "wrong_alias": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
    "wrong_casts_result_to_input_dtype": "With a block that returns float64 for a float32 x and a contiguous tensor",
    "wrong_clones_both_paths": "With nn.Identity and a 1.0 MB x: `residual` needed 3.1 MB of new memory at",
    "wrong_clones_identity_only": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
    "wrong_clones_only_if_negative": "With only an in-place ReLU and a contiguous tensor whose entries are all",
    "wrong_contiguous_is_not_a_copy": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
    "wrong_copies_by_slice_assignment": "With a block that doubles its input in place and a 0-dim x",
    "wrong_copy_by_float_arithmetic": "With a block that doubles its input in place and an int64 x with entries",
    "wrong_copy_by_times_zero_plus_x": "With only an in-place ReLU and an x holding inf, -inf and nan",
    "wrong_copy_under_no_grad": "With an in-place ReLU, then Linear and a leaf that requires grad",
    "wrong_deepcopy_input": "With an in-place ReLU, then Linear and a leaf that requires grad",
    "wrong_detached_copy": "With an in-place ReLU, then Linear and a leaf that requires grad",
    "wrong_enables_grad_inside": "With an in-place ReLU, then Linear, called under torch.no_grad() with x a",
    "wrong_identity_alias": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
    "wrong_leaves_grad_mode_on": "With an in-place ReLU, then Linear, called under torch.no_grad() with x a",
    "wrong_probe_then_alias": "With only an in-place ReLU and a contiguous tensor whose entries are all",
    "wrong_probes_a_deepcopy": "With a training block with a frozen BatchNorm (eval mode), a training",
    "wrong_probes_in_eval_mode": "With a training block with a frozen BatchNorm (eval mode), a training",
    "wrong_probes_with_version_counter": "With a training block with a frozen BatchNorm (eval mode), a training",
    "wrong_shadows_forward": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
    "wrong_view_is_not_a_copy": "With an in-place ReLU, then Linear and a contiguous tensor (torch.float32)",
}
