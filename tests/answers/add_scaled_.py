"""Answers to `add_scaled_(x, y, alpha)`: x updated in place to x + alpha * y, returned."""

import torch


def right_add_(x, y, alpha):
    """The in-place method with alpha: returns x itself."""
    return x.add_(y, alpha=alpha)


def right_iadd(x, y, alpha):
    """`+=` calls __iadd__, which writes into x."""
    x += alpha * y
    return x


def right_copy_(x, y, alpha):
    """Compute out of place, then copy into x's memory."""
    x.copy_(x + alpha * y)
    return x


def right_index_assignment(x, y, alpha):
    """Assigning to x[...] writes every element in place."""
    x[...] = x + alpha * y
    return x


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
