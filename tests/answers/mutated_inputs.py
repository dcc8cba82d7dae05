"""Answers to `mutated_inputs(fn, *tensors)`: the positions of the inputs whose version counter fn moved."""

import torch


def right_versions_before_and_after(fn, *tensors):
    """Record every version counter, call, compare."""
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


def right_tuple_of_versions(fn, *tensors):
    """The same with two tuples and a loop."""
    before = tuple(tensor._version for tensor in tensors)
    fn(*tensors)
    after = tuple(tensor._version for tensor in tensors)
    written = []
    for index in range(len(tensors)):
        if after[index] > before[index]:
            written.append(index)
    return tuple(written)


def right_dict_by_position(fn, *tensors):
    """A dict from position to version; sorted positions."""
    versions = {index: tensor._version for index, tensor in enumerate(tensors)}
    fn(*tensors)
    return tuple(sorted(index for index, version in versions.items() if tensors[index]._version != version))


def wrong_compares_values(fn, *tensors):
    """Copies every input and compares values: misses writes that keep the values (relu_ on
    non-negative numbers, mul_(1)), reports writes through .data, and copies every input."""
    copies = [tensor.detach().clone() for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, copy) in enumerate(zip(tensors, copies))
                 if not torch.equal(tensor.detach(), copy))


def wrong_compares_data_ptr(fn, *tensors):
    """An in-place write keeps data_ptr(): comparing addresses finds nothing."""
    pointers = [tensor.data_ptr() for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, pointer) in enumerate(zip(tensors, pointers))
                 if tensor.data_ptr() != pointer)


def wrong_returned_input_is_written(fn, *tensors):
    """'An in-place method returns its input': misses functions that return something else
    (None, a view, a tuple) and writes through views."""
    result = fn(*tensors)
    return tuple(index for index, tensor in enumerate(tensors) if result is tensor)


def wrong_calls_fn_on_clones(fn, *tensors):
    """Calls fn on copies to keep the inputs safe: the caller's tensors are never written,
    a view passed with its base no longer shares its counter, and every input is copied."""
    clones = [tensor.detach().clone() for tensor in tensors]
    versions = [clone._version for clone in clones]
    fn(*clones)
    return tuple(index for index, (clone, version) in enumerate(zip(clones, versions)) if clone._version != version)


def wrong_calls_under_no_grad(fn, *tensors):
    """Runs fn under torch.no_grad() 'so that nothing is recorded': fn runs in a grad mode
    its caller did not choose."""
    versions = [tensor._version for tensor in tensors]
    with torch.no_grad():
        fn(*tensors)
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


def wrong_lazy_versions(fn, *tensors):
    """A generator reads the version counters only when it is consumed: after the call."""
    versions = (tensor._version for tensor in tensors)
    fn(*tensors)
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


def wrong_returns_flags(fn, *tensors):
    """One True/False per input instead of the positions."""
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    return tuple(tensor._version != version for tensor, version in zip(tensors, versions))


def wrong_returns_a_list(fn, *tensors):
    """The right positions, in a list instead of a tuple."""
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    return [index for index, (tensor, version) in enumerate(zip(tensors, versions)) if tensor._version != version]


def wrong_only_tensors_that_require_grad(fn, *tensors):
    """Looks for a new grad_fn: only tensors in a graph get one, and a write under no_grad
    or into a tensor that does not require grad leaves none."""
    nodes = [tensor.grad_fn for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, node) in enumerate(zip(tensors, nodes)) if tensor.grad_fn is not node)


def wrong_deduplicates_by_storage(fn, *tensors):
    """Reports each storage once, at its first position: a view passed beside its base, or a
    tensor passed twice, is reported once."""
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    seen, written = set(), []
    for index, (tensor, version) in enumerate(zip(tensors, versions)):
        storage = tensor.untyped_storage().data_ptr()
        if tensor._version != version and storage not in seen:
            written.append(index)
        seen.add(storage)
    return tuple(written)


def wrong_turns_grad_off_for_good(fn, *tensors):
    """Switches grad mode off so that fn may write into a leaf that requires grad, and leaves it off for the caller."""
    torch.set_grad_enabled(False)
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


def wrong_dry_run_first(fn, *tensors):
    """Calls fn once "to see that it runs" before reading the versions: fn runs twice and writes the inputs twice."""
    fn(*tensors)
    versions = [tensor._version for tensor in tensors]
    fn(*tensors)
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


def wrong_backs_up_the_inputs(fn, *tensors):
    """Keeps a copy of every input to put back if fn raises: the right positions, but it copies every input."""
    backups = [tensor.detach().clone() for tensor in tensors]
    versions = [tensor._version for tensor in tensors]
    try:
        fn(*tensors)
    except Exception:
        with torch.no_grad():
            for tensor, backup in zip(tensors, backups):
                tensor.copy_(backup)
        raise
    return tuple(index for index, (tensor, version) in enumerate(zip(tensors, versions))
                 if tensor._version != version)


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_backs_up_the_inputs": "`mutated_inputs` needed 8.0 MB of new memory for two inputs of 4.0 MB: it",
    "wrong_calls_fn_on_clones": "`mutated_inputs` called `fn` on other tensors than it was given",
    "wrong_calls_under_no_grad": "`mutated_inputs` ran `fn` with grad mode off, but its caller had it on",
    "wrong_compares_data_ptr": "`mutated_inputs` returned () for y.mul_(2), under torch.enable_grad()",
    "wrong_compares_values": "`mutated_inputs` returned () for relu_ of a non-negative tensor (values",
    "wrong_deduplicates_by_storage": "`mutated_inputs` returned (0,) for a write into the second input, a view",
    "wrong_dry_run_first": "`mutated_inputs` called `fn` 2 times for y.mul_(2), under",
    "wrong_lazy_versions": "`mutated_inputs` returned () for y.mul_(2), under torch.enable_grad()",
    "wrong_only_tensors_that_require_grad": "`mutated_inputs` returned () for y.mul_(2), under torch.enable_grad()",
    "wrong_returned_input_is_written": "`mutated_inputs` returned () for writes into the first and the last, under",
    "wrong_returns_a_list": "`mutated_inputs` returned [1] for y.mul_(2), under torch.enable_grad(); it",
    "wrong_returns_flags": "`mutated_inputs` returned (False, True, False) for y.mul_(2), under",
    "wrong_turns_grad_off_for_good": "`mutated_inputs` changed grad mode (torch.is_grad_enabled()) from True to",
}
