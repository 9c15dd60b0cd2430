"""gradcheck / gradgradcheck: pass on correct gradient rules, fail (with torch's messages) on
wrong ones. Small float64 tensors only."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import gradcheck, gradgradcheck
from jtorch.autograd.gradcheck import GradcheckError
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError


def _pair(a: np.ndarray, requires_grad: bool = True):
    """The same float64 values as a jtorch and a torch tensor."""
    return (jtorch.from_numpy(a.copy()).requires_grad_(requires_grad),
            torch.from_numpy(a.copy()).requires_grad_(requires_grad))


def _x(shape=(3,), seed=0, requires_grad=True):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return jtorch.from_numpy(a).requires_grad_(requires_grad)


# -- correct ops pass ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: x.exp(),
    lambda x: x * x,
    lambda x: x.sum(),
    lambda x: x.pow(3),
    lambda x: x ** 2.5,
    lambda x: jtorch.where(x > 1.0, x * x, x.exp()),
    lambda x: (x.exp() * x).mean(),
    lambda x: x.view(3, 1).expand(3, 2).permute(1, 0),
], ids=["exp", "mul", "sum", "pow", "pow_scalar", "where", "mean", "views"])
def test_passes_on_correct_ops(fn):
    assert gradcheck(fn, (_x(),))


def test_tensor_input_and_0d():
    assert gradcheck(jtorch.exp, _x())
    assert gradcheck(lambda t: t * t, _x(()))


def test_multiple_inputs_and_outputs():
    x, y = _x((2, 2), 0), _x((2,), 1)
    assert gradcheck(lambda a, b: (a * b, (a.exp() + b).sum(), b.sin()), (x, y))


def test_non_tensor_inputs_and_input_without_grad():
    x, c = _x(), _x(seed=1, requires_grad=False)
    assert gradcheck(lambda a, k, b, name: a * k + b * a, (x, 2.5, c, "scale"))


def test_non_contiguous_input_and_input_left_unchanged():
    x = _x((2, 3)).detach().t().requires_grad_()
    before = x.detach().clone().numpy()
    version = x._version
    assert gradcheck(lambda t: t.exp() * t, (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == version


def test_output_not_requiring_grad_is_fine_when_constant():
    x = _x()
    assert gradcheck(lambda t: (t * 2, jtorch.ones(2, dtype=jtorch.float64)), (x,))
    assert gradcheck(lambda t: (t * 2, jtorch.tensor([1, 2]), 3), (x,))


def test_empty_and_list_inputs():
    e = jtorch.zeros(0, dtype=jtorch.float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a * 2, b * 3), [_x(), e])


def test_no_differentiable_outputs_must_have_zero_numerical_jacobian():
    x = _x()
    assert gradcheck(lambda t: jtorch.zeros(2, dtype=jtorch.float64), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))


def test_batched_grad():
    x, y = _x((2,), 0), _x((2,), 1)
    assert gradcheck(lambda a, b: (a * b.exp(), a.sum()), (x, y), check_batched_grad=True)


def test_fast_mode_runs_the_full_check():
    assert gradcheck(lambda t: t.exp(), (_x(),), fast_mode=True)
    assert not gradcheck(_WrongExp.apply, (_x(),), fast_mode=True, raise_exception=False)


# -- wrong rules fail ------------------------------------------------------------------------

def _function(forward, backward, module=jtorch):
    base = module.autograd.Function
    return type("Custom", (base,), {"forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


def _save_x(ctx, x):
    ctx.save_for_backward(x)
    return x.exp()


def _wrong_exp_backward(ctx, g):
    (x,) = ctx.saved_tensors
    return g * x.exp() * 1.5


_WrongExp = _function(_save_x, _wrong_exp_backward)
_TorchWrongExp = _function(_save_x, _wrong_exp_backward, torch)


def test_wrong_function_fails_with_torchs_message():
    a = np.array([0.2, -0.4, 1.1])
    jx, tx = _pair(a)
    with pytest.raises(GradcheckError) as jerr:
        gradcheck(_WrongExp.apply, (jx,))
    with pytest.raises(TorchGradcheckError) as terr:
        torch.autograd.gradcheck(_TorchWrongExp.apply, (tx,))
    assert str(jerr.value).startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                                      "numerical:")
    assert str(jerr.value) == str(terr.value)
    assert isinstance(jerr.value, RuntimeError)
    assert jtorch.autograd.gradcheck.GradcheckError is GradcheckError


def test_wrong_function_returns_false_without_raising():
    assert gradcheck(_WrongExp.apply, (_x(),), raise_exception=False) is False


def test_mismatch_names_the_input_index_among_differentiable_inputs():
    x, y = _x(seed=0), _x(seed=1)
    with pytest.raises(GradcheckError, match="for output 1 with respect to input 1,"):
        gradcheck(lambda a, k, b: (a * 2, _WrongExp.apply(b) + a), (x, 3, y))


def test_backward_ignoring_grad_output():
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return jtorch.ones_like(x)

    fn = _function(lambda ctx, x: (ctx.save_for_backward(x), x.sum())[1], backward)
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(fn.apply, (_x(),))


def test_undefined_grad_support():
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    def backward(ctx, g1, g2):  # fails only on one undefined grad next to a zero one
        if (g1 is None and not g2.any()) or (g2 is None and not g1.any()):
            raise RuntimeError("undefined gradient")
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)

    fn = _function(forward, backward)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GradcheckError, match="Expected backward function to handle undefined"):
            gradcheck(fn.apply, (_x(),))
        assert gradcheck(fn.apply, (_x(),), check_undefined_grad=False)


def test_nondeterministic_backward():
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.exp() + jtorch.rand(x.shape, dtype=x.dtype) * 1e-9)

    fn = _function(_save_x, backward)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(fn.apply, (_x(),))
    assert gradcheck(fn.apply, (_x(),), nondet_tol=1e-6)


# -- argument checks -------------------------------------------------------------------------

def test_warns_on_single_precision_input():
    x = jtorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision floating point or complex"):
        gradcheck(lambda t: t * t, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_no_input_requires_grad():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require"):
        gradcheck(lambda t: t * 2, (_x(requires_grad=False),))


def test_stride_zero_input():
    x = jtorch.tensor([1.0], dtype=jtorch.float64).expand(3).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda t: t * 2, (x,))


def test_forward_ad_options_are_not_implemented():
    x = _x()
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        gradcheck(jtorch.exp, (x,), check_forward_ad=True)
    with pytest.raises(AssertionError, match="check_batched_forward_grad=True requires"):
        gradcheck(jtorch.exp, (x,), check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        gradgradcheck(jtorch.exp, (x,), check_fwd_over_rev=True)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gradcheck(jtorch.exp, (x,), check_backward_ad=False)


# -- gradgradcheck ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: x.exp() * x,
    lambda x: x.pow(3),
    lambda x: (x * x).sum(),
], ids=["exp_mul", "pow", "sum"])
def test_gradgradcheck_passes(fn):
    assert gradgradcheck(fn, (_x(),))


def test_gradgradcheck_two_inputs_given_and_non_contiguous_grad_outputs():
    x, y = _x((2, 2), 0), _x((2, 2), 1)
    fn = lambda a, b: (a * b.exp(), (a * b).sum())  # noqa: E731
    assert gradgradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y), gen_non_contig_grad_outputs=True)
    go = (_x((2, 2), 2), _x((), 3))
    assert gradgradcheck(fn, (x, y), go)


def _cube(ctx, x):
    ctx.save_for_backward(x)
    return x * x * x


def test_gradgradcheck_fails_on_wrong_double_backward():
    def backward(ctx, g):  # right first derivative, but x is cut from the graph
        (x,) = ctx.saved_tensors
        xd = x.detach()
        return g * 3 * xd * xd

    fn = _function(_cube, backward)
    assert gradcheck(fn.apply, (_x(),))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradgradcheck(fn.apply, (_x(),))
    assert gradgradcheck(fn.apply, (_x(),), raise_exception=False) is False


def test_gradgradcheck_passes_on_right_double_backward():
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x

    assert gradgradcheck(_function(_cube, backward).apply, (_x(),))
