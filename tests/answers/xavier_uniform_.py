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


def right_set_grad_enabled_block(layer):
    """torch.set_grad_enabled(False) used as a context manager: the with block restores grad mode."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    with torch.set_grad_enabled(False):
        layer.weight.uniform_(-bound, bound)
        if layer.bias is not None:
            layer.bias.fill_(0.0)
    return layer


def right_restores_grad_mode(layer):
    """Switches grad mode off by hand and puts back whatever the caller had, even on an error."""
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        fan_out, fan_in = layer.weight.shape
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        layer.weight.uniform_(-bound, bound)
        if layer.bias is not None:
            layer.bias.zero_()
    finally:
        torch.set_grad_enabled(previous)
    return layer


def right_inference_mode(layer):
    """inference_mode instead of no_grad: in-place writes to ordinary tensors still bump their version."""
    bound = math.sqrt(6.0 / sum(layer.weight.shape))
    with torch.inference_mode():
        layer.weight.uniform_(-bound, bound)
        if layer.bias is not None:
            layer.bias.zero_()
    return layer


@torch.no_grad()
def right_scaled_rand(layer):
    """Draws U(0, 1) into the weight itself, then stretches it to U(-b, b) in place."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(0.0, 1.0).mul_(2 * bound).sub_(bound)
    if layer.bias is not None:
        layer.bias.copy_(torch.zeros_like(layer.bias))
    return layer


def wrong_grad_mode_off(layer):
    """Switches gradients off with a bare set_grad_enabled(False), as if it were local to the
    function: the caller's code after the call runs with gradients off and trains nothing."""
    torch.set_grad_enabled(False)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer


def wrong_grad_mode_back_on(layer):
    """Switches gradients off, then on again at the end: right when the caller had them on, but a
    caller inside torch.no_grad() (evaluation) finds them switched on."""
    torch.set_grad_enabled(False)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    torch.set_grad_enabled(True)
    return layer


@torch.no_grad()
def wrong_sets_default_dtype(layer):
    """Sets the default dtype to the layer's so that torch.rand draws in it, and leaves it set:
    every tensor the caller creates afterwards gets that dtype."""
    torch.set_default_dtype(layer.weight.dtype)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.copy_(torch.rand(layer.weight.shape) * 2 * bound - bound)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer


def wrong_reseeds(layer):
    """Seeds the generator inside "for reproducibility": every same-shaped layer gets the same
    weights, and the caller's random stream starts over."""
    torch.manual_seed(0)
    return right_no_grad_block(layer)


def wrong_forks_rng(layer):
    """Forks the random state "so as not to disturb the caller": the generator is put back, so the
    next layer initialised draws the very same numbers."""
    with torch.random.fork_rng():
        return right_no_grad_block(layer)


@torch.no_grad()
def wrong_own_generator(layer):
    """Draws from a generator of its own, seeded once per call: every layer of a shape gets the
    same weights, and torch.manual_seed no longer controls them."""
    generator = torch.Generator().manual_seed(0)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound, generator=generator)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer


@torch.no_grad()
def wrong_zeroes_bias_by_multiplying(layer):
    """Zeroes the bias by multiplying it by 0: fine for finite values, but inf * 0 and nan * 0
    are nan, so a bias that held them is not zero afterwards."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.mul_(0)
    return layer


def wrong_unfreezes(layer):
    """Dodges the leaf error by switching requires_grad off, then on again: a frozen parameter
    comes back trainable."""
    layer.requires_grad_(False)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    layer.requires_grad_(True)
    return layer


@torch.no_grad()
def wrong_every_other_parameter_is_bias(layer):
    """Walks the layer's parameters: "weight" gets U(-b, b), anything else is taken for a bias and
    zeroed, so a parameter a subclass added (a gain) is wiped."""
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    for name, parameter in layer.named_parameters():
        if name == "weight":
            parameter.uniform_(-bound, bound)
        else:
            parameter.zero_()
    return layer


@torch.no_grad()
def wrong_resets_buffers(layer):
    """Resets the layer's buffers too, as BatchNorm's reset_parameters resets its running
    statistics: a subclass's mask buffer (kept out of the state_dict) is wiped."""
    right_no_grad_block(layer)
    for buffer in layer.buffers():
        buffer.zero_()
    return layer


def wrong_skips_lazy_layer(layer):
    """Returns a lazy layer that has no shape yet as it is: it looks initialised, and gets
    PyTorch's default initialisation, not Xavier's, at its first forward pass."""
    if isinstance(layer.weight, nn.parameter.UninitializedParameter):
        return layer
    return right_no_grad_block(layer)


@torch.no_grad()
def wrong_unties_a_shared_weight(layer):
    """Gives the layer a copy of its weight to draw into, to spare a weight it shares: a tied layer is untied."""
    layer.weight = nn.Parameter(layer.weight.detach().clone(), requires_grad=layer.weight.requires_grad)
    bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
    layer.weight.uniform_(-bound, bound)
    if layer.bias is not None:
        layer.bias.zero_()
    return layer


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_assigns_data": "`xavier_uniform_` gave `layer.weight` new memory: `layer.weight` must be",
    "wrong_bound_misses_sqrt": "`xavier_uniform_`: no weight comes near the bound",
    "wrong_every_other_parameter_is_bias": "`xavier_uniform_` wrote into `layer.gain`, which is neither the weight nor",
    "wrong_forks_rng": "`xavier_uniform_` gave two same-shaped layers, initialised one after the",
    "wrong_grad_mode_back_on": "`xavier_uniform_` changed grad mode (torch.is_grad_enabled()) from False",
    "wrong_grad_mode_off": "`xavier_uniform_` changed grad mode (torch.is_grad_enabled()) from True to",
    "wrong_keeps_bias": "`layer.bias._version` is still 1 after `xavier_uniform_`: no in-place",
    "wrong_new_parameter": "`xavier_uniform_` replaced `layer.weight` with a new tensor: anything",
    "wrong_no_no_grad": "a leaf Variable that requires grad is being used in an in-place operation.",
    "wrong_own_generator": "`xavier_uniform_` gave two same-shaped layers, initialised one after the",
    "wrong_reseeds": "`xavier_uniform_` gave two same-shaped layers, initialised one after the",
    "wrong_resets_buffers": "`xavier_uniform_` wrote into `layer.mask`, a buffer of the layer, neither",
    "wrong_sets_default_dtype": "`xavier_uniform_` changed the default dtype from torch.float32 to",
    "wrong_skips_lazy_layer": "`xavier_uniform_` returned normally on an nn.LazyLinear whose parameters",
    "wrong_toggles_requires_grad": "`xavier_uniform_` changed `layer.weight.requires_grad` from True to False",
    "wrong_unfreezes": "`xavier_uniform_` changed `layer.weight.requires_grad` from False to True",
    "wrong_unties_a_shared_weight": "`xavier_uniform_` replaced `layer.weight` with a new tensor: anything",
    "wrong_writes_through_data": "`layer.weight._version` is still 1 after `xavier_uniform_`: no in-place",
    "wrong_xavier_normal": "`xavier_uniform_`: weights must lie in [",
    "wrong_zeroes_bias_by_multiplying": "`xavier_uniform_`: the bias must be all zeros, but 40 of its 40 elements",
}
