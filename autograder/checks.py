"""Assertions that the course's test cells call to check memory and gradients.

Each helper raises ``AssertionError`` with a message written for the student who made
the mistake: it names the function under test, the argument involved, and the evidence
(data_ptr, storage, ``_version``) in the words the lectures use. Tests take a
``snapshot`` of every input before calling the student's function and compare after.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def storage_ptr(tensor: torch.Tensor) -> int:
    """Address of the start of the storage behind ``tensor``.

    Unlike ``tensor.data_ptr()``, which points at the tensor's first element, this is the
    same for every view of one storage, whatever its offset, strides or dtype.
    """
    return tensor.untyped_storage().data_ptr()


@dataclass(frozen=True)
class Snapshot:
    """What a tensor looked like before the student's function ran.

    It holds the tensor itself (so object identity can be checked and its id cannot be
    reused) and a detached copy of its values.
    """

    name: str
    tensor: torch.Tensor
    data_ptr: int
    storage_ptr: int
    version: int
    values: torch.Tensor
    requires_grad: bool
    is_leaf: bool


def snapshot(tensor: torch.Tensor, name: str) -> Snapshot:
    """Record ``tensor``'s identity, memory, version counter and values under ``name``."""
    _require_tensor(tensor, f"`{name}`")
    return Snapshot(
        name=name,
        tensor=tensor,
        data_ptr=tensor.data_ptr(),
        storage_ptr=storage_ptr(tensor),
        version=tensor._version,
        values=tensor.detach().clone(),
        requires_grad=tensor.requires_grad,
        is_leaf=tensor.is_leaf,
    )


def assert_values_close(actual, expected: torch.Tensor, fn: str, what: str = "the result"):
    """``actual`` is a tensor with ``expected``'s shape, dtype and (close) values."""
    _require_tensor(actual, f"`{fn}` returned {_describe(actual)}, but {what}")
    if actual.shape != expected.shape:
        raise AssertionError(
            f"`{fn}`: {what} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}."
        )
    if actual.dtype != expected.dtype:
        raise AssertionError(
            f"`{fn}`: {what} has dtype {actual.dtype}, expected {expected.dtype}. "
            "Keep the input's dtype: do not convert with .float() or torch.tensor(...)."
        )
    try:
        torch.testing.assert_close(actual.detach(), expected.detach())
    except AssertionError as mismatch:
        raise AssertionError(f"`{fn}`: {what} has wrong values.\n{mismatch}") from None


def assert_new_storage(result, *inputs: Snapshot, fn: str):
    """``result`` is a tensor in memory of its own, shared with none of ``inputs``."""
    _require_tensor(result, f"`{fn}` returned {_describe(result)}, but it must return a tensor")
    for before in inputs:
        if result is before.tensor:
            raise AssertionError(
                f"`{fn}` returned its input `{before.name}` itself; it must return a new "
                "tensor and leave the input alone."
            )
        if storage_ptr(result) == before.storage_ptr:
            raise AssertionError(
                f"`{fn}` returned a tensor that shares storage with `{before.name}` "
                f"(both live at {storage_ptr(result):#x}); it must return a new tensor."
            )


def assert_untouched(tensor: torch.Tensor, before: Snapshot, fn: str):
    """``tensor`` kept its values and its version counter: nothing wrote into it."""
    if tensor._version != before.version:
        raise AssertionError(
            f"`{fn}` modified its input `{before.name}` in place "
            f"(`{before.name}._version` went from {before.version} to {tensor._version}); "
            "compute the result out of place instead."
        )
    if not torch.equal(tensor.detach(), before.values):
        raise AssertionError(
            f"`{fn}` changed the values of its input `{before.name}` without bumping its "
            f"version counter (through `.data`?); `{before.name}` must keep its values."
        )


def assert_updated_in_place(result, before: Snapshot, fn: str):
    """``result`` is the very tensor ``before`` recorded, written in place.

    Same Python object, same data_ptr, and a bumped ``_version``: a write through
    ``.data`` or ``torch.no_grad`` tricks that autograd cannot see fails the last check.
    """
    name = before.name
    tensor = before.tensor
    if tensor.data_ptr() != before.data_ptr:
        raise AssertionError(
            f"`{fn}` gave `{name}` new memory: `{name}` must be updated in place, but its "
            f"data_ptr changed from {before.data_ptr:#x} to {tensor.data_ptr():#x} "
            f"(assigning to `{name}.data` or rebinding allocates a new tensor)."
        )
    if result is not tensor:
        if isinstance(result, torch.Tensor):
            raise AssertionError(
                f"`{fn}` returned a new tensor: `{name}` must be updated in place and returned "
                f"itself; the result lives at data_ptr {result.data_ptr():#x}, "
                f"`{name}` at {before.data_ptr:#x}."
            )
        raise AssertionError(f"`{fn}` returned {_describe(result)}; it must return `{name}`.")
    if tensor._version == before.version:
        raise AssertionError(
            f"`{name}._version` is still {before.version} after `{fn}`: no in-place operation "
            f"was recorded on `{name}`. Use an in-place method such as `{name}.add_(...)`, "
            "not a write through `.data`, which hides the change from autograd."
        )


def assert_no_graph(tensor: torch.Tensor, before: Snapshot, fn: str):
    """No autograd history was attached to ``tensor`` and ``requires_grad`` is unchanged."""
    name = before.name
    if tensor.grad_fn is not None:
        raise AssertionError(
            f"`{fn}` recorded an autograd graph on `{name}` (its grad_fn is "
            f"{type(tensor.grad_fn).__name__}); do the update under `torch.no_grad()`."
        )
    if tensor.requires_grad != before.requires_grad:
        raise AssertionError(
            f"`{fn}` changed `{name}.requires_grad` from {before.requires_grad} to "
            f"{tensor.requires_grad}; it must stay as it was."
        )


def assert_gradients_match(output, reference: torch.Tensor, inputs: dict, fn: str):
    """Gradients flowing back from ``output`` equal those from the out-of-place ``reference``.

    Both are backpropagated with the same random upstream gradient (so every element
    counts, not just their sum) to each tensor in ``inputs`` (name -> tensor).
    """
    _require_tensor(output, f"`{fn}` returned {_describe(output)}")
    if output.grad_fn is None and not output.requires_grad:
        raise AssertionError(
            f"The result of `{fn}` is cut off from autograd (requires_grad is False), so no "
            f"gradient can reach {', '.join(f'`{name}`' for name in inputs)}. "
            "Avoid .detach(), .data and torch.no_grad() here."
        )
    upstream = torch.randn(
        reference.shape, dtype=reference.dtype, generator=torch.Generator().manual_seed(0)
    )
    tensors = tuple(inputs.values())
    expected = torch.autograd.grad(
        reference, tensors, upstream, allow_unused=True, retain_graph=True
    )
    try:
        actual = torch.autograd.grad(output, tensors, upstream, allow_unused=True)
    except RuntimeError as failure:
        raise AssertionError(
            f"Backward through the result of `{fn}` failed: {str(failure).splitlines()[0]}\n"
            "An in-place operation probably overwrote a tensor that autograd saved for the "
            "backward pass (lecture 02); compute that step out of place."
        ) from None
    for name, got, want in zip(inputs, actual, expected):
        if want is None:
            continue
        if got is None:
            raise AssertionError(
                f"After `{fn}`, no gradient reaches `{name}`: the result does not depend on "
                f"`{name}` in the autograd graph."
            )
        try:
            torch.testing.assert_close(got, want)
        except AssertionError as mismatch:
            raise AssertionError(
                f"After `{fn}`, the gradient with respect to `{name}` is wrong.\n{mismatch}"
            ) from None


def _require_tensor(value, message: str):
    if not isinstance(value, torch.Tensor):
        raise AssertionError(f"{message} (expected a torch.Tensor).")


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return "None" if value is None else f"a {type(value).__name__}"
