"""Answers to `leaky_relu_(x, negative_slope)`: an in-place leaky ReLU as a custom
torch.autograd.Function that marks x dirty."""

import torch
from torch.nn import functional as F


class _FromOutput(torch.autograd.Function):
    """Saves the output (x itself): for a slope >= 0 its sign is the input's."""

    @staticmethod
    def forward(ctx, x, negative_slope):
        F.leaky_relu_(x, negative_slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output > 0, grad_output, grad_output * ctx.negative_slope), None


def right_saves_the_output(x, negative_slope=0.01):
    """The Function above; returns x itself."""
    _FromOutput.apply(x, negative_slope)
    return x


class _BoolMask(torch.autograd.Function):
    """Saves a bool mask of the positive inputs (a quarter of a float32 x's bytes)."""

    @staticmethod
    def forward(ctx, x, negative_slope):
        positive = x > 0
        torch.nn.functional.leaky_relu(x, negative_slope, inplace=True)
        ctx.mark_dirty(x)
        ctx.save_for_backward(positive)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (positive,) = ctx.saved_tensors
        return grad_output.masked_fill(~positive, 0) + grad_output.masked_fill(positive, 0) * ctx.negative_slope, None


def right_saves_a_bool_mask(x, negative_slope=0.01):
    """A mask saved before the write; masked_fill in backward."""
    _BoolMask.apply(x, negative_slope)
    return x


class _ModuleInside(torch.autograd.Function):
    """nn.LeakyReLU(inplace=True) does the arithmetic; the slope goes in the module."""

    @staticmethod
    def forward(ctx, x, negative_slope):
        torch.nn.LeakyReLU(negative_slope, inplace=True)(x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        scale = torch.full_like(grad_output, ctx.negative_slope).masked_fill_(output > 0, 1)
        return grad_output * scale, None


def right_module_and_scale(x, negative_slope=0.01):
    """Returns x after apply, whatever apply returns."""
    result = _ModuleInside.apply(x, negative_slope)
    del result
    return x


def wrong_torch_leaky_relu_directly(x, negative_slope=0.01):
    """torch's own in-place leaky ReLU: right values and gradients, but no Function of its own
    (the task is to write the autograd part)."""
    return F.leaky_relu_(x, negative_slope)


class _NotDirty(torch.autograd.Function):
    """Writes x in place but never calls ctx.mark_dirty: autograd does not know x changed."""

    @staticmethod
    def forward(ctx, x, negative_slope):
        F.leaky_relu_(x, negative_slope)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output > 0, grad_output, grad_output * ctx.negative_slope), None


def wrong_forgets_mark_dirty(x, negative_slope=0.01):
    """apply hands back a new tensor object; x keeps its old history (and a leaf that requires
    grad is overwritten without a word)."""
    return _NotDirty.apply(x, negative_slope)


def wrong_forgets_mark_dirty_returns_x(x, negative_slope=0.01):
    """Returning x itself does not help: x's history still ends before the write."""
    _NotDirty.apply(x, negative_slope)
    return x


class _GreaterOrEqual(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        F.leaky_relu_(x, negative_slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output >= 0, grad_output, grad_output * ctx.negative_slope), None


def wrong_gradient_one_at_zero(x, negative_slope=0.01):
    """output >= 0 in backward: at an input of exactly 0 the gradient is 1, not negative_slope."""
    _GreaterOrEqual.apply(x, negative_slope)
    return x


class _Arithmetic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        positive = x > 0
        x.sub_(x.clamp(max=0) * (1 - negative_slope))
        ctx.mark_dirty(x)
        ctx.save_for_backward(positive)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (positive,) = ctx.saved_tensors
        return torch.where(positive, grad_output, grad_output * ctx.negative_slope), None


def wrong_arithmetic_on_the_whole_tensor(x, negative_slope=0.01):
    """x - (1 - slope) * min(x, 0): -inf - (-inf) is nan, and min(x, 0) is a temporary as large as x."""
    _Arithmetic.apply(x, negative_slope)
    return x


class _SavesACopy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x.clone())
        F.leaky_relu_(x, negative_slope)
        ctx.mark_dirty(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (original,) = ctx.saved_tensors
        return torch.where(original > 0, grad_output, grad_output * ctx.negative_slope), None


def wrong_saves_a_copy_of_the_input(x, negative_slope=0.01):
    """Saves a copy of x before overwriting it: right gradients, but a copy as large as x,
    which is the memory an in-place activation is there to save."""
    _SavesACopy.apply(x, negative_slope)
    return x


class _WhereThenCopy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        x.copy_(torch.where(x > 0, x, x * negative_slope))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output > 0, grad_output, grad_output * ctx.negative_slope), None


def wrong_out_of_place_then_copy(x, negative_slope=0.01):
    """Computes the result out of place and copies it in: two temporaries as large as x."""
    _WhereThenCopy.apply(x, negative_slope)
    return x


class _Float32Slope(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.slope = torch.tensor(negative_slope)  # a float32 tensor: the slope rounded to float32
        F.leaky_relu_(x, ctx.slope.item())
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output > 0, grad_output, grad_output * ctx.slope), None


def wrong_slope_as_a_float32_tensor(x, negative_slope=0.01):
    """The slope kept as a tensor, which torch.tensor makes float32: for a float64 x the slope
    is 0.009999999776482582, not 0.01, and the values are off in the ninth digit."""
    _Float32Slope.apply(x, negative_slope)
    return x


class _ThroughNoGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        F.leaky_relu_(x, negative_slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return torch.where(output > 0, grad_output, grad_output * ctx.negative_slope), None


def wrong_applies_under_no_grad(x, negative_slope=0.01):
    """Wraps apply in torch.no_grad() so that a leaf that requires grad is accepted: no graph
    is recorded, and no gradient flows through the activation."""
    with torch.no_grad():
        _ThroughNoGrad.apply(x, negative_slope)
    return x


def wrong_out_of_place(x, negative_slope=0.01):
    """Returns a new tensor and leaves x as it was."""
    return F.leaky_relu(x, negative_slope)


def wrong_turns_grad_off_then_on(x, negative_slope=0.01):
    """Switches grad mode off around apply, then on instead of back: a caller under no_grad finds it on."""
    torch.set_grad_enabled(False)
    _ThroughNoGrad.apply(x, negative_slope)
    torch.set_grad_enabled(True)
    return x


class _WritesIntoTheGradient(_FromOutput):
    """``_FromOutput``'s forward; its backward scales the gradient in place, to save memory,
    after .contiguous() (the upstream gradient of a .sum() is an expanded tensor that cannot
    be written): a contiguous grad_output is the very tensor autograd handed over, not the
    Function's to change."""

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        grad = grad_output.contiguous()
        return grad.mul_(torch.where(output > 0, 1.0, ctx.negative_slope)), None


def wrong_backward_writes_into_grad_output(x, negative_slope=0.01):
    """The Function above."""
    _WritesIntoTheGradient.apply(x, negative_slope)
    return x


class _NonPositiveMask(torch.autograd.Function):
    """Saves a mask of x <= 0 and takes the slope there: at nan (neither > 0 nor <= 0) its
    gradient is grad_output, where torch's leaky_relu gives negative_slope * grad_output."""

    @staticmethod
    def forward(ctx, x, negative_slope):
        non_positive = x <= 0
        F.leaky_relu_(x, negative_slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(non_positive)
        ctx.negative_slope = negative_slope
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (non_positive,) = ctx.saved_tensors
        return torch.where(non_positive, grad_output * ctx.negative_slope, grad_output), None


def wrong_slope_where_not_positive_misses_nan(x, negative_slope=0.01):
    """The Function above."""
    _NonPositiveMask.apply(x, negative_slope)
    return x


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_applies_under_no_grad": "After `leaky_relu_(x)`, x's backward node is MulBackward0, not a custom",
    "wrong_arithmetic_on_the_whole_tensor": "`leaky_relu_`: x after the call, for a leaf (requires_grad=False) under",
    "wrong_backward_writes_into_grad_output": "`leaky_relu_`'s backward wrote into the gradient it was handed",
    "wrong_forgets_mark_dirty": "`leaky_relu_` returned a new tensor: `x` must be updated in place and",
    "wrong_forgets_mark_dirty_returns_x": "After `leaky_relu_(x)`, x's backward node is MulBackward0, not a custom",
    "wrong_gradient_one_at_zero": "After `leaky_relu_`, the gradient with respect to `leaf` is wrong: 2 of 7",
    "wrong_out_of_place": "`leaky_relu_` returned a new tensor: `x` must be updated in place and",
    "wrong_out_of_place_then_copy": "`leaky_relu_` needed 9.0 MB of new memory for an x of 4.0 MB",
    "wrong_saves_a_copy_of_the_input": "`leaky_relu_` needed 4.0 MB of new memory for an x of 4.0 MB",
    "wrong_slope_as_a_float32_tensor": "`leaky_relu_`: x after the call, for torch.float64 transposed tensors of",
    "wrong_slope_where_not_positive_misses_nan": "After `leaky_relu_`, the gradient with respect to `leaf` is wrong",
    "wrong_torch_leaky_relu_directly": "After `leaky_relu_(x)`, x's backward node is LeakyReluBackward1, not a",
    "wrong_turns_grad_off_then_on": "`leaky_relu_` changed grad mode (torch.is_grad_enabled()) from False to",
}
