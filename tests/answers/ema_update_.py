"""Answers to `ema_update_(target, online, decay)`: target moves towards online, in place."""

import torch


def right_lerp(target, online, decay=0.99):
    """lerp_ by (1 - decay) is the EMA in one kernel; online converted to target's dtype first
    (`.to` returns online itself when the dtypes already match)."""
    with torch.no_grad():
        return target.lerp_(online.to(target.dtype), 1 - decay)


def right_mul_add(target, online, decay=0.99):
    """Two in-place steps: scale, then add the scaled online tensor (add_ takes another
    dtype and rounds into target's)."""
    with torch.no_grad():
        target.mul_(decay).add_(online, alpha=1 - decay)
    return target


@torch.no_grad()
def right_foreach(target, online, decay=0.99):
    """The _foreach_ kernel that optimizers and swa_utils use, on a list of one."""
    torch._foreach_lerp_([target], [online.to(target.dtype)], 1 - decay)
    return target


def right_lerp_only_if_mixed(target, online, decay=0.99):
    """Converts online only when it must, with an explicit test of the dtypes."""
    with torch.no_grad():
        if online.dtype != target.dtype:
            online = online.to(target.dtype)
        target.lerp_(online, 1 - decay)
    return target


def right_out_arguments(target, online, decay=0.99):
    """The out= form of mul and add, writing into target itself; grad mode switched off by
    set_grad_enabled used as a context manager, which restores the caller's."""
    with torch.set_grad_enabled(False):
        torch.mul(target, decay, out=target)
        torch.add(target, online, alpha=1 - decay, out=target)
    return target


def wrong_lerp_mixed_dtypes(target, online, decay=0.99):
    """Was `right_lerp`: lerp_ refuses an `online` of another dtype (a bfloat16 student for a
    float32 teacher) with "expected dtype float for `end`"; the spec says convert it."""
    with torch.no_grad():
        return target.lerp_(online, 1 - decay)


@torch.no_grad()
def wrong_foreach_mixed_dtypes(target, online, decay=0.99):
    """Was `right_foreach`: _foreach_lerp_ refuses mixed dtypes just as lerp_ does."""
    torch._foreach_lerp_([target], [online], 1 - decay)
    return target


def wrong_upcasts_to_float32(target, online, decay=0.99):
    """Converts online with .float(), the lecture's float32 teacher, instead of to target's
    dtype: a float64 (or bfloat16) target meets a float32 online, which lerp_ refuses."""
    with torch.no_grad():
        return target.lerp_(online.float(), 1 - decay)


def wrong_out_of_place_then_copy(target, online, decay=0.99):
    """Was `right_copy_of_out_of_place`: right values in target's memory, but the out-of-place
    expression builds three target-sized temporaries (decay * target, (1 - decay) * online,
    their sum) before copy_: the very memory an in-place EMA exists to save."""
    with torch.no_grad():
        target.copy_(decay * target + (1 - decay) * online)
    return target


def wrong_lerp_out_of_place_then_copy(target, online, decay=0.99):
    """torch.lerp without the underscore, copied back: one target-sized temporary per step."""
    with torch.no_grad():
        target.copy_(torch.lerp(target, online.to(target.dtype), 1 - decay))
    return target


def wrong_computes_in_online_dtype(target, online, decay=0.99):
    """Makes the dtypes agree the other way round: the float32 teacher is rounded to the
    bfloat16 student's precision (about 3 significant digits) before the update."""
    with torch.no_grad():
        target.copy_(target.to(online.dtype).lerp_(online, 1 - decay))
    return target


def wrong_turns_grad_back_on(target, online, decay=0.99):
    """Switches grad mode off with set_grad_enabled(False) and back on at the end, instead of
    restoring what the caller had: a caller inside torch.no_grad() finds it switched on."""
    torch.set_grad_enabled(False)
    target.lerp_(online.to(target.dtype), 1 - decay)
    torch.set_grad_enabled(True)
    return target


def wrong_slice_assignment(target, online, decay=0.99):
    """`target[:] = ...` writes into target's memory, but a 0-dim target has no slice
    (IndexError), and the right-hand side is a target-sized temporary."""
    with torch.no_grad():
        target[:] = decay * target + (1 - decay) * online
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
        return target.lerp_(online.to(target.dtype), decay)


def wrong_half_averaged_in_bfloat16(target, online, decay=0.99):
    """Takes "half precision" for bfloat16: a float16 target is averaged in bfloat16 and
    copied back, three bits short of what float16 holds."""
    with torch.no_grad():
        work = torch.bfloat16 if target.dtype == torch.float16 else target.dtype
        target.copy_(target.to(work).lerp_(online.to(work), 1 - decay))
    return target


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_assigns_data": "`ema_update_` gave `target` new memory: `target` must be updated in place",
    "wrong_computes_in_online_dtype": "`ema_update_`: a torch.float32 `target` updated from a torch.bfloat16",
    "wrong_detach_without_no_grad": "a leaf Variable that requires grad is being used in an in-place operation.",
    "wrong_foreach_mixed_dtypes": "`ema_update_` of a torch.float32 `target` from a torch.bfloat16 `online`",
    "wrong_half_averaged_in_bfloat16": "`ema_update_`: a torch.float16 `target` updated from a torch.float32",
    "wrong_lerp_mixed_dtypes": "`ema_update_` of a torch.float32 `target` from a torch.bfloat16 `online`",
    "wrong_lerp_out_of_place_then_copy": "`ema_update_` needed 4.2 MB of new memory at its peak; an update in place",
    "wrong_no_no_grad": "`ema_update_` recorded an autograd graph on `target` (its grad_fn is",
    "wrong_out_of_place_then_copy": "`ema_update_` needed 12.6 MB of new memory at its peak; an update in place",
    "wrong_rebinds": "`ema_update_` returned a new tensor: `target` must be updated in place and",
    "wrong_scales_online_in_place": "`ema_update_` modified its input `online` in place (`online._version` went",
    "wrong_slice_assignment": "IndexError: slice() cannot be applied to a 0-dim tensor.",
    "wrong_swapped_weights": "`ema_update_`: `target` afterwards for torch.float32 contiguous tensors of",
    "wrong_turns_grad_back_on": "`ema_update_` changed grad mode (torch.is_grad_enabled()) from False to",
    "wrong_upcasts_to_float32": "expected dtype double for `end` but got dtype float",
}
