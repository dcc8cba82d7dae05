"""Answers to `add_scaled_(x, y, alpha)`: x updated in place to x + alpha * y, returned.

The specification: x keeps its object, memory and dtype (an integer x with a float alpha or
a floating y raises, writing nothing); no temporary as large as x or y; special values as in
x + alpha * y; grad mode as the caller had it (under no_grad, even a leaf that requires grad
is updated, as an optimizer step does).
"""

import torch


def right_add_(x, y, alpha):
    """The in-place method with alpha: returns x itself."""
    return x.add_(y, alpha=alpha)


def right_sub_negated_alpha(x, y, alpha):
    """Subtracting -alpha * y is adding alpha * y: sub_ takes alpha too."""
    return x.sub_(y, alpha=-alpha)


def right_unbound_method(x, y, alpha):
    """torch.Tensor.add_ called as a function, then x returned on a line of its own."""
    torch.Tensor.add_(x, y, alpha=alpha)
    return x


def right_refuses_integers_itself(x, y, alpha):
    """Checks the integer rule with a message of its own before the update."""
    if not x.is_floating_point() and (isinstance(alpha, float) or y.is_floating_point()):
        raise TypeError(f"an integer x ({x.dtype}) cannot hold x + alpha * y for alpha={alpha!r}, y {y.dtype}")
    x.add_(y, alpha=alpha)
    return x


def right_addcmul_with_scalar_tensor(x, y, alpha):
    """x + y * alpha through addcmul_, alpha wrapped in a 0-dim tensor: a few bytes, no
    temporary as large as y."""
    return x.addcmul_(y, torch.tensor(alpha))


def wrong_iadd_builds_scaled_temporary(x, y, alpha):
    """`+=` writes into x, but `alpha * y` is computed first as a temporary as large as y:
    in place, yet not free of allocations, which the specification forbids."""
    x += alpha * y
    return x


def wrong_scaled_copy_then_add_(x, y, alpha):
    """add_ without its alpha: the scaled copy of y is a temporary as large as y."""
    return x.add_(y * alpha)


def wrong_copy_truncates_integers(x, y, alpha):
    """Compute out of place, then copy into x's memory: a temporary as large as x, and for an
    integer x with a float alpha, copy_ truncates the sum silently instead of raising."""
    x.copy_(x + alpha * y)
    return x


def wrong_index_assignment_truncates_integers(x, y, alpha):
    """Assigning to x[...] writes in place, but from a temporary as large as x, and it
    truncates a floating-point sum into an integer x silently."""
    x[...] = x + alpha * y
    return x


def wrong_float_alpha_always(x, y, alpha):
    """Passes alpha as a float 'to be safe': an int64 x with an int alpha, which must work,
    then raises."""
    return x.add_(y, alpha=float(alpha))


def wrong_rounds_alpha_for_integers(x, y, alpha):
    """Rounds a float alpha for an integer x so that add_ accepts it: the sum is silently
    wrong where the specification says to raise."""
    if not x.is_floating_point():
        alpha = round(alpha)
    return x.add_(y, alpha=alpha)


def wrong_refuses_any_dtype_mismatch(x, y, alpha):
    """Reads 'an integer x cannot hold a float sum' as 'x and y must have one dtype': a
    float32 x updated with a float64 y (or a bf16 x with a float32 y, the usual EMA setup)
    fits, and must be updated."""
    if x.dtype != y.dtype:
        raise TypeError(f"x is {x.dtype} but y is {y.dtype}")
    return x.add_(y, alpha=alpha)


def wrong_clears_x_by_subtracting_it(x, y, alpha):
    """Computes the new value, then 'clears' x with x - x and adds it: inf - inf is nan, so an
    inf in x becomes nan even where y is 0 (and the new value is a temporary as large as x)."""
    new = x + alpha * y
    x.sub_(x).add_(new)
    return x


def wrong_divides_by_alpha(x, y, alpha):
    """Avoids the scaled temporary by factoring: x = alpha * (x / alpha + y), all in place.
    Rounding changes x where y is 0, and alpha = 0 turns everything into nan."""
    if not x.is_floating_point():
        return x.add_(y, alpha=alpha)
    return x.div_(alpha).add_(y).mul_(alpha)


def wrong_turns_grad_off_then_on(x, y, alpha):
    """Switches grad mode off around the update, as an optimizer step does, then on again
    instead of back to what it was: a caller under torch.no_grad() finds grad mode on
    afterwards (and with grad on, autograd never sees the update)."""
    torch.set_grad_enabled(False)
    x.add_(y, alpha=alpha)
    torch.set_grad_enabled(True)
    return x


def wrong_forces_grad_on_for_the_update(x, y, alpha):
    """Wraps the update in torch.enable_grad() 'so that autograd records it': under the
    caller's torch.no_grad(), an optimizer-style update of a leaf that requires grad is then
    refused."""
    with torch.enable_grad():
        return x.add_(y, alpha=alpha)


def wrong_rebinds(x, y, alpha):
    """`x = x + ...` makes the local name point at a new tensor; the caller's x is unchanged."""
    x = x + alpha * y
    return x


def wrong_returns_new_tensor(x, y, alpha):
    """The out-of-place version."""
    return x + alpha * y


def wrong_assigns_data(x, y, alpha):
    """`x.data = ...` keeps the Python object but swaps in new memory behind it."""
    x.data = x + alpha * y
    return x


def wrong_writes_through_data(x, y, alpha):
    """Writes through `.data`: same memory, but autograd's version counter never sees it."""
    x.data.add_(y.data, alpha=alpha)
    return x


def wrong_scales_y_in_place(x, y, alpha):
    """Avoids a temporary by scaling y in place, which corrupts the caller's y."""
    return x.add_(y.mul_(alpha))


def wrong_returns_copy(x, y, alpha):
    """Updates x, then returns a clone of it instead of x itself."""
    return x.add_(y, alpha=alpha).clone()


def wrong_contiguous_first(x, y, alpha):
    """Makes x contiguous 'for speed': for a non-contiguous view that is a copy."""
    return x.contiguous().add_(y, alpha=alpha)


def wrong_out_argument(x, y, alpha):
    """torch.add(..., out=x) writes in place, but out= is not differentiable: autograd refuses."""
    torch.add(x, y, alpha=alpha, out=x)
    return x


def wrong_swaps_the_class_of_x(x, y, alpha):
    """A forgery: x written wrongly in place, then given a class whose comparisons agree."""
    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.equal, torch.isclose, torch.allclose):
                return True if func is not torch.isclose else torch.ones_like(args[0], dtype=torch.bool)
            return super().__torch_function__(func, types, args, kwargs)
    x.add_(y)
    x.__class__ = Agreeable
    return x


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_assigns_data": "`add_scaled_` gave `x` new memory: `x` must be updated in place, but its",
    "wrong_clears_x_by_subtracting_it": "`add_scaled_`: `x` afterwards for torch.float32 tensors holding inf and",
    "wrong_contiguous_first": "`add_scaled_` returned a new tensor: `x` must be updated in place and",
    "wrong_copy_truncates_integers": "`add_scaled_` accepted an int64 `x` and `y` with alpha = 0.5: x + alpha *",
    "wrong_divides_by_alpha": "`add_scaled_` changed `x` where `alpha * y` is 0 (torch.float32 tensors",
    "wrong_float_alpha_always": "`add_scaled_` raised for torch.int64 every other column tensors of shape",
    "wrong_forces_grad_on_for_the_update": "`add_scaled_` called under `torch.no_grad()` on a leaf that requires grad",
    "wrong_iadd_builds_scaled_temporary": "`add_scaled_` needed 2.1 MB of new memory at its peak; an update in place",
    "wrong_index_assignment_truncates_integers": "`add_scaled_` accepted an int64 `x` and `y` with alpha = 0.5: x +",
    "wrong_out_argument": "`add_scaled_` raised with grad mode on, updating a tensor inside a graph",
    "wrong_rebinds": "`add_scaled_` returned a new tensor: `x` must be updated in place and",
    "wrong_refuses_any_dtype_mismatch": "`add_scaled_` raised for torch.float32 `x`, torch.float64 `y` and alpha =",
    "wrong_returns_copy": "`add_scaled_` returned a new tensor: `x` must be updated in place and",
    "wrong_returns_new_tensor": "`add_scaled_` returned a new tensor: `x` must be updated in place and",
    "wrong_rounds_alpha_for_integers": "`add_scaled_` accepted an int64 `x` and `y` with alpha = 0.5: x + alpha *",
    "wrong_scaled_copy_then_add_": "`add_scaled_` needed 2.1 MB of new memory at its peak; an update in place",
    "wrong_scales_y_in_place": "`add_scaled_` modified its input `y` in place (`y._version` went from 4 to",
    "wrong_swaps_the_class_of_x": "`add_scaled_` changed the class of `x` from Tensor to Agreeable; it must",
    "wrong_turns_grad_off_then_on": "`add_scaled_` changed grad mode (torch.is_grad_enabled()) from False to",
    "wrong_writes_through_data": "`x._version` is still 2 after `add_scaled_`: no in-place operation was",
}
