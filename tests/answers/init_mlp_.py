"""Answers to `init_mlp_(model)`: xavier_uniform_ on every nn.Linear at any depth.

The graded notebook's init_mlp_ calls the student's own xavier_uniform_; these answers call
a right one, so that only the traversal is on trial.
"""

from torch import nn

from answers.xavier_uniform_ import right_no_grad_block as xavier_uniform_


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
