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


def wrong_scales_inside(x, scale):
    """Scales the input instead of the output."""
    return torch.sigmoid(scale * x)


def wrong_no_grad(x, scale):
    """Computes under no_grad: right values, no gradients."""
    with torch.no_grad():
        return scale * torch.sigmoid(x)
