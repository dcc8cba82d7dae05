"""Answers to `shares_storage(a, b)`: are a and b backed by the same storage?"""

import torch


def right_storage_pointers(a, b):
    """Compare where each tensor's storage starts, whatever the view's offset."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def right_storage_objects(a, b):
    """On the pinned torch, one storage has one Python object, so identity works."""
    return a.untyped_storage() is b.untyped_storage()


def right_typed_storage(a, b):
    """The deprecated TypedStorage API: warns, but answers correctly."""
    return a.storage().data_ptr() == b.storage().data_ptr()


def right_storage_handles(a, b):
    """Compare the handles of the C++ storage objects behind the two tensors."""
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


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
