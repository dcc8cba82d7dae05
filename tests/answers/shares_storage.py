"""Answers to `shares_storage(a, b)`: are a and b backed by one and the same storage?

The specification answers lecture 1's first question only: the same storage object
(`torch.UntypedStorage`), not overlapping bytes, not a write visible through the other. Two
tensors created empty share nothing (both storages start at 0); two `torch.from_numpy` calls
make two storages, even over the same array; the answer is symmetric.
"""

import torch


def right_storage_objects(a, b):
    """One storage has one Python object (PyTorch keeps it while the storage lives), so
    identity compares the storages themselves."""
    return a.untyped_storage() is b.untyped_storage()


def right_storage_handles(a, b):
    """Compare the handles of the C++ storage objects behind the two tensors."""
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


def right_storage_equality(a, b):
    """`==` on storages: UntypedStorage defines no equality of its own, so this is identity."""
    return a.untyped_storage() == b.untyped_storage()


def right_typed_storage_objects(a, b):
    """The deprecated TypedStorage API: warns, but its untyped() storage is the tensor's own."""
    return a.storage().untyped() is b.storage().untyped()


def wrong_storage_pointers(a, b):
    """Compares where each storage starts: right for every tensor with memory, but every
    tensor created empty has storage start 0, so two unrelated empty tensors 'share'."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def wrong_typed_storage_pointers(a, b):
    """The deprecated TypedStorage API, comparing storage starts: two unrelated empty tensors
    both start at 0."""
    return a.storage().data_ptr() == b.storage().data_ptr()


def wrong_nonzero_storage_pointers(a, b):
    """Compares storage starts and calls an empty storage (start 0) shared with nothing: but
    an empty tensor and its own view are one storage."""
    start = a.untyped_storage().data_ptr()
    return start != 0 and start == b.untyped_storage().data_ptr()


def wrong_same_storage_start(a, b):
    """Compares storage starts and handles empty storages by identity: two storages made by
    torch.from_numpy(arr) twice start at the same address but are two storages."""
    first, second = a.untyped_storage(), b.untyped_storage()
    return first is second or (first.data_ptr() != 0 and first.data_ptr() == second.data_ptr())


def wrong_first_element_in_other_storage(a, b):
    """Asks whether a's first element lies inside b's storage: not symmetric. An empty view
    just past the end of x starts outside x's bytes, and from_numpy of a slice starts inside
    the whole array's storage but not the other way round."""
    storage = b.untyped_storage()
    return storage.data_ptr() <= a.data_ptr() < storage.data_ptr() + storage.nbytes()


def wrong_writes_through_one_and_looks(a, b):
    """Lecture 1's third question instead of the first: write through a (behind autograd's
    back, then undo), see whether b changed. Interleaved views of one storage see no write."""
    before = b.detach().clone()
    a.data.add_(1)
    changed = not torch.equal(b.detach(), before)
    a.data.sub_(1)
    return changed


def wrong_turns_grad_off_then_on(a, b):
    """Switches grad mode off 'since a query needs no graph', then on again instead of back to
    what it was: a caller under torch.no_grad() finds grad mode on afterwards."""
    torch.set_grad_enabled(False)
    answer = a.untyped_storage() is b.untyped_storage()
    torch.set_grad_enabled(True)
    return answer


def wrong_data_ptr(a, b):
    """Compares the first element's address: a slice with an offset starts elsewhere."""
    return a.data_ptr() == b.data_ptr()


def wrong_identity(a, b):
    """Compares Python objects: every view is a new object."""
    return id(a) == id(b)


def wrong_equal_values(a, b):
    """Compares values: a clone has equal values in other memory."""
    return a.shape == b.shape and torch.equal(a, b)


def wrong_base_attribute(a, b):
    """Follows `._base`: detach() and contiguous() share memory without a _base link."""
    return a is b._base or b is a._base or (a._base is not None and a._base is b._base)


def wrong_overlapping_bytes(a, b):
    """Checks whether the byte ranges overlap: disjoint slices of one storage do not."""
    a_start, b_start = a.data_ptr(), b.data_ptr()
    a_end = a_start + a.numel() * a.element_size()
    b_end = b_start + b.numel() * b.element_size()
    return a_start < b_end and b_start < a_end


def wrong_poses_as_a_bool(a, b):
    """A forgery: an object that claims to be a bool and equal to anything."""
    class Agreeable:
        __class__ = property(lambda self: bool)

        def __eq__(self, other):
            return True

        __hash__ = object.__hash__
    return Agreeable()


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_base_attribute": "`shares_storage(x and x.detach())` returned False, expected True.",
    "wrong_data_ptr": "`shares_storage(x and x[1:] (a view that starts at an offset))` returned",
    "wrong_equal_values": "`shares_storage(x and x[1:] (a view that starts at an offset))` returned",
    "wrong_first_element_in_other_storage": "`shares_storage` is not symmetric for x and x[4:] (an empty view just",
    "wrong_identity": "`shares_storage(x and x[1:] (a view that starts at an offset))` returned",
    "wrong_nonzero_storage_pointers": "`shares_storage(an empty tensor and itself)` returned False, expected True.",
    "wrong_overlapping_bytes": "`shares_storage(x[:2] and x[2:] (two views that do not overlap))` returned",
    "wrong_poses_as_a_bool": "`shares_storage(x and x[1:] (a view that starts at an offset))` returned a",
    "wrong_same_storage_start": "`shares_storage(torch.from_numpy(arr) and torch.from_numpy(arr) again (two",
    "wrong_storage_pointers": "`shares_storage(two tensors created empty (torch.empty(0) twice: both",
    "wrong_turns_grad_off_then_on": "`shares_storage` changed grad mode (torch.is_grad_enabled()) from False to",
    "wrong_typed_storage_pointers": "`shares_storage(two tensors created empty (torch.empty(0) twice: both",
    "wrong_writes_through_one_and_looks": "`shares_storage(x[:2] and x[2:] (two views that do not overlap))` returned",
}
