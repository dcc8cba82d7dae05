"""Answers to `fixed_residual_step(model, batch, target, optimizer)`: the residual training step
without the in-place write into relu's saved output."""

import torch
from torch.nn import functional as F


def right_out_of_place_residual(model, batch, target, optimizer):
    """The residual added out of place: relu's output stays as autograd saved it."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch))
    hidden = hidden + batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def right_clone_then_add_in_place(model, batch, target, optimizer):
    """A copy of relu's output is the step's own tensor: += into it harms nothing autograd saved."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch)).clone()
    hidden += batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def right_torch_add_and_functional(model, batch, target, optimizer):
    """torch.add and the functional relu, the loss written out as a mean of squares."""
    optimizer.zero_grad(set_to_none=True)
    prediction = model.outer(torch.add(F.relu(model.inner(batch)), batch))
    loss = ((prediction - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    return float(loss)


def right_residual_first_in_the_sum(model, batch, target, optimizer):
    """batch + relu(...): the sum is a new tensor whichever comes first."""
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(batch + model.inner(batch).relu()), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_detach_silences_the_error(model, batch, target, optimizer):
    """.detach() makes the error go away, and with it every gradient of the inner layer."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch)).detach()
    hidden += batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_residual_through_data(model, batch, target, optimizer):
    """Writing through .data moves no version counter, so backward runs: with relu's saved
    output overwritten, and no residual path in the graph."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch))
    hidden.data += batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_residual_under_no_grad(model, batch, target, optimizer):
    """The add under torch.no_grad() still moves relu's version counter: backward still fails."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch))
    with torch.no_grad():
        hidden += batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_residual_before_relu(model, batch, target, optimizer):
    """Moving the residual inside the relu avoids the error but changes the model."""
    optimizer.zero_grad()
    hidden = torch.relu(model.inner(batch) + batch)
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_forgets_zero_grad(model, batch, target, optimizer):
    """Without optimizer.zero_grad() the gradients of every step add up."""
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_own_sgd_update(model, batch, target, optimizer):
    """An update of its own (plain SGD, lr 0.05) ignores the optimizer it was given: its
    learning rate, momentum, Adam's statistics."""
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.grad is not None:
                parameter -= 0.05 * parameter.grad
    return loss.item()


def wrong_returns_the_loss_tensor(model, batch, target, optimizer):
    """Returns the loss tensor (with its graph) instead of a float."""
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    optimizer.step()
    return loss


def wrong_leaves_grad_mode_off(model, batch, target, optimizer):
    """Switches grad mode off for the update without a with block, and leaves it off for the caller."""
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    torch.set_grad_enabled(False)
    optimizer.step()
    return loss.item()


def wrong_loss_after_the_update(model, batch, target, optimizer):
    """Returns the loss of a second forward pass, after the update, not the step's loss."""
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        return F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target).item()


def wrong_residual_into_the_batch(model, batch, target, optimizer):
    """Adds relu's output into the caller's batch: the batch changes (and the first layer saved it)."""
    optimizer.zero_grad()
    hidden = batch.add_(torch.relu(model.inner(batch)))
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_unfreezes_the_model(model, batch, target, optimizer):
    """Calls model.requires_grad_() as if it were model.train(): a frozen layer is unfrozen and gets a gradient."""
    model.requires_grad_()
    optimizer.zero_grad()
    loss = F.mse_loss(model.outer(torch.relu(model.inner(batch)) + batch), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_clamp_instead_of_relu(model, batch, target, optimizer):
    """clamp(min=0) for relu: it saves its input, not its output, so += on its output is
    safe; but at an input of exactly 0 its gradient is 1 (clamp lets the boundary through),
    relu's is 0: the gradient of another loss."""
    optimizer.zero_grad()
    hidden = model.inner(batch).clamp(min=0)
    hidden += batch
    loss = F.mse_loss(model.outer(hidden), target)
    loss.backward()
    optimizer.step()
    return loss.item()


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_clamp_instead_of_relu": "`fixed_residual_step`: `model.inner.bias.grad` (a batch of zeros and an inner",
    "wrong_detach_silences_the_error": "After `fixed_residual_step` (a torch.float32 model with 8 features)",
    "wrong_forgets_zero_grad": "`fixed_residual_step`: `model.inner.weight.grad` (a second call on the",
    "wrong_leaves_grad_mode_off": "`fixed_residual_step` changed grad mode (torch.is_grad_enabled()) from",
    "wrong_loss_after_the_update": "`fixed_residual_step` returned the loss",
    "wrong_own_sgd_update": "Training with SGD(lr=0.05, momentum=0.9) (a torch.float64 model): at step",
    "wrong_residual_before_relu": "`fixed_residual_step` returned the loss",
    "wrong_residual_into_the_batch": "one of the variables needed for gradient computation has been modified by",
    "wrong_residual_through_data": "`fixed_residual_step`: `model.inner.weight.grad` (a torch.float32 model",
    "wrong_residual_under_no_grad": "one of the variables needed for gradient computation has been modified by",
    "wrong_returns_the_loss_tensor": "`fixed_residual_step` returned a Tensor for a torch.float32 model with 8",
    "wrong_unfreezes_the_model": "`fixed_residual_step` gave the frozen `model.inner.weight` a gradient (a",
}
