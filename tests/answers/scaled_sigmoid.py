"""Answers to `scaled_sigmoid(x, scale)`: scale * sigmoid(x) with correct gradients."""

import torch


def right_scale_times_sigmoid(x, scale):
    """The formula as written."""
    return scale * torch.sigmoid(x)


def right_method_chain(x, scale):
    """Out-of-place methods, chained."""
    return x.sigmoid().mul(scale)


def right_special_expit(x, scale):
    """torch.special.expit is the logistic sigmoid under its SciPy name."""
    return torch.special.expit(x) * scale


def right_tanh_identity(x, scale):
    """sigmoid(x) = (1 + tanh(x / 2)) / 2, stable for any x."""
    return scale * (1 + torch.tanh(x / 2)) / 2


def right_functional_sigmoid(x, scale):
    """torch.nn.functional's sigmoid, multiplied with torch.mul."""
    return torch.mul(torch.nn.functional.sigmoid(x), scale)


def right_in_place_on_a_copy(x, scale):
    """sigmoid's output is saved for backward, so the in-place multiply goes into a
    product of its own: scale * s is new, and adding 0 to it in place harms nothing."""
    result = scale * torch.sigmoid(x)
    result.add_(0)
    return result


def wrong_in_place_mul(x, scale):
    """sigmoid saves its output for backward; mul_ overwrites it, so backward fails."""
    return torch.sigmoid(x).mul_(scale)


def wrong_in_place_imul(x, scale):
    """The same mistake spelled with *=."""
    result = torch.sigmoid(x)
    result *= scale
    return result


def wrong_sigmoid_in_place_on_x(x, scale):
    """sigmoid_ overwrites the caller's x (and fails on a leaf that requires grad)."""
    return x.sigmoid_() * scale


def wrong_manual_formula(x, scale):
    """1 / (1 + exp(-x)): exp overflows to inf for very negative x, and the gradient is nan."""
    return scale / (1 + torch.exp(-x))


def wrong_two_branch_where(x, scale):
    """The 'numerically stable' two-branch sigmoid: the values are right, but backward goes
    through both branches of torch.where, and the one not taken is inf / inf = nan at very
    large |x| (0 * nan is nan), so the gradient there is nan."""
    positive = 1 / (1 + torch.exp(-x))
    negative = torch.exp(x) / (1 + torch.exp(x))
    return scale * torch.where(x >= 0, positive, negative)


def wrong_scales_inside(x, scale):
    """Scales the input instead of the output."""
    return torch.sigmoid(scale * x)


def wrong_no_grad(x, scale):
    """Computes under no_grad: right values, no gradients."""
    with torch.no_grad():
        return scale * torch.sigmoid(x)


def wrong_result_in_x_dtype(x, scale):
    """Casts the result back to x's dtype 'to keep the input's dtype': an integer x gets an
    integer result (sigmoid's values truncated to 0), and a float64 scale tensor's
    precision is cast away for a float32 x."""
    return (scale * torch.sigmoid(x)).to(x.dtype)


def wrong_scale_cast_to_x_dtype(x, scale):
    """Casts a tensor scale to x's dtype 'so the dtypes match': a float64 scale of shape (n,)
    no longer promotes a float32 x's result to float64 (and for an integer x the scale
    itself is truncated)."""
    if isinstance(scale, torch.Tensor):
        scale = scale.to(x.dtype)
    return scale * torch.sigmoid(x)


def wrong_sigmoid_in_float32(x, scale):
    """x.float() 'so that integer inputs work': a float64 x is computed and returned in
    float32."""
    return scale * torch.sigmoid(x.float())


def wrong_grad_on_for_learnable_scale(x, scale):
    """Switches grad mode on 'so the gradient reaches a learnable scale': called under the
    caller's torch.no_grad(), it records a graph and leaves grad mode on for every line the
    caller runs next."""
    torch.set_grad_enabled(True)
    return scale * torch.sigmoid(x)


def wrong_enable_grad_block(x, scale):
    """Computes inside `with torch.enable_grad():` 'so backward always works': grad mode is
    restored, but under the caller's torch.no_grad() it still records a graph (and keeps
    sigmoid's output alive for a backward that never comes)."""
    with torch.enable_grad():
        return scale * torch.sigmoid(x)


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_enable_grad_block": "`scaled_sigmoid` recorded an autograd graph (its result requires grad)",
    "wrong_grad_on_for_learnable_scale": "`scaled_sigmoid` changed grad mode (torch.is_grad_enabled()) from False to",
    "wrong_in_place_imul": "Backward through the result of `scaled_sigmoid` failed: one of the",
    "wrong_in_place_mul": "Backward through the result of `scaled_sigmoid` failed: one of the",
    "wrong_manual_formula": "After `scaled_sigmoid`, the gradient with respect to `x` is wrong: 4 of 11",
    "wrong_no_grad": "`scaled_sigmoid`: called with grad mode on, its result is cut off from",
    "wrong_result_in_x_dtype": "`scaled_sigmoid`: the result for torch.int64 x and scale 2.5 has dtype",
    "wrong_scale_cast_to_x_dtype": "`scaled_sigmoid`: the result for torch.float32 x of shape (4, 3) and a",
    "wrong_scales_inside": "`scaled_sigmoid`: the result for a call under torch.enable_grad() has",
    "wrong_sigmoid_in_float32": "`scaled_sigmoid`: the result for torch.float64 x of shape (7,) has dtype",
    "wrong_sigmoid_in_place_on_x": "`scaled_sigmoid` modified its input `x` in place (`x._version` went from 0",
    "wrong_two_branch_where": "After `scaled_sigmoid`, the gradient with respect to `x` is wrong: 8 of 11",
}
