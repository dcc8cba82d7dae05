"""Answers to `add_scaled(x, y, alpha)`: x + alpha * y as a new tensor."""

import torch


def right_operators(x, y, alpha):
    """The expression as written in the task."""
    return x + alpha * y


def right_torch_add(x, y, alpha):
    """torch.add's alpha keyword: one kernel, one new tensor."""
    return torch.add(x, y, alpha=alpha)


def right_method(x, y, alpha):
    """The out-of-place method."""
    return x.add(y, alpha=alpha)


def right_clone_then_in_place(x, y, alpha):
    """Copy first, then update the copy in place: the inputs never change."""
    result = x.clone()
    result.add_(y, alpha=alpha)
    return result


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
            return torch.add(x, y, alpha=alpha)

        @staticmethod
        def backward(ctx, grad):
            grad_y = grad * alpha
            grad.zero_()
            return grad, grad_y
    return AddScaled.apply(x, y)
