"""autograder.memory on patterns whose answer is known: each test would fail for the per-operator
net sums the lectures used before (an allocate-and-free counts as nothing there, and nothing
there is a peak)."""

import pytest
import torch

from autograder.memory import Measurement, measure, megabytes, peak_of

MB = 1_000_000
FLOATS = MB // 4  # float32 elements in one MB
# The CUDA path runs wherever a GPU is (not on CI); the patterns and answers are the same.
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))]


def three_live(device):
    return [torch.ones(FLOATS, device=device) for _ in range(3)]


def allocate_and_free(n, device):
    for _ in range(n):
        torch.ones(FLOATS, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_three_live_tensors_peak_at_three(device):
    measured = measure(three_live, device)
    assert measured.peak_bytes == 3 * MB
    assert measured.allocated_bytes == 3 * MB


@pytest.mark.parametrize("device", DEVICES)
def test_allocate_and_free_in_a_loop_peaks_at_one(device):
    measured = measure(allocate_and_free, 5, device)
    assert measured.peak_bytes == MB
    assert measured.allocated_bytes == 5 * MB


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_on_an_existing_tensor_allocate_almost_nothing(device):
    x = torch.ones(FLOATS, device=device)
    measured = measure(lambda t: t.mul_(2).add_(1).clamp_(0, 10), x)
    assert measured.result is x
    assert measured.allocated_bytes < 1024  # at most a wrapped Python number
    assert measured.peak_bytes < 1024


@pytest.mark.parametrize("device", DEVICES)
def test_an_out_of_place_op_allocates_its_result(device):
    x = torch.ones(FLOATS, device=device)
    measured = measure(torch.add, x, 1)
    assert measured.peak_bytes >= MB and measured.allocated_bytes >= MB
    assert measured.peak_bytes < MB + 1024


@pytest.mark.parametrize("device", DEVICES)
def test_results_that_escape_count_and_stay_alive(device):
    measured = measure(lambda: torch.zeros(FLOATS, device=device))
    assert measured.peak_bytes == MB
    assert measured.result.shape == (FLOATS,)


@pytest.mark.parametrize("device", DEVICES)
def test_temporaries_count_in_the_peak_but_not_the_result(device):
    def temporary_then_small():
        big = torch.ones(2 * FLOATS, device=device)
        return big.sum()

    measured = measure(temporary_then_small)
    assert measured.peak_bytes >= 2 * MB
    assert measured.allocated_bytes >= 2 * MB


@pytest.mark.parametrize("device", DEVICES)
def test_keyword_arguments_reach_the_function(device):
    measured = measure(torch.full, (FLOATS,), fill_value=2.0, device=device)
    assert measured.result[0] == 2.0 and measured.peak_bytes == MB


@pytest.mark.parametrize(("changes", "peak"), [([], 0), ([5, -5, 3], 5), ([-4, 3], 0), ([2, 2, -1, 3], 6)])
def test_peak_is_the_highest_running_total(changes, peak):
    assert peak_of(changes) == peak


def test_measurements_read_in_megabytes():
    assert str(Measurement(None, 3 * MB, 2 * MB)) == "allocated 3.0 MB, peak 2.0 MB"
    assert megabytes(12) == "12 bytes"
