"""Unit tests of autograder.checks: each helper accepts the right thing and rejects the
wrong one with a message that names the mistake."""

import os
import subprocess
import sys

import pytest
import torch

from autograder import checks


def test_storage_ptr_is_shared_by_views_with_an_offset():
    x = torch.arange(10.0)
    assert x[3:].data_ptr() != x.data_ptr()
    assert checks.storage_ptr(x[3:]) == checks.storage_ptr(x)
    assert checks.storage_ptr(x.clone()) != checks.storage_ptr(x)


def test_snapshot_keeps_values_even_when_the_tensor_changes_later():
    x = torch.ones(3)
    before = checks.snapshot(x, "x")
    x.add_(1)
    assert torch.equal(before.values, torch.ones(3))
    assert before.version == 0 and x._version == 1


def test_snapshot_rejects_a_non_tensor():
    with pytest.raises(AssertionError, match="expected a torch.Tensor"):
        checks.snapshot([1, 2], "x")


class TestValuesClose:
    def test_accepts_close_values(self):
        checks.assert_values_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]), "f")

    def test_rejects_wrong_values(self):
        with pytest.raises(AssertionError, match="`f`: the result has wrong values"):
            checks.assert_values_close(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]), "f")

    def test_rejects_wrong_dtype(self):
        with pytest.raises(AssertionError, match="dtype torch.float32, expected torch.float64"):
            checks.assert_values_close(torch.ones(2), torch.ones(2, dtype=torch.float64), "f")

    def test_rejects_wrong_shape(self):
        with pytest.raises(AssertionError, match=r"shape \(2,\), expected \(1, 2\)"):
            checks.assert_values_close(torch.ones(2), torch.ones(1, 2), "f")

    def test_rejects_none(self):
        with pytest.raises(AssertionError, match="`f` returned None"):
            checks.assert_values_close(None, torch.ones(2), "f")


class TestNewStorage:
    def test_accepts_a_fresh_tensor(self):
        x = torch.ones(3)
        checks.assert_new_storage(x + 1, checks.snapshot(x, "x"), fn="f")

    def test_rejects_the_input_itself(self):
        x = torch.ones(3)
        with pytest.raises(AssertionError, match="returned its input `x` itself"):
            checks.assert_new_storage(x, checks.snapshot(x, "x"), fn="f")

    def test_rejects_a_view_of_the_input(self):
        x = torch.ones(3)
        with pytest.raises(AssertionError, match="shares storage with `x`"):
            checks.assert_new_storage(x[1:], checks.snapshot(x, "x"), fn="f")

    def test_accepts_a_new_empty_tensor_beside_an_empty_input(self):
        x = torch.ones(0)
        assert checks.storage_ptr(x * 2) == checks.storage_ptr(x)  # both 0: no memory, nothing shared
        checks.assert_new_storage(x * 2, checks.snapshot(x, "x"), fn="f")


class TestUntouched:
    def test_accepts_a_tensor_only_read(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        _ = x * 2
        checks.assert_untouched(x, before, "f")

    def test_rejects_an_in_place_write(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.mul_(1)  # same values, but written: the version counter moves
        with pytest.raises(AssertionError, match=r"modified its input `x` in place .*from 0 to 1"):
            checks.assert_untouched(x, before, "f")

    def test_rejects_a_write_through_data(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.data.add_(1)
        with pytest.raises(AssertionError, match="changed the values of its input `x` without"):
            checks.assert_untouched(x, before, "f")


class TestUpdatedInPlace:
    def test_accepts_an_in_place_method(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        checks.assert_updated_in_place(x.add_(1), before, "f")

    def test_rejects_a_new_tensor(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        with pytest.raises(AssertionError, match="`f` returned a new tensor: `x` must be updated"):
            checks.assert_updated_in_place(x + 1, before, "f")

    def test_rejects_new_memory_behind_the_same_object(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.data = x + 1
        with pytest.raises(AssertionError, match="its data_ptr changed from 0x"):
            checks.assert_updated_in_place(x, before, "f")

    def test_rejects_a_write_autograd_cannot_see(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.data.add_(1)
        with pytest.raises(AssertionError, match=r"`x._version` is still 0 after `f`"):
            checks.assert_updated_in_place(x, before, "f")

    def test_rejects_returning_nothing(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.add_(1)
        with pytest.raises(AssertionError, match="`f` returned None; it must return `x`"):
            checks.assert_updated_in_place(None, before, "f")


class TestNoGraph:
    def test_accepts_an_update_under_no_grad(self):
        target, online = torch.zeros(3), torch.ones(3, requires_grad=True)
        before = checks.snapshot(target, "target")
        with torch.no_grad():
            target.add_(online)
        checks.assert_no_graph(target, before, "f")

    def test_rejects_a_recorded_graph(self):
        target, online = torch.zeros(3), torch.ones(3, requires_grad=True)
        before = checks.snapshot(target, "target")
        target.add_(online)
        with pytest.raises(AssertionError, match="recorded an autograd graph on `target`"):
            checks.assert_no_graph(target, before, "f")

    def test_rejects_a_changed_requires_grad(self):
        target = torch.zeros(3)
        before = checks.snapshot(target, "target")
        target.requires_grad_(True)
        with pytest.raises(AssertionError, match="changed `target.requires_grad` from False"):
            checks.assert_no_graph(target, before, "f")


class TestGradientsMatch:
    def test_accepts_the_same_function_written_differently(self):
        x = torch.randn(4, requires_grad=True)
        checks.assert_gradients_match(torch.add(x, x, alpha=2.0), 3 * x, {"x": x}, "f")

    def test_rejects_a_wrong_gradient(self):
        x = torch.randn(4, requires_grad=True)
        with pytest.raises(AssertionError, match="gradient with respect to `x` is wrong"):
            checks.assert_gradients_match(x * x, 3 * x, {"x": x}, "f")

    def test_rejects_a_detached_result(self):
        x = torch.randn(4, requires_grad=True)
        with pytest.raises(AssertionError, match="cut off from autograd"):
            checks.assert_gradients_match((2 * x).detach(), 2 * x, {"x": x}, "f")

    def test_rejects_a_missing_path_to_one_input(self):
        x = torch.randn(4, requires_grad=True)
        y = torch.randn(4, requires_grad=True)
        with pytest.raises(AssertionError, match="no gradient reaches `y`"):
            checks.assert_gradients_match(x * 2, x * 2 + y, {"x": x, "y": y}, "f")

    def test_explains_a_backward_broken_by_an_in_place_write(self):
        x = torch.randn(4, requires_grad=True)
        with pytest.raises(AssertionError, match="Backward through the result of `f` failed"):
            checks.assert_gradients_match(torch.sigmoid(x).mul_(2), 2 * torch.sigmoid(x), {"x": x}, "f")


class TestForgeries:
    """Objects built to pass naive comparisons: the checks see through them."""

    def test_a_tensor_subclass_that_agrees_with_everything(self):
        from tests.answers.add_scaled import wrong_agreeable_subclass

        x, y = torch.ones(3), torch.ones(3)
        forged = wrong_agreeable_subclass(x, y, 2.0)
        truth = x + 2.0 * y
        assert torch.equal(forged, truth) and isinstance(forged, torch.Tensor)  # fools a naive test
        with pytest.raises(AssertionError, match="a subclass of torch.Tensor; return a plain torch.Tensor"):
            checks.assert_values_close(forged, truth, "f")

    def test_an_input_whose_class_was_swapped(self):
        x = torch.ones(3)
        before = checks.snapshot(x, "x")
        x.__class__ = type("Agreeable", (torch.Tensor,), {})
        with pytest.raises(AssertionError, match="changed the class of `x` from Tensor to Agreeable"):
            checks.assert_untouched(x, before, "f")

    def test_an_object_posing_as_a_bool(self):
        from tests.answers.shares_storage import wrong_poses_as_a_bool

        fake = wrong_poses_as_a_bool(None, None)
        assert isinstance(fake, bool) and fake == True and fake == False  # noqa: E712 (the forgery's point)
        with pytest.raises(AssertionError, match="returned a Agreeable; `f` must return True or False"):
            checks.assert_answer(fake, True, "f", "f(a, b)")
        checks.assert_answer(True, True, "f", "f(a, b)")
        with pytest.raises(AssertionError, match="returned False, expected True"):
            checks.assert_answer(False, True, "f", "f(a, b)")

    def test_a_model_whose_layer_was_replaced_or_reclassed(self):
        model = torch.nn.Sequential(torch.nn.Linear(2, 2))
        before = checks.snapshot_module(model, "model")
        model[0].weight = torch.nn.Parameter(torch.zeros(2, 2))
        with pytest.raises(AssertionError, match="replaced `model.0.weight` with a new tensor"):
            checks.assert_module_kept(model, before, "f")
        model = torch.nn.Sequential(torch.nn.Linear(2, 2))
        before = checks.snapshot_module(model, "model")
        model[0].__class__ = type("Fake", (torch.nn.Linear,), {})
        with pytest.raises(AssertionError, match="replaced or changed the submodule `model.0`"):
            checks.assert_module_kept(model, before, "f")
        layer = torch.nn.Linear(2, 2)
        assert set(checks.assert_module_kept(layer, checks.snapshot_module(layer, "layer"), "f")) == {"weight", "bias"}

    def test_an_attribute_that_answers_for_a_method(self):
        block = torch.nn.Linear(2, 2)
        before = checks.snapshot_module(block, "block")
        block.forward = lambda x: x * 0
        with pytest.raises(AssertionError, match="set or changed `block.forward`"):
            checks.assert_module_kept(block, before, "f")
        x = torch.ones(2)
        x_before = checks.snapshot(x, "x")
        x.detach = lambda: torch.zeros(2)
        with pytest.raises(AssertionError, match="set `x.detach`"):
            checks.assert_untouched(x, x_before, "f")

    def test_a_class_patched_while_the_function_ran(self):
        class Block(torch.nn.Module):
            def forward(self, x):
                return x

        block = torch.nn.Sequential(Block())
        before = checks.snapshot_module(block, "block")
        Block.forward = lambda self, x: x * 0
        with pytest.raises(AssertionError, match="changed `Block.forward`, which every such layer uses"):
            checks.assert_module_kept(block, before, "f")

    def test_a_model_read_through_its_own_dictionaries(self):
        """A subclass whose named_modules or state_dict hides layers hides nothing."""
        class Hiding(torch.nn.Sequential):
            def named_modules(self, *args, **kwargs):
                return iter(())

            def state_dict(self, *args, **kwargs):
                return {}

        model = Hiding(torch.nn.Linear(2, 2), torch.nn.ReLU())
        before = checks.snapshot_module(model, "model")
        assert set(before.tensors) == {"0.weight", "0.bias"} and set(before.classes) == {"", "0", "1"}

    def test_a_hook_registered_on_a_model(self):
        block = torch.nn.Linear(2, 2)
        before = checks.snapshot_module(block, "block")
        block.register_forward_hook(lambda module, args, output: output * 0)
        with pytest.raises(AssertionError, match="set or changed `block._forward_hooks`"):
            checks.assert_module_kept(block, before, "f")


class TestComparison:
    """Values are compared through torch's functions captured at import, with
    torch.testing's tolerances, and a mismatch says where and by how much."""

    def test_a_near_miss_names_the_element_and_the_tolerance(self):
        with pytest.raises(AssertionError, match=r"1 of 3 differs: the one at index \(1,\) is 2.5, expected 2 "
                                                 r"\(allowed: 1e-05 \+ 1.3e-06 x \|expected\|\)"):
            checks.assert_values_close(torch.tensor([1.0, 2.5, 3.0]), torch.tensor([1.0, 2.0, 3.0]), "f")
        checks.assert_values_close(torch.tensor([1.0 + 5e-6]), torch.tensor([1.0]), "f")  # within tolerance

    def test_integers_must_be_equal_and_nan_matches_nan(self):
        with pytest.raises(AssertionError, match=r"2 of 4 elements differ; the first at index \(0, 1\) is 3"):
            checks.assert_values_close(torch.tensor([[1, 3], [3, 5]]), torch.tensor([[1, 2], [3, 4]]), "f")
        nan = torch.tensor([float("nan"), 1.0])
        checks.assert_values_close(nan, nan.clone(), "f")
        z = torch.tensor([complex(float("nan"), 0)])
        checks.assert_untouched(z, checks.snapshot(z, "z"), "f")

    def test_another_layout_is_named_not_crashed_on(self):
        with pytest.raises(AssertionError, match="it is a torch.sparse_coo tensor on cpu, expected a torch.strided"):
            checks.assert_values_close(torch.eye(2).to_sparse(), torch.eye(2), "f")


@pytest.mark.slow  # starts an IPython shell in a process of its own: seconds
def test_a_failing_check_shows_the_callers_line_and_the_message_not_our_frames(tmp_path):
    """In IPython (a notebook's kernel), a failing check's traceback is the test cell's line
    and the message: none of this module's frames, whose source students should not wade
    through. (A shell of its own, in a process of its own: IPython changes the interpreter.)"""
    cell = ("import torch\nfrom autograder import checks\n"
            "x = torch.ones(3); before = checks.snapshot(x, 'x'); x.add_(1)\n"
            "checks.assert_untouched(x, before, 'f')")
    script = ("from IPython.core.interactiveshell import InteractiveShell\n"
              f"InteractiveShell.instance(colors='nocolor', history_length=0).run_cell({cell!r})")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, "IPYTHONDIR": str(tmp_path)}).stdout
    assert "checks.assert_untouched(x, before, 'f')" in shown
    assert "CheckFailed: `f` modified its input `x` in place" in shown
    assert "checks.py" not in shown and "raise CheckFailed" not in shown
    assert len(shown.splitlines()) < 12


def _no_grad_block():
    with torch.no_grad():
        torch.ones(2).mul_(2)


def _sets_default_dtype():
    torch.set_default_dtype(torch.float64)


@pytest.mark.parametrize("mode", [torch.no_grad, torch.enable_grad])
def test_a_with_block_leaves_grad_mode_as_the_caller_had_it(mode):
    with mode():
        before = checks.calling_context()
        _no_grad_block()
        checks.assert_context_kept(before, "f")


@pytest.mark.parametrize(("mode", "switch_to"), [(torch.enable_grad, False), (torch.no_grad, True)])
def test_a_function_that_switches_grad_mode_for_its_caller_is_rejected(mode, switch_to):
    with mode():
        before = checks.calling_context()
        torch.set_grad_enabled(switch_to)
        with pytest.raises(checks.CheckFailed, match=f"changed grad mode .* from {not switch_to} to {switch_to}"):
            checks.assert_context_kept(before, "f")


def test_a_function_must_leave_the_default_dtype():
    before = checks.calling_context()
    try:
        _sets_default_dtype()
        with pytest.raises(checks.CheckFailed, match="changed the default dtype"):
            checks.assert_context_kept(before, "f")
    finally:
        torch.set_default_dtype(torch.float32)


def _fresh_layer():
    return torch.empty(4, 3)


def test_a_random_initializer_draws_from_the_stream_as_it_is():
    checks.assert_random_stream_kept(lambda: _fresh_layer().uniform_(-1, 1), "f")


def test_a_random_initializer_that_reseeds_is_rejected():
    def reseeds():
        torch.manual_seed(0)
        return _fresh_layer().uniform_(-1, 1)

    with pytest.raises(checks.CheckFailed, match="reseeds the global random generator"):
        checks.assert_random_stream_kept(reseeds, "f")


def test_a_random_initializer_that_puts_the_stream_back_is_rejected():
    def forks():
        with torch.random.fork_rng():
            return _fresh_layer().uniform_(-1, 1)

    with pytest.raises(checks.CheckFailed, match="puts the global random generator back"):
        checks.assert_random_stream_kept(forks, "f")


def test_an_allocation_limit_accepts_in_place_work_and_rejects_a_temporary():
    target, source = torch.zeros(250_000), torch.ones(250_000)
    checks.assert_allocates_at_most(lambda: target.lerp_(source, 0.1), 1024, "f", "an in-place update")
    with pytest.raises(checks.CheckFailed, match=r"needed 1.0 MB of new memory at its peak; an in-place update"):
        checks.assert_allocates_at_most(lambda: target.mul_(0.9).add_(0.1 * source), 1024, "f", "an in-place update")


def _scaled_sum(x, write):
    """sum(2 * x / 4), the division done by ``write`` on the product autograd made."""
    product = x * 2
    write(product)
    return product.sum()


def _divide(product):
    product.div_(4)


def _divide_two_views(product):
    product[:, 1:].div_(4)
    product[:, :1].div_(4)


def _through_data(product):
    product.data.div_(4)


def _through_detach(product):
    product.detach().div_(4)


def _under_no_grad(product):
    with torch.no_grad():
        product.div_(4)


def _through_numpy(product):
    array = product.detach().numpy()
    array /= 4


@pytest.mark.parametrize("write", [_divide, _divide_two_views])
def test_a_write_autograd_records_passes_the_graph_check(write):
    x = torch.ones(3, 2, requires_grad=True)
    total = checks.assert_autograd_records_every_write(lambda: _scaled_sum(x, write), "f", "a case", "record it.")
    assert total.item() == 3.0


@pytest.mark.parametrize("write", [_through_data, _through_detach, _under_no_grad, _through_numpy])
def test_a_write_around_autograd_fails_the_graph_check_though_the_value_is_right(write):
    x = torch.ones(3, 2, requires_grad=True)
    with pytest.raises(checks.CheckFailed, match=r"`f` changed a tensor of shape \(3, 2\) made by MulBackward0 after "
                                                 r"autograd recorded it.*\(a case\)\. .*record it\.$"):
        checks.assert_autograd_records_every_write(lambda: _scaled_sum(x, write), "f", "a case", "record it.")
