"""How much memory a call needs: every byte it allocated, and the peak above where it started.

The lectures and the assignments measure with this one tool. It exists because the obvious
measurement is wrong: summing the profiler's per-operator ``self_cpu_memory_usage`` adds up
each operator's *net* change (its allocations minus its releases), so an operator that frees
what it allocated counts as nothing; the sum is the net change over the call, which falls
short of the *peak* whenever memory was freed before the end. The peak is what in-place
operations save and what decides an out-of-memory error.

On the CPU we read the profiler's raw allocation stream instead: one event per allocation
(positive bytes) and per release (negative), in time order. The running total of that stream
is the live memory above the level at the start; its maximum is the peak. On CUDA the
caching allocator keeps exact statistics of its own (a peak that can be reset, and a running
count of allocated bytes), which we use; they count blocks rounded up to the allocator's
512-byte granularity.

One limit on the CPU: the profiler does not report releasing memory it never saw allocated
(memory allocated outside any measurement), so a call that frees such older tensors gets
a peak that is an upper bound, never an underestimate. PyTorch also prints a warning line
about each such release to the process's standard error, which Jupyter shows under the
cell: keep older tensors alive while a call is measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

MEMORY_EVENT = "[memory]"  # the profiler's name for an allocation or a release
# How many peaks this process has computed with this tool: assignment 06 asks students to
# write the measurement themselves, and its tests tell from this count whether an answer
# handed the work to the tool instead.
peaks_computed = 0

# Kineto, the profiler's engine, prints a log line each time it starts and stops unless told
# otherwise; it reads this variable when first used, so setting it here (after torch is
# imported) still works. A value the user chose is kept.
os.environ.setdefault("KINETO_LOG_LEVEL", "6")


@dataclass(frozen=True)
class Measurement:
    """What one call needed: ``result`` is what it returned (kept alive, so memory that escapes
    the call counts), ``allocated_bytes`` the sum of every allocation made while it ran,
    ``peak_bytes`` the highest live total above the level at the start."""

    result: Any
    allocated_bytes: int
    peak_bytes: int

    def __str__(self) -> str:
        return f"allocated {megabytes(self.allocated_bytes)}, peak {megabytes(self.peak_bytes)}"


def megabytes(n_bytes: int) -> str:
    """A byte count as people read it: bytes when small, else MB (10**6 bytes), one decimal."""
    return f"{n_bytes} bytes" if abs(n_bytes) < 10_000 else f"{n_bytes / 1e6:.1f} MB"


def measure(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Measurement:
    """Call ``fn(*args, **kwargs)`` and measure its memory where it works: on CUDA when it was
    given CUDA tensors (or a module on CUDA) or allocated CUDA memory, else on the CPU."""
    if not torch.cuda.is_available():
        return _measure_cpu(fn, *args, **kwargs)
    start = _cuda_counters()
    on_cpu = _measure_cpu(fn, *args, **kwargs)
    on_cuda = _cuda_since(start, on_cpu.result)
    given_cuda = any(tensor.is_cuda for tensor in _tensors((args, kwargs)))
    return on_cuda if given_cuda or on_cuda.allocated_bytes else on_cpu


def peak_of(changes: list[int]) -> int:
    """The highest running total of a sequence of allocations (+) and releases (-), starting
    at zero: the peak live memory above the start."""
    global peaks_computed
    peaks_computed += 1
    level = peak = 0
    for change in changes:
        level += change
        peak = max(peak, level)
    return peak


def _measure_cpu(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Measurement:
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn(*args, **kwargs)
    events = [event for event in prof.profiler.kineto_results.events()
              if event.name() == MEMORY_EVENT and event.device_type() == torch.autograd.DeviceType.CPU]
    changes = [event.nbytes() for event in sorted(events, key=lambda event: event.start_ns())]
    return Measurement(result, sum(change for change in changes if change > 0), peak_of(changes))


def _cuda_counters() -> tuple[int, int]:
    """The CUDA allocator's live bytes and its running total of allocated bytes, with its
    peak reset to now."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated(), torch.cuda.memory_stats().get("allocated_bytes.all.allocated", 0)


def _cuda_since(start: tuple[int, int], result: Any) -> Measurement:
    torch.cuda.synchronize()
    live, allocated = start
    allocated_now = torch.cuda.memory_stats().get("allocated_bytes.all.allocated", 0)
    return Measurement(result, allocated_now - allocated, torch.cuda.max_memory_allocated() - live)


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in a call's arguments: in lists, tuples and dicts, and a module's
    parameters and buffers."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, torch.nn.Module):
        yield from value.parameters()
        yield from value.buffers()
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
