"""Answers to `fixed_temperature_step(model, batch, labels, optimizer, temperature)`: the
temperature-scaled classifier step with the division where autograd records it."""

import torch
from torch.nn import functional as F


def right_divide_out_of_place(model, batch, labels, optimizer, temperature):
    """The division as an operation autograd records."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch))) / temperature
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def right_div_in_place_on_the_logits(model, batch, labels, optimizer, temperature):
    """div_ without .data: the linear layer does not save its output, so writing into it is
    safe, and autograd records the division."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch)))
    logits.div_(temperature)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def right_scaled_inside_the_loss(model, batch, labels, optimizer, temperature):
    """torch.div inside the loss call, written as log_softmax and nll_loss."""
    optimizer.zero_grad()
    logits = model.outer(F.relu(model.inner(batch)))
    loss = F.nll_loss(F.log_softmax(torch.div(logits, temperature), dim=1), labels)
    loss.backward()
    optimizer.step()
    return float(loss)


def right_multiply_by_the_inverse(model, batch, labels, optimizer, temperature):
    """Multiplying by 1 / temperature: the same up to rounding."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(model.inner(batch).relu()) * (1.0 / temperature), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_keeps_the_data_write(model, batch, labels, optimizer, temperature):
    """The broken step itself: .data hides the division, so the gradients miss its 1 / temperature."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch)))
    logits.data.div_(temperature)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_divides_under_no_grad(model, batch, labels, optimizer, temperature):
    """torch.no_grad() instead of .data: the version counter moves, but autograd still does
    not record the division, and backward (which never needed the logits) runs without it."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch)))
    with torch.no_grad():
        logits /= temperature
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_divides_the_loss(model, batch, labels, optimizer, temperature):
    """Dividing the loss is not dividing the logits."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))), labels) / temperature
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_drops_the_temperature(model, batch, labels, optimizer, temperature):
    """Removing the offending line removes the temperature."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_detached_division(model, batch, labels, optimizer, temperature):
    """.detach() / temperature cuts the loss off from the model: backward has nothing to do."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch))).detach() / temperature
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_forgets_zero_grad(model, batch, labels, optimizer, temperature):
    """Without optimizer.zero_grad() the gradients of every step add up."""
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))) / temperature, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_leaves_grad_mode_off(model, batch, labels, optimizer, temperature):
    """Switches grad mode off for the update without a with block, and leaves it off for the caller."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))) / temperature, labels)
    loss.backward()
    torch.set_grad_enabled(False)
    optimizer.step()
    return loss.item()


def wrong_returns_the_loss_tensor(model, batch, labels, optimizer, temperature):
    """Returns the loss tensor instead of a float."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))) / temperature, labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


def wrong_unfreezes_the_model(model, batch, labels, optimizer, temperature):
    """Calls model.requires_grad_() as if it were model.train(): a frozen layer is unfrozen and gets a gradient."""
    model.requires_grad_()
    optimizer.zero_grad()
    loss = F.cross_entropy(model.outer(torch.relu(model.inner(batch))) / temperature, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def wrong_keeps_the_data_write_and_rescales_the_loss(model, batch, labels, optimizer, temperature):
    """Keeps the division through .data and divides the loss by the temperature before
    backward: the gradients come out right (the missing 1 / temperature is put back by
    hand), but autograd still does not see the write the loss depends on."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch)))
    logits.data.div_(temperature)
    loss = F.cross_entropy(logits, labels)
    (loss / temperature).backward()
    optimizer.step()
    return loss.item()


def wrong_hides_the_data_write_behind_a_copy(model, batch, labels, optimizer, temperature):
    """The same, written into a product made after the layer (`* 1`), not into the layer's
    own output: the write still changes a tensor autograd made without autograd seeing it."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch))) * 1
    logits.data.div_(temperature)
    loss = F.cross_entropy(logits, labels)
    (loss / temperature).backward()
    optimizer.step()
    return loss.item()


def wrong_divides_a_detached_alias_and_rescales_the_loss(model, batch, labels, optimizer, temperature):
    """.detach() instead of .data: the alias shares the version counter, so the count moves,
    but autograd records no division (the softmax's backward never needed the logits, so
    nothing raises); the loss rescaled by hand puts the gradients' factor back."""
    optimizer.zero_grad()
    logits = model.outer(torch.relu(model.inner(batch)))
    logits.detach().div_(temperature)
    loss = F.cross_entropy(logits, labels)
    (loss / temperature).backward()
    optimizer.step()
    return loss.item()


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
UNRECORDED_WRITE = "`fixed_temperature_step` changed a tensor of shape (16, 4) made by "
CAUGHT_BY = {
    "wrong_detached_division": "element 0 of tensors does not require grad and does not have a grad_fn",
    "wrong_divides_a_detached_alias_and_rescales_the_loss": UNRECORDED_WRITE + "AddmmBackward0",
    "wrong_divides_the_loss": "`fixed_temperature_step` returned the loss",
    "wrong_divides_under_no_grad": UNRECORDED_WRITE + "AddmmBackward0",
    "wrong_drops_the_temperature": "`fixed_temperature_step` returned the loss",
    "wrong_forgets_zero_grad": "`fixed_temperature_step`: `model.inner.weight.grad` (a second call on the",
    "wrong_hides_the_data_write_behind_a_copy": UNRECORDED_WRITE + "MulBackward0",
    "wrong_keeps_the_data_write": UNRECORDED_WRITE + "AddmmBackward0",
    "wrong_keeps_the_data_write_and_rescales_the_loss": UNRECORDED_WRITE + "AddmmBackward0",
    "wrong_leaves_grad_mode_off": "`fixed_temperature_step` changed grad mode (torch.is_grad_enabled()) from",
    "wrong_returns_the_loss_tensor": "`fixed_temperature_step` returned a Tensor for a torch.float32 model",
    "wrong_unfreezes_the_model": "`fixed_temperature_step` gave the frozen `model.inner.weight` a gradient",
}
