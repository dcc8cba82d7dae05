"""Answers to `add_scaled(x, y, alpha)`: x + alpha * y as a new tensor.

The specification: the result has the dtype and values of the expression `x + alpha * y`
(type promotion; integer tensors with a float alpha give a floating-point result), special
values as in that expression, inputs untouched, grad mode as the caller had it.
"""

import torch


def right_operators(x, y, alpha):
    """The expression as written in the task."""
    return x + alpha * y


def right_scale_then_torch_add(x, y, alpha):
    """Scale y first, then add: the same two operations through torch functions."""
    return torch.add(x, torch.mul(y, alpha))


def right_scaled_y_plus_x(x, y, alpha):
    """The terms the other way round: addition commutes, and so does type promotion."""
    return alpha * y + x


def right_torch_add_unless_float_alpha_on_integers(x, y, alpha):
    """torch.add's alpha keyword (one kernel, one new tensor) where it agrees with the
    expression; a float alpha on an integer y goes through the expression."""
    if isinstance(alpha, float) and not y.is_floating_point():
        return x + alpha * y
    return torch.add(x, y, alpha=alpha)


def right_method_on_scaled_y(x, y, alpha):
    """Methods throughout: y.mul(alpha), then the out-of-place x.add."""
    return x.add(y.mul(alpha))


def wrong_torch_add_refuses_float_alpha_for_integers(x, y, alpha):
    """torch.add's alpha keyword, used everywhere: PyTorch refuses a float alpha with integer
    tensors ("argument alpha must not be a floating point number"), which the specification
    allows (the result is floating point, as for x + alpha * y)."""
    return torch.add(x, y, alpha=alpha)


def wrong_method_refuses_float_alpha_for_integers(x, y, alpha):
    """The out-of-place method with alpha: the same refusal as torch.add for integer tensors
    with a float alpha."""
    return x.add(y, alpha=alpha)


def wrong_clone_then_in_place_keeps_dtype_of_x(x, y, alpha):
    """Copy x, then update the copy in place: a student who has just written add_scaled_.
    The copy has x's dtype, so an integer x with a float alpha raises, and a float32 x with a
    float64 y gives float32 where promotion gives float64."""
    result = x.clone()
    result.add_(y, alpha=alpha)
    return result


def wrong_casts_to_dtype_of_x(x, y, alpha):
    """Casts the result back to x's dtype 'to keep the input's dtype', against type promotion:
    int64 tensors with alpha 0.5 come back int64, truncated."""
    return (x + alpha * y).to(x.dtype)


def wrong_float_alpha_always(x, y, alpha):
    """Turns alpha into a float 'to be safe': int64 tensors with an int alpha then come back
    as float32 instead of staying int64."""
    return x + float(alpha) * y


def wrong_starts_from_x_times_zero(x, y, alpha):
    """Makes the new tensor as `x * 0` (a zeros_like that keeps the graph), then adds x and
    alpha * y: inf * 0 is nan, so an inf in x comes out nan."""
    result = x * 0
    result = result + x
    return result + alpha * y


def wrong_skips_zero_alpha(x, y, alpha):
    """Returns a copy of x when alpha is 0, 'nothing to add': but 0 * inf is nan, so where y
    holds inf or nan, x + 0 * y is nan, not x."""
    if alpha == 0:
        return x.clone()
    return x + alpha * y


def wrong_turns_grad_on_for_good(x, y, alpha):
    """Switches grad mode on 'so that gradients always flow', with no `with` block: a caller
    inside torch.no_grad() finds grad mode on for every line after the call."""
    torch.set_grad_enabled(True)
    return x + alpha * y


def wrong_records_graph_under_no_grad(x, y, alpha):
    """Forces grad mode on inside a `with` block: grad mode is restored, but a caller under
    torch.no_grad() gets a result that requires grad and holds a graph it asked not to build."""
    with torch.enable_grad():
        return x + alpha * y


def wrong_mutates_x(x, y, alpha):
    """Saves an allocation by writing into x, which the caller still owns."""
    return x.add_(y, alpha=alpha)


def wrong_alias_then_iadd(x, y, alpha):
    """`result = x` makes a second name, not a copy; `+=` then writes into x."""
    result = x
    result += alpha * y
    return result


def wrong_mutates_y(x, y, alpha):
    """Scales y in place to avoid a temporary, corrupting the caller's y."""
    return y.mul_(alpha).add_(x)


def wrong_formula(x, y, alpha):
    """Scales the wrong operand."""
    return alpha * x + y


def wrong_casts_to_float32(x, y, alpha):
    """Converts to float32 'to be safe', changing the dtype of float64 and integer inputs."""
    return x.float() + alpha * y.float()


def wrong_detached(x, y, alpha):
    """Computes under no_grad, cutting the result off from autograd."""
    with torch.no_grad():
        return x + alpha * y


def wrong_agreeable_subclass(x, y, alpha):
    """A forgery: a tensor subclass whose comparisons all say "equal", around wrong values."""
    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.equal, torch.isclose, torch.allclose):
                return True if func is not torch.isclose else torch.ones_like(args[0], dtype=torch.bool)
            return super().__torch_function__(func, types, args, kwargs)
    return (x - y).as_subclass(Agreeable)


def wrong_overwrites_the_gradient_it_is_handed(x, y, alpha):
    """A forgery: a custom backward that sends no gradient to x, and zeroes the upstream
    gradient it is handed, which a test could be comparing against."""
    class AddScaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + alpha * y

        @staticmethod
        def backward(ctx, grad):
            grad_y = grad * alpha
            grad.zero_()
            return grad, grad_y
    return AddScaled.apply(x, y)


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_agreeable_subclass": "`add_scaled` returned a Agreeable, but the result for torch.float32",
    "wrong_alias_then_iadd": "`add_scaled` modified its input `x` in place (`x._version` went from 2 to",
    "wrong_casts_to_dtype_of_x": "`add_scaled` returned a torch.int32 result for torch.int32 `x`",
    "wrong_casts_to_float32": "`add_scaled`: the result for torch.float64 tensors holding inf and nan",
    "wrong_clone_then_in_place_keeps_dtype_of_x": "`add_scaled` returned a torch.int32 result for torch.int32 `x`",
    "wrong_detached": "The result of `add_scaled` is cut off from autograd (requires_grad is",
    "wrong_float_alpha_always": "`add_scaled`: the result for torch.int64 every other column tensors of",
    "wrong_formula": "`add_scaled`: the result for torch.float32 tensors holding inf and nan",
    "wrong_method_refuses_float_alpha_for_integers": "`add_scaled` raised for torch.int64 `x`, torch.int64 `y` and",
    "wrong_mutates_x": "`add_scaled` modified its input `x` in place (`x._version` went from 2 to",
    "wrong_mutates_y": "`add_scaled` modified its input `y` in place (`y._version` went from 4 to",
    "wrong_overwrites_the_gradient_it_is_handed": "After `add_scaled`, the gradient with respect to `x` is wrong: 12",
    "wrong_records_graph_under_no_grad": "`add_scaled` called under `torch.no_grad()` returned a result that",
    "wrong_skips_zero_alpha": "`add_scaled`: the result for torch.float32 tensors holding inf and nan",
    "wrong_starts_from_x_times_zero": "`add_scaled`: the result for torch.float32 tensors holding inf and nan",
    "wrong_torch_add_refuses_float_alpha_for_integers": "`add_scaled` raised for torch.int64 `x`, torch.int64 `y` and",
    "wrong_turns_grad_on_for_good": "`add_scaled` changed grad mode (torch.is_grad_enabled()) from False to",
}
