"""Answers to `ema_update_(target, online, decay)`: target moves towards online, in place."""

import torch


def right_lerp(target, online, decay=0.99):
    """lerp_ by (1 - decay) is the EMA in one kernel."""
    with torch.no_grad():
        return target.lerp_(online, 1 - decay)


def right_mul_add(target, online, decay=0.99):
    """Two in-place steps: scale, then add the scaled online tensor."""
    with torch.no_grad():
        target.mul_(decay).add_(online, alpha=1 - decay)
    return target


@torch.no_grad()
def right_foreach(target, online, decay=0.99):
    """The _foreach_ kernel that optimizers and swa_utils use, on a list of one."""
    torch._foreach_lerp_([target], [online], 1 - decay)
    return target


def right_copy_of_out_of_place(target, online, decay=0.99):
    """Compute out of place, then copy_ into target's memory; all under no_grad."""
    with torch.no_grad():
        target.copy_(decay * target + (1 - decay) * online)
    return target


def wrong_rebinds(target, online, decay=0.99):
    """Builds a new tensor and returns it; the caller's target never changes."""
    with torch.no_grad():
        target = decay * target + (1 - decay) * online
    return target


def wrong_no_no_grad(target, online, decay=0.99):
    """In place but recorded by autograd: target joins online's graph (or, as a parameter, raises)."""
    return target.mul_(decay).add_(online, alpha=1 - decay)


def wrong_assigns_data(target, online, decay=0.99):
    """Swaps new memory in behind target."""
    target.data = decay * target.data + (1 - decay) * online.data
    return target


def wrong_detach_without_no_grad(target, online, decay=0.99):
    """Detaches online instead of using no_grad: a target that is a parameter still raises."""
    return target.mul_(decay).add_(online.detach(), alpha=1 - decay)


def wrong_scales_online_in_place(target, online, decay=0.99):
    """Saves a temporary by scaling online in place, corrupting the student."""
    with torch.no_grad():
        return target.mul_(decay).add_(online.mul_(1 - decay))


def wrong_swapped_weights(target, online, decay=0.99):
    """Weights the two tensors the other way round: target races to online."""
    with torch.no_grad():
        return target.lerp_(online, decay)
