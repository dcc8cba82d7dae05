"""Answers to `init_mlp_(model)`: xavier_uniform_ on every nn.Linear at any depth.

The graded notebook's init_mlp_ calls the student's own xavier_uniform_; these answers call
a right one, so that only the traversal is on trial.
"""

import math

import torch
from torch import nn

from tests.answers.xavier_uniform_ import right_no_grad_block as xavier_uniform_


def right_modules(model):
    """model.modules() walks every submodule, the model itself included."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
    return model


def right_apply(model):
    """Module.apply calls a function on every submodule."""
    model.apply(lambda module: xavier_uniform_(module) if isinstance(module, nn.Linear) else None)
    return model


def right_recursive_children(model):
    """Recursion over children() reaches every depth too."""
    if isinstance(model, nn.Linear):
        xavier_uniform_(model)
    for child in model.children():
        right_recursive_children(child)
    return model


def wrong_children_only(model):
    """children() is one level deep: nested layers are missed."""
    for module in model.children():
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
    return model


def wrong_every_matrix(model):
    """Treats every 2-D parameter as a linear weight: embeddings and attention get re-drawn."""
    for module in model.modules():
        if getattr(module, "weight", None) is not None and module.weight.dim() == 2:
            xavier_uniform_(module)
    return model


def wrong_exact_type(model):
    """type(m) is nn.Linear misses subclasses such as attention's output projection."""
    for module in model.modules():
        if type(module) is nn.Linear:
            xavier_uniform_(module)
    return model


def wrong_replaces_layers(model):
    """Builds fresh Linear layers and swaps them in: new parameters, new memory."""
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                fresh = nn.Linear(child.in_features, child.out_features, bias=child.bias is not None,
                                  dtype=child.weight.dtype)
                setattr(module, child_name, xavier_uniform_(fresh))
    if isinstance(model, nn.Linear):
        xavier_uniform_(model)
    return model


def right_collect_then_initialise(model):
    """Collects the linear layers first (named_modules, each module once), then initialises them."""
    layers = [module for _, module in model.named_modules() if isinstance(module, nn.Linear)]
    for layer in layers:
        xavier_uniform_(layer)
    return model


def right_explicit_stack(model):
    """Walks the module tree with a stack of its own, remembering what it has seen."""
    stack, seen = [model], set()
    while stack:
        module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
        stack.extend(module.children())
    return model


@torch.no_grad()
def right_nn_init_directly(model):
    """Does xavier_uniform_'s work itself with torch.nn.init on every linear layer."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
    return model


def wrong_grad_mode_off(model):
    """Switches gradients off for the whole initialisation with a bare set_grad_enabled(False):
    the caller goes on with gradients off and its training steps learn nothing."""
    torch.set_grad_enabled(False)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
    return model


def wrong_grad_mode_back_on(model):
    """Switches gradients off, then on at the end: a caller inside torch.no_grad() finds them on."""
    torch.set_grad_enabled(False)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
    torch.set_grad_enabled(True)
    return model


def wrong_reseeds_each_layer(model):
    """Seeds before every layer "so each layer is reproducible": same-shaped layers all get the
    same weights."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            torch.manual_seed(0)
            xavier_uniform_(module)
    return model


def wrong_forks_rng(model):
    """Forks the random state around the whole initialisation "to leave the caller's numbers
    alone": the next model initialised gets the very same weights."""
    with torch.random.fork_rng():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                xavier_uniform_(module)
    return model


@torch.no_grad()
def wrong_named_parameters(model):
    """Works from named_parameters(), initialising what belongs to a linear layer by name; but
    named_parameters() lists a tied weight once, under the embedding's name, so the output layer
    tied to it is never initialised."""
    linear = {name: module for name, module in model.named_modules() if isinstance(module, nn.Linear)}
    for name, parameter in model.named_parameters():
        owner, _, kind = name.rpartition(".")
        if owner in linear:
            if kind == "weight":
                bound = math.sqrt(6.0 / (parameter.shape[0] + parameter.shape[1]))
                parameter.uniform_(-bound, bound)
            elif kind == "bias":
                parameter.zero_()
    return model


def wrong_skips_frozen(model):
    """Initialises only trainable layers, taking frozen ones for pretrained: a frozen linear layer
    keeps its old weights."""
    for module in model.modules():
        if isinstance(module, nn.Linear) and module.weight.requires_grad:
            xavier_uniform_(module)
    return model


def wrong_unfreezes(model):
    """Switches requires_grad off on the whole model to write its leaves, then on again: frozen
    layers come back trainable."""
    model.requires_grad_(False)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            bound = math.sqrt(6.0 / (module.in_features + module.out_features))
            module.weight.uniform_(-bound, bound)
            if module.bias is not None:
                module.bias.zero_()
    model.requires_grad_(True)
    return model


@torch.no_grad()
def wrong_resets_layer_buffers(model):
    """Resets a linear layer's buffers along with its parameters, as BatchNorm resets its running
    statistics: a mask buffer kept out of the state_dict is wiped."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            xavier_uniform_(module)
            for buffer in module.buffers(recurse=False):
                buffer.zero_()
    return model


def wrong_matches_class_name(model):
    """Recognises linear layers by their class name: a container called LinearBlock (and
    nn.Bilinear) is taken for one."""
    for module in model.modules():
        if "Linear" in type(module).__name__:
            xavier_uniform_(module)
    return model


def wrong_stops_at_linear(model):
    """Recursion that stops at the first linear layer on each path: linear layers nested inside a
    subclass of nn.Linear (an adapter) are never reached."""
    if isinstance(model, nn.Linear):
        xavier_uniform_(model)
        return model
    for child in model.children():
        wrong_stops_at_linear(child)
    return model


def wrong_skips_lazy(model):
    """Skips every layer it cannot initialise: a lazy layer without a shape yet is passed over in
    silence and later gets PyTorch's default initialisation, not Xavier's."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            try:
                xavier_uniform_(module)
            except (RuntimeError, ValueError):
                continue
    return model


@torch.no_grad()
def wrong_zeroes_bias_by_multiplying(model):
    """Draws the weights with torch.nn.init and zeroes each bias by multiplying it by 0: a bias
    that held nan (or inf) stays nan."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                module.bias.mul_(0)
    return model


def wrong_calls_eval(model):
    """Calls model.eval() before initialising, as if eval mode were part of switching autograd
    off: the caller's model is left in eval mode (dropout off, BatchNorm on running statistics)."""
    model.eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                xavier_uniform_(module)
    return model


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_calls_eval": "`init_mlp_` set or changed `model.training`, an attribute of the model; it",
    "wrong_children_only": "`init_mlp_` did not initialise the nn.Linear `blocks.0.mlp.0`: every",
    "wrong_every_matrix": "AttributeError: 'Embedding' object has no attribute 'bias'",
    "wrong_exact_type": "`init_mlp_` did not initialise the nn.Linear `attention.out_proj`: every",
    "wrong_forks_rng": "`init_mlp_` puts the global random generator back where it was (fork_rng",
    "wrong_grad_mode_back_on": "`init_mlp_` changed grad mode (torch.is_grad_enabled()) from False to True",
    "wrong_grad_mode_off": "`init_mlp_` changed grad mode (torch.is_grad_enabled()) from True to False",
    "wrong_matches_class_name": "AttributeError: 'LinearStack' object has no attribute 'weight'",
    "wrong_named_parameters": "`init_mlp_` did not initialise the nn.Linear `head`: every linear layer",
    "wrong_replaces_layers": "`init_mlp_` replaced or changed the submodule `model.attention.out_proj`",
    "wrong_reseeds_each_layer": "`init_mlp_` gave two same-shaped layers the very same weights: it reseeds",
    "wrong_resets_layer_buffers": "`init_mlp_` wrote into `model.body.2.mask`, a buffer, not the weight or",
    "wrong_skips_frozen": "`init_mlp_` did not initialise the nn.Linear `frozen`: every linear layer",
    "wrong_skips_lazy": "`init_mlp_` returned normally on a model holding an nn.LazyLinear whose",
    "wrong_stops_at_linear": "`init_mlp_` did not initialise the nn.Linear `body.3.down`: every linear",
    "wrong_unfreezes": "`init_mlp_` changed `model.frozen.weight.requires_grad` from False to",
    "wrong_zeroes_bias_by_multiplying": "`init_mlp_`: the bias of `body.2` is not all zeros (arithmetic such as",
}
