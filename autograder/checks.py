"""Assertions that the course's test cells call to check memory and gradients.

Each helper raises ``AssertionError`` with a message written for the student who made
the mistake: it names the function under test, the argument involved, and the evidence
(data_ptr, storage, ``_version``) in the words the lectures use. Tests take a
``snapshot`` of every input (``snapshot_module`` of every model) before calling the
student's function and compare after. A failing check raises ``CheckFailed``, which a
notebook shows without this module's frames: the student reads their own call and the
message, not our source.

The student's code runs in the same interpreter, so nothing it returns or touches is
taken at its word:

- only **exact** types are accepted: ``torch.Tensor`` or ``nn.Parameter`` (a subclass can
  answer "equal" to every comparison through ``__torch_function__``), ``bool`` (an object
  can pose as one), and, for an input, the very class it had before the call (its
  ``__class__`` can be reassigned);
- tensors are read and compared through torch functions captured when this module is
  imported (not ``torch.testing.assert_close``, whose helpers are looked up at each call),
  never through methods looked up on the student's object, nor anything it added to it;
- a model is checked through the submodules and tensors recorded before the call, not
  through what its methods answer afterwards.
"""

from __future__ import annotations

import functools
import gettext
import types
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from autograder.memory import measure, megabytes
from autograder.message_language import DOMAIN, LOCALE, message_language

TENSOR_TYPES = (torch.Tensor, nn.Parameter)
_TENSOR_BASE = torch.Tensor.__mro__[1]
_version = vars(_TENSOR_BASE)["_version"].__get__
_grad_fn = vars(_TENSOR_BASE)["grad_fn"].__get__
_requires_grad = vars(_TENSOR_BASE)["requires_grad"].__get__
_is_leaf = vars(_TENSOR_BASE)["is_leaf"].__get__
_shape = vars(_TENSOR_BASE)["shape"].__get__
_dtype = vars(_TENSOR_BASE)["dtype"].__get__
_layout = vars(_TENSOR_BASE)["layout"].__get__
_device = vars(_TENSOR_BASE)["device"].__get__
_data_ptr = torch.Tensor.data_ptr
_detach = torch.Tensor.detach
_clone = torch.Tensor.clone
_untyped_storage = torch.Tensor.untyped_storage
_storage_data_ptr = torch.UntypedStorage.data_ptr
_storage_nbytes = torch.UntypedStorage.nbytes
_equal = torch.equal
_eq = torch.eq
_isclose = torch.isclose
_all = torch.all
_logical_not = torch.logical_not
_nonzero = torch.nonzero
_count_nonzero = torch.count_nonzero
_numel = torch.Tensor.numel
_item = torch.Tensor.item
_select_along = torch.select
_is_floating_point = torch.Tensor.is_floating_point
_is_complex = torch.Tensor.is_complex
_is_grad_enabled = torch.is_grad_enabled
_is_inference_mode_enabled = torch.is_inference_mode_enabled
_get_default_dtype = torch.get_default_dtype
_get_rng_state = torch.get_rng_state
_manual_seed = torch.manual_seed
# torch.testing.assert_close's default (rtol, atol) by dtype; other dtypes compare exactly.
TOLERANCES = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
              torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
              torch.complex128: (1e-7, 1e-7)}
_randn = torch.randn
_generator = torch.Generator
_grad = torch.autograd.grad
_vars = vars
_GONE = object()


@functools.lru_cache(maxsize=8)
def _translations(language: str | None) -> gettext.NullTranslations:
    """The checks' messages in ``language`` (``message_language``: the student's, read at
    each message, since a zygote imports this module before its kernels know theirs)."""
    if not language:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE, languages=[language], fallback=True)


def _say(english: str, /, **values) -> str:
    """``english`` in the student's language, its ``{placeholders}`` filled in; the English
    if a translation is missing, unreadable or does not fit the values (never an error of
    its own). Said only when a check fails: a passing check calls none of this, so nothing
    here runs between the student's code and a comparison."""
    try:
        return _translations(message_language()).gettext(english).format(**values)
    except Exception:  # noqa: BLE001 (a broken catalogue must not turn a failure into another error)
        return english.format(**values)


class CheckFailed(AssertionError):
    """A check that failed. IPython asks an exception for ``_render_traceback_`` before it
    formats one itself; ours is IPython's own formatting of the traceback minus the frames
    of this module, so the failing line of the test cell comes right before the message."""

    def _render_traceback_(self) -> list[str]:
        from IPython import get_ipython  # only ever called by IPython

        student_frames = _without_frames_of(__file__, self.__traceback__)
        return get_ipython().InteractiveTB.structured_traceback(type(self), self, student_frames)


def _without_frames_of(filename: str, traceback: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback with every frame of code in ``filename`` left out."""
    kept = []
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename != filename:
            kept.append(traceback)
        traceback = traceback.tb_next
    chain = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


def storage_ptr(tensor: torch.Tensor) -> int:
    """Address of the start of the storage behind ``tensor``.

    Unlike ``tensor.data_ptr()``, which points at the tensor's first element, this is the
    same for every view of one storage, whatever its offset, strides or dtype.
    """
    return _storage_data_ptr(_untyped_storage(tensor))


@dataclass(frozen=True)
class Snapshot:
    """What a tensor looked like before the student's function ran.

    It holds the tensor itself (so object identity can be checked and its id cannot be
    reused), its exact class, and a detached copy of its values.
    """

    name: str
    tensor: torch.Tensor
    kind: type
    data_ptr: int
    storage_ptr: int
    version: int
    values: torch.Tensor
    requires_grad: bool
    is_leaf: bool
    # What the object held besides its data: an attribute set on it hides torch's own.
    attributes: frozenset[str] = frozenset()


def snapshot(tensor: torch.Tensor, name: str) -> Snapshot:
    """Record ``tensor``'s identity, class, memory, version counter and values under ``name``."""
    _require_tensor(tensor, lambda: f"`{name}`")
    return Snapshot(
        name=name,
        tensor=tensor,
        kind=type(tensor),
        data_ptr=_data_ptr(tensor),
        storage_ptr=storage_ptr(tensor),
        version=_version(tensor),
        values=_clone(_detach(tensor)),
        requires_grad=_requires_grad(tensor),
        is_leaf=_is_leaf(tensor),
        attributes=frozenset(_vars(tensor)),
    )


@dataclass(frozen=True)
class ModuleSnapshot:
    """A model before the student's function ran: every submodule's exact class and
    instance attributes, what each class in their hierarchy defines, and a ``Snapshot``
    of every parameter and persistent buffer, by their ``state_dict`` names."""

    name: str
    module: nn.Module
    classes: dict[str, type]
    tensors: dict[str, Snapshot]
    parameter_names: frozenset[str]
    # submodule -> its instance attributes (and the items of those that are containers)
    attributes: dict[str, dict[str, tuple]]
    # every class of every submodule's hierarchy -> what its own dictionary held
    class_dicts: dict[type, dict[str, object]]


def snapshot_module(module: nn.Module, name: str) -> ModuleSnapshot:
    """Record ``module``'s structure and every tensor it holds under ``name``."""
    if not isinstance(module, nn.Module):
        raise CheckFailed(_say("`{name}` is {value}, expected an nn.Module.", name=name, value=_describe(module)))
    submodules = _submodules(module)
    parameters, tensors = _tensors(submodules)
    return ModuleSnapshot(
        name=name,
        module=module,
        classes={path: type(sub) for path, sub in submodules.items()},
        tensors={path: snapshot(tensor, _joined(name, path)) for path, tensor in tensors.items()},
        parameter_names=frozenset(parameters),
        attributes={path: _instance_state(sub) for path, sub in submodules.items()},
        class_dicts={cls: dict(_vars(cls)) for sub in submodules.values() for cls in type(sub).__mro__
                     if cls is not object},
    )


def assert_module_kept(module: nn.Module, before: ModuleSnapshot, fn: str) -> dict[str, torch.Tensor]:
    """``module`` still is the model ``before`` recorded: every submodule of the same class,
    and that class as it was (``type(block).forward = ...`` would answer for it); the same
    instance attributes (``block.forward = ...``); the same tensor objects under the same
    names, none of a changed class. Returns those tensors by name, for the checks that
    follow. The model is read through its own dictionaries, never through its methods."""
    if type(module) is not before.classes[""]:
        raise CheckFailed(_say("`{fn}` changed the class of `{name}` from {old} to {new}; it must keep the model as "
                               "it is.", fn=fn, name=before.name, old=before.classes[""].__name__,
                               new=type(module).__name__))
    submodules = _submodules(module)
    classes = {path: type(sub) for path, sub in submodules.items()}
    if classes != before.classes:
        changed = min(path for path, kind in set(classes.items()) ^ set(before.classes.items()))
        raise CheckFailed(_say("`{fn}` replaced or changed the submodule `{name}`; it must work on the layers it "
                               "was given.", fn=fn, name=_joined(before.name, changed)))
    for cls, recorded in before.class_dicts.items():
        now = _vars(cls)
        changed = sorted(name for name in now.keys() | recorded.keys()
                         if now.get(name, _GONE) is not recorded.get(name))
        if changed:
            raise CheckFailed(_say("`{fn}` changed `{name}`, which every such layer uses; it must leave the classes "
                                   "of the model alone.", fn=fn, name=".".join(map(str, (cls.__name__, changed[0])))))
    _, tensors = _tensors(submodules)
    added = sorted(set(tensors) - set(before.tensors))
    if added:
        raise CheckFailed(_say("`{fn}` added `{name}` to the model; it must leave the model's parameters and "
                               "buffers as they are.", fn=fn, name=_joined(before.name, added[0])))
    for path, recorded in before.tensors.items():
        if tensors.get(path) is not recorded.tensor:
            raise CheckFailed(_say("`{fn}` replaced `{name}` with a new tensor: anything holding the old one (an "
                                   "optimizer) would go on using a tensor the model no longer has; update the tensor "
                                   "it was given in place.", fn=fn, name=recorded.name))
        _require_kind(recorded.tensor, recorded, fn)
    for path, sub in submodules.items():
        changed = _changed_attributes(_instance_state(sub), before.attributes[path])
        if changed:
            name = _joined(_joined(before.name, path), changed)
            raise CheckFailed(_say("`{fn}` set or changed `{name}`, an attribute of the model; it must leave the "
                                   "model's layers as they are.", fn=fn, name=name))
    return {path: recorded.tensor for path, recorded in before.tensors.items()}


def _submodules(module: nn.Module) -> dict[str, nn.Module]:
    """path -> submodule, the model itself at "", each once, from the modules' own
    ``_modules`` dictionaries (a subclass can override ``named_modules``)."""
    found, seen, stack = {}, set(), [("", module)]
    while stack:
        path, current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        found[path] = current
        children = _vars(current).get("_modules", {})
        stack += [(_child(path, name), child) for name, child in reversed(list(children.items()))
                  if child is not None]
    return found


def _tensors(submodules: dict[str, nn.Module]) -> tuple[list[str], dict[str, torch.Tensor]]:
    """The parameters' names, and path -> tensor for every parameter and persistent buffer,
    as ``state_dict(keep_vars=True)`` names them, from the modules' own dictionaries."""
    parameters, tensors = [], {}
    for path, sub in submodules.items():
        attributes = _vars(sub)
        for name, tensor in attributes.get("_parameters", {}).items():
            if tensor is not None:
                parameters.append(_child(path, name))
                tensors[_child(path, name)] = tensor
        transient = attributes.get("_non_persistent_buffers_set", set())
        for name, tensor in attributes.get("_buffers", {}).items():
            if tensor is not None and name not in transient:
                tensors[_child(path, name)] = tensor
    return parameters, tensors


def assert_answer(answer, expected: bool, fn: str, call: str) -> None:
    """``answer`` is exactly the bool ``expected`` (no object posing as a bool)."""
    if type(answer) is not bool:
        raise CheckFailed(_say("`{call}` returned {value}; `{fn}` must return True or False.", call=call,
                               value=_describe(answer), fn=fn))
    if answer is not expected:
        raise CheckFailed(_say("`{call}` returned {answer}, expected {expected}.", call=call, answer=answer,
                               expected=expected))


def assert_values_close(actual, expected: torch.Tensor, fn: str, what: str | None = None):
    """``actual`` is a tensor with ``expected``'s shape, dtype and (close) values (``what``
    names it for the message; by default, the result)."""
    def named() -> str:
        return what or _say("the result")
    _require_tensor(actual, lambda: _say("`{fn}` returned {value}, but {what}", fn=fn, value=_describe(actual),
                                         what=named()))
    _require_tensor(expected, lambda: _say("the expected value"))
    if _shape(actual) != _shape(expected):
        raise CheckFailed(_say("`{fn}`: {what} has shape {shape}, expected {expected}.", fn=fn, what=named(),
                               shape=tuple(_shape(actual)), expected=tuple(_shape(expected))))
    if _dtype(actual) != _dtype(expected):
        raise CheckFailed(_say(
            "`{fn}`: {what} has dtype {dtype}, expected {expected}. Give the dtype the task asks for (for a new "
            "result, the one type promotion gives, as in the expression; for an update in place, the input's "
            "own): do not convert with .float() or torch.tensor(...).",
            fn=fn, what=named(), dtype=_dtype(actual), expected=_dtype(expected)))
    mismatch = _mismatch(_detach(actual), _detach(expected))
    if mismatch:
        raise CheckFailed(_say("`{fn}`: {what} has wrong values: {mismatch}", fn=fn, what=named(), mismatch=mismatch))


def assert_new_storage(result, *inputs: Snapshot, fn: str):
    """``result`` is a tensor in memory of its own, shared with none of ``inputs``. A
    result with no bytes of storage shares nothing (empty storages may all start at 0)."""
    _require_tensor(result, lambda: _say("`{fn}` returned {value}, but it must return a tensor", fn=fn,
                                         value=_describe(result)))
    holds_bytes = _storage_nbytes(_untyped_storage(result)) > 0
    for before in inputs:
        if result is before.tensor:
            raise CheckFailed(_say("`{fn}` returned its input `{name}` itself; it must return a new tensor and "
                                   "leave the input alone.", fn=fn, name=before.name))
        if holds_bytes and storage_ptr(result) == before.storage_ptr:
            raise CheckFailed(_say("`{fn}` returned a tensor that shares storage with `{name}` (both live at "
                                   "{address}); it must return a new tensor.", fn=fn, name=before.name,
                                   address=hex(storage_ptr(result))))


def assert_untouched(tensor: torch.Tensor, before: Snapshot, fn: str):
    """``tensor`` kept its class, values and version counter: nothing wrote into it."""
    _require_kind(tensor, before, fn)
    if _version(tensor) != before.version:
        raise CheckFailed(_say("`{fn}` modified its input `{name}` in place (`{name}._version` went from {old} to "
                               "{new}); compute the result out of place instead.", fn=fn, name=before.name,
                               old=before.version, new=_version(tensor)))
    if not _same_values(_detach(tensor), before.values):
        raise CheckFailed(_say("`{fn}` changed the values of its input `{name}` without bumping its version "
                               "counter (through `.data`?); `{name}` must keep its values.", fn=fn, name=before.name))


def assert_updated_in_place(result, before: Snapshot, fn: str):
    """``result`` is the very tensor ``before`` recorded, written in place.

    Same Python object and class, same data_ptr, and a bumped ``_version``: a write
    through ``.data`` or ``torch.no_grad`` tricks that autograd cannot see fails the last check.
    """
    name = before.name
    tensor = before.tensor
    _require_kind(tensor, before, fn)
    if _data_ptr(tensor) != before.data_ptr:
        raise CheckFailed(_say("`{fn}` gave `{name}` new memory: `{name}` must be updated in place, but its "
                               "data_ptr changed from {old} to {new} (assigning to `{name}.data` or rebinding "
                               "allocates a new tensor).", fn=fn, name=name, old=hex(before.data_ptr),
                               new=hex(_data_ptr(tensor))))
    if result is not tensor:
        if type(result) in TENSOR_TYPES:
            raise CheckFailed(_say("`{fn}` returned a new tensor: `{name}` must be updated in place and returned "
                                   "itself; the result lives at data_ptr {new}, `{name}` at {old}.", fn=fn,
                                   name=name, new=hex(_data_ptr(result)), old=hex(before.data_ptr)))
        raise CheckFailed(_say("`{fn}` returned {value}; it must return `{name}`.", fn=fn, value=_describe(result),
                               name=name))
    if _version(tensor) == before.version:
        raise CheckFailed(_say("`{name}._version` is still {version} after `{fn}`: no in-place operation was "
                               "recorded on `{name}`. Use an in-place method such as `{name}.add_(...)`, not a write "
                               "through `.data`, which hides the change from autograd.", name=name,
                               version=before.version, fn=fn))


@dataclass(frozen=True)
class Context:
    """The global settings a function must leave as its caller had them."""

    grad_enabled: bool
    inference_mode: bool
    default_dtype: torch.dtype


def calling_context() -> Context:
    """The caller's grad mode, inference mode and default dtype, now."""
    return Context(_is_grad_enabled(), _is_inference_mode_enabled(), _get_default_dtype())


def assert_context_kept(before: Context, fn: str):
    """``fn`` changed no global setting: a function that switches grad mode off (or on)
    without a ``with`` block leaves every later line of its caller in that mode."""
    now = calling_context()
    for setting, how in (("grad_enabled", lambda: _say("grad mode (torch.is_grad_enabled())")),
                         ("inference_mode", lambda: _say("inference mode")),
                         ("default_dtype", lambda: _say("the default dtype"))):
        if getattr(now, setting) != getattr(before, setting):
            raise CheckFailed(_say("`{fn}` changed {setting} from {old} to {new} for its caller; change it only "
                                   "inside a `with` block (`with torch.no_grad():`), which restores it.", fn=fn,
                                   setting=how(), old=getattr(before, setting), new=getattr(now, setting)))


def assert_random_stream_kept(call, fn: str):
    """``call()`` runs the student's function on inputs made before the call (making a
    layer draws random numbers too, which would hide a function that puts the stream back).
    A random initializer draws from the global random stream as any other does: what it
    draws depends on the caller's seed (it does not reseed), and the stream moves on (it
    does not put it back), so that the next layer the caller initializes gets other numbers."""
    _manual_seed(1)
    call()
    after_seed_1 = _get_rng_state()
    _manual_seed(2)
    call()
    if _equal(after_seed_1, _get_rng_state()):
        raise CheckFailed(_say("`{fn}` reseeds the global random generator: every call starts the same random "
                               "numbers whatever the caller's seed, so same-shaped layers get the same weights; draw "
                               "from the generator as it is.", fn=fn))
    _manual_seed(1)
    start = _get_rng_state()
    call()
    if _equal(start, _get_rng_state()):
        raise CheckFailed(_say("`{fn}` puts the global random generator back where it was (fork_rng or "
                               "set_rng_state?): the next layer initialized gets the very same numbers; let it move "
                               "on.", fn=fn))


def assert_allocates_at_most(call, limit_bytes: int, fn: str, allowed: str):
    """``call()`` needs at most ``limit_bytes`` of new memory at its peak (``allowed`` says
    what that limit is, for the message), as ``autograder.memory`` measures it."""
    peak = measure(call).peak_bytes
    if peak > limit_bytes:
        raise CheckFailed(_say("`{fn}` needed {peak} of new memory at its peak; {allowed} allows {limit}: it builds "
                               "a temporary it does not need (compute in place).", fn=fn, peak=megabytes(peak),
                               allowed=allowed, limit=megabytes(limit_bytes)))


def assert_no_graph(tensor: torch.Tensor, before: Snapshot, fn: str):
    """No autograd history was attached to ``tensor`` and ``requires_grad`` is unchanged."""
    name = before.name
    _require_kind(tensor, before, fn)
    if _grad_fn(tensor) is not None:
        raise CheckFailed(_say("`{fn}` recorded an autograd graph on `{name}` (its grad_fn is {grad_fn}); do the "
                               "update under `torch.no_grad()`.", fn=fn, name=name,
                               grad_fn=type(_grad_fn(tensor)).__name__))
    if _requires_grad(tensor) != before.requires_grad:
        raise CheckFailed(_say("`{fn}` changed `{name}.requires_grad` from {old} to {new}; it must stay as it was.",
                               fn=fn, name=name, old=before.requires_grad, new=_requires_grad(tensor)))


class _GraphWrites(TorchFunctionMode):
    """Sees every torch call of a function, before and after it runs, and keeps each tensor
    the calls make inside autograd's graph with the values and the ``grad_fn`` it had. An
    in-place operation autograd records gives the tensor a new ``grad_fn``; a write it does
    not record (through ``.data``, ``.detach()``, ``torch.no_grad()``, NumPy) changes the
    values and leaves the ``grad_fn``: the first such write is kept in ``unrecorded``."""

    def __init__(self):
        super().__init__()
        self.made: list[list] = []
        self.unrecorded: str | None = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self._look()
        result = func(*args, **(kwargs or {}))
        self._look()
        for output in result if type(result) in (tuple, list) else (result,):
            if type(output) in TENSOR_TYPES and _grad_fn(output) is not None:
                self.made.append([output, _clone(_detach(output)), _grad_fn(output)])
        return result

    def _look(self):
        for entry in self.made:
            tensor, values, grad_fn = entry
            if _same_values(_detach(tensor), values):
                continue
            if _grad_fn(tensor) is grad_fn:
                self.unrecorded = self.unrecorded or _say("a tensor of shape {shape} made by {grad_fn}",
                                                          shape=tuple(_shape(values)), grad_fn=type(grad_fn).__name__)
            entry[1], entry[2] = _clone(_detach(tensor)), _grad_fn(tensor)


def assert_autograd_records_every_write(call, fn: str, case: str, what_to_do: str):
    """Runs ``call()`` (a call of ``fn``) and fails if it changed a tensor of autograd's graph,
    made during the call, without autograd recording the change. Such a write can leave
    every number right (a loss rescaled by hand puts a lost factor back) while backward
    runs a graph that is not the computation: gradients checks cannot see it, this can.
    ``case`` names the call's inputs for the message. Returns what ``call()`` returned."""
    watch = _GraphWrites()
    with watch:
        result = call()
    watch._look()
    if watch.unrecorded is not None:
        raise CheckFailed(_say("`{fn}` changed {tensor} after autograd recorded it, and autograd did not record "
                               "the change (its grad_fn stayed): a write through .data, .detach(), torch.no_grad() or "
                               "NumPy ({case}). Autograd must see every operation the result depends on: {what_to_do}",
                               fn=fn, tensor=watch.unrecorded, case=case, what_to_do=what_to_do))
    return result


def assert_gradients_match(output, reference: torch.Tensor, inputs: dict, fn: str):
    """Gradients flowing back from ``output`` equal those from the out-of-place ``reference``.

    Both are backpropagated with the same random upstream gradient (so every element
    counts, not just their sum) to each tensor in ``inputs`` (name -> tensor).
    """
    _require_tensor(output, lambda: _say("`{fn}` returned {value}", fn=fn, value=_describe(output)))
    _require_tensor(reference, lambda: _say("the reference result"))
    for name, tensor in inputs.items():
        _require_tensor(tensor, lambda: _say("`{name}` after `{fn}`", name=name, fn=fn))
    if _grad_fn(output) is None and not _requires_grad(output):
        raise CheckFailed(_say("The result of `{fn}` is cut off from autograd (requires_grad is False), so no "
                               "gradient can reach {names}. Avoid .detach(), .data and torch.no_grad() here.", fn=fn,
                               names=", ".join(f"`{name}`" for name in inputs)))
    upstream = _randn(_shape(reference), dtype=_dtype(reference), generator=_generator().manual_seed(0))
    tensors = tuple(inputs.values())
    # Each backward pass gets its own copy of the upstream gradient, and the expected
    # gradients are copied before the student's backward runs: a custom backward could
    # write into the gradient it is handed, which can be the very tensor autograd returns.
    expected = [None if grad is None else _clone(grad)
                for grad in _grad(reference, tensors, _clone(upstream), allow_unused=True, retain_graph=True)]
    try:
        actual = _grad(output, tensors, _clone(upstream), allow_unused=True)
    except RuntimeError as failure:
        raise CheckFailed(_say("Backward through the result of `{fn}` failed: {error}\nAn in-place operation "
                               "probably overwrote a tensor that autograd saved for the backward pass (lecture 02); "
                               "compute that step out of place.", fn=fn, error=str(failure).splitlines()[0])) from None
    for name, got, want in zip(inputs, actual, expected):
        if want is None:
            continue
        if got is None:
            raise CheckFailed(_say("After `{fn}`, no gradient reaches `{name}`: the result does not depend on "
                                   "`{name}` in the autograd graph.", fn=fn, name=name))
        mismatch = _mismatch(got, want)
        if mismatch:
            raise CheckFailed(_say("After `{fn}`, the gradient with respect to `{name}` is wrong: {mismatch}", fn=fn,
                                   name=name, mismatch=mismatch))


def _mismatch(actual: torch.Tensor, expected: torch.Tensor) -> str | None:
    """None when ``actual`` is close to ``expected`` (same shapes; torch.testing's default
    tolerances; NaN matches NaN), else which elements differ, in words."""
    if _layout(actual) != _layout(expected) or _device(actual) != _device(expected):
        return _say("it is a {layout} tensor on {device}, expected a {expected_layout} tensor on {expected_device}",
                    layout=_layout(actual), device=_device(actual), expected_layout=_layout(expected),
                    expected_device=_device(expected))
    if _shape(actual) != _shape(expected):
        return _say("shape {shape}, expected {expected}", shape=tuple(_shape(actual)), expected=tuple(_shape(expected)))
    rtol, atol = TOLERANCES.get(_dtype(actual), (0.0, 0.0))
    if _is_floating_point(actual) or _is_complex(actual):
        close = _isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = _eq(actual, expected)
    if _all(close):
        return None
    wrong = _logical_not(close)
    first = tuple(int(_item(index)) for index in _nonzero(wrong)[0]) if _shape(actual) else ()
    got, want = _item(_select(actual, first)), _item(_select(expected, first))
    count, total = int(_item(_count_nonzero(wrong))), _numel(actual)
    if atol or rtol:
        allowed = _say("(allowed: {atol} + {rtol} x |expected|)", atol=format(atol, "g"), rtol=format(rtol, "g"))
    else:
        allowed = _say("(they must be equal)")
    values = {"count": count, "total": total, "index": first, "got": _shown(got), "want": _shown(want),
              "allowed": allowed}
    if count > 1:
        return (_say("{count} of {total} elements differ; the first at index {index} is {got}, expected {want} "
                     "{allowed}", **values) if first else
                _say("{count} of {total} elements differ; the first is {got}, expected {want} {allowed}", **values))
    return (_say("1 of {total} differs: the one at index {index} is {got}, expected {want} {allowed}", **values)
            if first else _say("1 of {total} differs: the one is {got}, expected {want} {allowed}", **values))


def _select(tensor: torch.Tensor, index: tuple[int, ...]) -> torch.Tensor:
    """The element of ``tensor`` at ``index``, as a 0-dim tensor."""
    for position in index:
        tensor = _select_along(tensor, 0, position)
    return tensor


def _shown(value) -> str:
    return f"{value:.7g}" if isinstance(value, float) else str(value)


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shapes and values, NaN where the other has NaN."""
    if _shape(a) != _shape(b):
        return False
    if _equal(a, b):
        return True
    return (_is_floating_point(a) or _is_complex(a)) and bool(_all(_isclose(a, b, rtol=0, atol=0, equal_nan=True)))


def _require_tensor(value, message: Callable[[], str]):
    """``value`` is a plain tensor or parameter: its class is torch's own, not a subclass.
    ``message()`` names it, said only if it is not (a passing check says nothing)."""
    if type(value) in TENSOR_TYPES:
        return
    if isinstance(value, torch.Tensor):
        raise CheckFailed(_say("{message}: it is a {kind}, a subclass of torch.Tensor; return a plain torch.Tensor.",
                               message=message(), kind=type(value).__name__))
    raise CheckFailed(_say("{message} (expected a torch.Tensor).", message=message()))


def _require_kind(tensor, before: Snapshot, fn: str):
    """``tensor`` still has the exact class it had in ``before``, and no attribute of its own
    that it did not have (one named like a method, ``detach``, would answer for it)."""
    if type(tensor) is not before.kind:
        raise CheckFailed(_say("`{fn}` changed the class of `{name}` from {old} to {new}; it must stay a plain "
                               "{old}.", fn=fn, name=before.name, old=before.kind.__name__, new=type(tensor).__name__))
    added = sorted(set(_vars(tensor)) - before.attributes)
    if added:
        raise CheckFailed(_say("`{fn}` set `{name}`: it must not add attributes to a tensor.", fn=fn,
                               name=".".join(map(str, (before.name, added[0])))))


def _instance_state(module: nn.Module) -> dict[str, tuple]:
    """A module's instance attributes: name -> (the object, the items it holds if a dict
    (hooks, parameters) or a set)."""
    def items(value):
        if isinstance(value, dict):
            return tuple(value.items())
        return tuple(sorted(map(repr, value))) if isinstance(value, set) else None
    return {name: (value, items(value)) for name, value in _vars(module).items()}


def _changed_attributes(now: dict[str, tuple], before: dict[str, tuple]) -> str | None:
    """The first attribute set, removed or replaced, or whose items changed (by identity)."""
    added_or_removed = sorted(now.keys() ^ before.keys())
    if added_or_removed:
        return added_or_removed[0]
    for name, (value, items) in sorted(before.items()):
        current, current_items = now[name]
        if type(value) in TENSOR_TYPES and type(current) in TENSOR_TYPES:
            continue  # recomputed by torch itself on every call (old-style weight_norm, pruning)
        if current is not value or not _same_items(items, current_items):
            return name
    return None


def _same_items(items: tuple | None, current: tuple | None) -> bool:
    if items is None or current is None:
        return items is current
    if len(items) != len(current):
        return False
    return all(a == b if isinstance(a, str) else (a[0] == b[0] and a[1] is b[1]) for a, b in zip(items, current))


def _joined(name: str, path: str) -> str:
    """A model's name with one of its paths ("model", "0.weight" -> "model.0.weight")."""
    return f"{name}.{path}" if path else name


def _child(path: str, name: str) -> str:
    """A path inside a model one step further down ("", "0" -> "0"; "0", "weight" -> "0.weight")."""
    return f"{path}.{name}" if path else name


def _describe(value) -> str:
    if type(value) in TENSOR_TYPES:
        return _say("a tensor of shape {shape}", shape=tuple(_shape(value)))
    return "None" if value is None else _say("a {kind}", kind=type(value).__name__)
