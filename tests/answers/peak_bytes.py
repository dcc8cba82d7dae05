"""Answers to `peak_bytes(fn, *args)`: the peak of the profiler's raw allocation stream."""

import itertools

import torch
from torch.profiler import ProfilerActivity, profile


def _memory_changes(prof):
    """(start, bytes) of every CPU allocation (+) and release (-) the profile recorded."""
    return sorted((event.start_ns(), event.nbytes()) for event in prof.profiler.kineto_results.events()
                  if event.name() == "[memory]" and event.device_type() == torch.autograd.DeviceType.CPU)


def _peak(prof):
    """The highest running total of the profile's allocation stream, in time order (0 at the start)."""
    level = peak = 0
    for _, change in _memory_changes(prof):
        level += change
        peak = max(peak, level)
    return peak


def right_running_total(fn, *args):
    """The running total of the events in time order, and its maximum."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn(*args)
    del result
    return _peak(prof)


def right_accumulate(fn, *args):
    """itertools.accumulate gives the running totals; the start (0) counts too."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    events = [event for event in prof.profiler.kineto_results.events() if event.name() == "[memory]"]
    events.sort(key=lambda event: event.start_ns())
    return max(itertools.accumulate((event.nbytes() for event in events), initial=0))


def right_legacy_autograd_profiler(fn, *args):
    """torch.autograd.profiler.profile, the older name of the same profiler, holds the same stream."""
    with torch.autograd.profiler.profile(profile_memory=True) as prof:
        fn(*args)
    changes = sorted((event.start_ns(), event.nbytes()) for event in prof.kineto_results.events()
                     if event.name() == "[memory]")
    totals = list(itertools.accumulate(change for _, change in changes))
    return max([0, *totals])


def wrong_sum_of_self_cpu_memory(fn, *args):
    """The per-operator table's figures are net (what each operator allocated minus what it
    freed): their sum misses everything freed before the end, and no sum of them is a peak."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return max(0, sum(event.self_cpu_memory_usage for event in prof.key_averages()))


def wrong_total_allocated(fn, *args):
    """Adds up every allocation: that is the traffic (allocated bytes), not the peak."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return sum(change for _, change in _memory_changes(prof) if change > 0)


def wrong_largest_allocation(fn, *args):
    """The largest single allocation misses tensors that are alive at the same time."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return max([0, *(change for _, change in _memory_changes(prof))])


def wrong_net_change(fn, *args):
    """What is still live at the end: the memory the result holds, not the peak on the way."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn(*args)
    del result
    return max(0, sum(change for _, change in _memory_changes(prof)))


def wrong_without_profile_memory(fn, *args):
    """Without profile_memory=True the profiler records no '[memory]' event: always 0."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn(*args)
    return _peak(prof)


def wrong_measures_under_no_grad(fn, *args):
    """Measuring 'without autograd's overhead' measures another computation: under no_grad
    the graph saves nothing, and fn runs in a grad mode its caller did not choose."""
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return _peak(prof)


def wrong_warm_up_call_first(fn, *args):
    """A warm-up call before measuring runs fn twice: its side effects happen twice."""
    fn(*args)
    return right_running_total(fn, *args)


def wrong_returns_megabytes(fn, *args):
    """The peak in megabytes, a float, where bytes (an int) are asked for."""
    return right_running_total(fn, *args) / 1e6


def wrong_per_operator_running_total(fn, *args):
    """A running total of the operators' net figures, in time order: closer, but an operator's
    temporaries (allocated and freed inside it) never show."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    events = sorted(prof.events(), key=lambda event: event.time_range.start)
    top_level = [event for event in events if event.cpu_parent is None]
    totals = itertools.accumulate(event.cpu_memory_usage for event in top_level)
    return max([0, *totals])


def wrong_turns_grad_on_for_good(fn, *args):
    """Switches grad mode on "so that the graph's saved tensors count", and leaves it on for a caller under no_grad."""
    torch.set_grad_enabled(True)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return _peak(prof)


def wrong_delegates_to_the_graders_tool(fn, *args):
    """Hands the work to autograder.memory, which the lectures use: the right figure, but
    the task is to write the measurement."""
    from autograder.memory import measure

    return measure(fn, *args).peak_bytes


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_delegates_to_the_graders_tool": "`peak_bytes` measured",
    "wrong_largest_allocation": "`peak_bytes` returned 500000 bytes (0.5 MB) for four tensors of 0.5 MB",
    "wrong_measures_under_no_grad": "`peak_bytes` ran `fn` with grad mode off, but its caller had it on (a loop",
    "wrong_net_change": "`peak_bytes` returned 0 bytes (0 bytes) for a loop that allocates 1 MB and",
    "wrong_per_operator_running_total": "`peak_bytes` returned 748848 bytes (0.7 MB) for indexing with a boolean",
    "wrong_returns_megabytes": "`peak_bytes` returned a float for a loop that allocates 1 MB and frees it",
    "wrong_sum_of_self_cpu_memory": "`peak_bytes` returned 0 bytes (0 bytes) for a loop that allocates 1 MB and",
    "wrong_total_allocated": "`peak_bytes` returned 6000000 bytes (6.0 MB) for a loop that allocates 1",
    "wrong_turns_grad_on_for_good": "`peak_bytes` changed grad mode (torch.is_grad_enabled()) from False to",
    "wrong_warm_up_call_first": "`peak_bytes` called `fn` 2 times for a loop that allocates 1 MB and frees",
    "wrong_without_profile_memory": "`peak_bytes` returned 0 bytes (0 bytes) for a loop that allocates 1 MB and",
}
