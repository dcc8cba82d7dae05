"""Answers to `xavier_uniform_(layer)`: U(-b, b) weights and zero bias, in place."""

import math

import torch
from torch import nn


def right_no_grad_block(layer):
    """uniform_ and zero_ under no_grad, as torch.nn.init does."""
    fan_out, fan_in = layer.weight.shape
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound)
        if layer.bias is not None:
            layer.bias.zero_()
    return layer


def right_nn_init(layer):
    """torch.nn.init's own functions, which work in place under no_grad."""
    nn.init.xavier_uniform_(layer.weight)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


@torch.no_grad()
def right_decorator_and_copy(layer):
    """no_grad as a decorator; draw into a new tensor, then copy_ it into the weight."""
    bound = math.sqrt(6 / (layer.in_features + layer.out_features))
    fresh = torch.rand(layer.weight.shape, dtype=layer.weight.dtype) * 2 * bound - bound
    layer.weight.copy_(fresh)
    if layer.bias is not None:
        layer.bias.fill_(0)
    return layer


def wrong_no_no_grad(layer):
    """Forgets no_grad: in place on a leaf that requires grad raises."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer


def wrong_new_parameter(layer):
    """Rebinds layer.weight to a new Parameter: optimizers keep the old one."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight = nn.Parameter(torch.empty_like(layer.weight).uniform_(-bound, bound))
    if layer.bias is not None:
        layer.bias = nn.Parameter(torch.zeros_like(layer.bias))
    return layer


def wrong_assigns_data(layer):
    """Swaps the memory behind .data: same object, new data_ptr."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.data = torch.empty_like(layer.weight).uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.data = torch.zeros_like(layer.bias)
    return layer


def wrong_writes_through_data(layer):
    """Writes through .data in place: right values, but autograd's version counter never moves."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.data.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.data.zero_()
    return layer


def wrong_bound_misses_sqrt(layer):
    """sqrt(6) / (fan_in + fan_out): the square root only over the numerator."""
    bound = math.sqrt(6.0) / (layer.in_features + layer.out_features)
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound)
        if layer.bias is not None:
            layer.bias.zero_()
    return layer


def wrong_xavier_normal(layer):
    """Glorot's normal variant: the right spread, but values beyond the uniform bound."""
    nn.init.xavier_normal_(layer.weight)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


def wrong_keeps_bias(layer):
    """Initialises the weight only."""
    nn.init.xavier_uniform_(layer.weight)
    return layer


def wrong_toggles_requires_grad(layer):
    """Switches requires_grad off to dodge the error, and never switches it back on."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    for parameter in layer.parameters():
        parameter.requires_grad_(False)
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer
