"""Numerical gradient checks: ``gradcheck`` and ``gradgradcheck``, with torch's semantics.

The numerical Jacobian comes from central differences, perturbing one input element at a
time in place (through ``.data``, so the version counters are untouched) and restoring it;
the analytical one from ``autograd.grad`` with one-hot grad_outputs, one reverse pass per
output element. Both are ``(input.numel(), output.numel())`` matrices, as in torch, and are
compared with ``allclose(rtol, atol)``.

>>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64, requires_grad=True)
>>> jtorch.autograd.gradcheck(lambda t: (t.exp() * t).sum(), (x,))
True

Only reverse mode is checked: jtorch has no forward-mode AD, so ``check_forward_ad``,
``check_batched_forward_grad`` and ``check_fwd_over_rev`` raise ``NotImplementedError``.
``fast_mode`` runs the full (slow) check. Complex inputs and outputs are not supported yet.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable

from .. import dispatch
from ..tensor import Tensor
from .function import Function

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

_state = dispatch.grad_state


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_NO_FORWARD_AD = ("{} requires forward-mode AD, which jtorch does not implement yet; "
                  "gradcheck checks reverse mode only. Call it with {}=False.")


# -- helpers ---------------------------------------------------------------------------------

def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_or_complex(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.category >= 2


def _iter_tensors(x, only_requiring_grad: bool = False) -> Iterable[Tensor]:
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, Iterable) and not isinstance(x, str):
        for elem in x:
            yield from _iter_tensors(elem, only_requiring_grad)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if isinstance(o, Tensor) and o.requires_grad)


def _zeros(shape: tuple, like: Tensor) -> Tensor:
    """Zeros with ``like``'s dtype and device."""
    from ..ops.creation import zeros

    return zeros(shape, dtype=like.dtype, device=like.device)


def _stack(cols: list, dim: int, shape: tuple, like: Tensor) -> Tensor:
    """``stack(cols, dim)``, or zeros of ``shape`` when there is nothing to stack."""
    from ..ops.views import stack

    return stack(cols, dim) if cols else _zeros(shape, like)


def _allclose_promoted(a: Tensor, b: Tensor, rtol: float, atol: float) -> bool:
    from .. import allclose, promote_types

    dt = promote_types(a.dtype, b.dtype)
    return allclose(a.to(dt), b.to(dt), rtol, atol)


def _notallclose_msg(analytical: Tensor, numerical: Tensor, output_idx: int,
                     input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


# -- argument checks -------------------------------------------------------------------------

def _check_inputs(tupled_inputs: tuple) -> None:
    any_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ", stacklevel=4)
        if inp.dtype.is_complex:
            raise NotImplementedError(f"gradcheck: input #{idx} is complex; jtorch's gradcheck "
                                      "supports real inputs only for now.")
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only "
                               "supports inputs that are non-overlapping to be able to compute the "
                               "numerical gradients correctly. You should call .contiguous on the "
                               "input before passing it to gradcheck.")
        any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _check_outputs(func_out) -> None:
    if any(isinstance(o, Tensor) and o.dtype.is_complex for o in _as_tuple(func_out)):
        raise NotImplementedError("gradcheck: complex outputs are not supported yet by jtorch's "
                                  "gradcheck (it would check their real and imaginary parts "
                                  "separately).")


def _check_same_dtype_and_shape(out1: Tensor, out2: Tensor, eps: float, idx) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if out1.shape != out2.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs "
                             f"are perturbed {on_index}by {eps}, but got: shapes {out1.shape} and "
                             f"{out2.shape}.")
    if out1.dtype != out2.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs "
                             f"are perturbed {on_index}by {eps}, but got: dtypes {out1.dtype} and "
                             f"{out2.dtype}.")


# -- numerical Jacobian ----------------------------------------------------------------------

def _set_entry(entry: Tensor, value: Tensor) -> None:
    prev = _state.enabled
    _state.enabled = False
    try:
        entry.copy_(value)
    finally:
        _state.enabled = prev


def _snapshot(out) -> list:
    return [o.detach().clone() if isinstance(o, Tensor) else o for o in _as_tuple(out)]


def _numerical_jacobian_wrt_input(fn, inputs: tuple, inp: Tensor, func_out: tuple,
                                  eps: float) -> tuple:
    """One ``(inp.numel(), out.numel())`` matrix per floating output of ``fn``: row ``k`` is
    the central difference of the outputs when element ``k`` of ``inp`` moves by ``eps``."""
    data = inp.data  # shares storage, not the version counter
    float_outs = [o for o in func_out if _is_float_or_complex(o)]
    rows: list = [[] for _ in float_outs]
    for idx in itertools.product(*[range(n) for n in inp.shape]):
        entry = data[idx]
        orig = entry.clone()
        _set_entry(entry, orig - eps)
        outa = _snapshot(fn(*inputs))
        _set_entry(entry, orig + eps)
        outb = _snapshot(fn(*inputs))
        _set_entry(entry, orig)
        k = 0
        for a, b in zip(outa, outb):
            if not _is_float_or_complex(a):
                continue
            _check_same_dtype_and_shape(a, b, eps, idx)
            rows[k].append(((b - a) / (2 * eps)).reshape(-1))
            k += 1
    n = inp.numel()
    return tuple(_stack(r, 0, (n, o.numel()), o) for r, o in zip(rows, float_outs))


def _numerical_jacobian(fn, inputs: tuple, func_out: tuple, eps: float) -> list:
    """``[input][output]`` numerical Jacobians for the inputs that require grad."""
    return [_numerical_jacobian_wrt_input(fn, inputs, inp, func_out, eps)
            for inp in inputs if isinstance(inp, Tensor) and inp.requires_grad]


# -- analytical Jacobian ---------------------------------------------------------------------

def _analytical_rows(output: Tensor, diff_inputs: list) -> list:
    """``rows[i][j]``: the gradient of output element ``j`` w.r.t. input ``i`` (or None)."""
    from . import grad

    n = output.numel()
    rows: list = [[] for _ in diff_inputs]
    for j in range(n):
        g = _zeros((n,), output)
        g[j] = 1.0
        res = grad(output, diff_inputs, g.view(output.shape), retain_graph=True,
                   allow_unused=True)
        for i, d in enumerate(res):
            rows[i].append(d.clone() if isinstance(d, Tensor) else None)
    return rows


def _stack_and_check(rows: list, diff_inputs: list, n_out: int) -> tuple:
    """The ``(input.numel(), n_out)`` matrices built from ``rows``, whether every gradient
    had its input's size, and whether every gradient had its input's dtype."""
    sizes_ok = types_ok = True
    jacobians = []
    for inp, cols in zip(diff_inputs, rows):
        n_in = inp.numel()
        flat = []
        for d in cols:
            if d is None:
                flat.append(_zeros((n_in,), inp))
                continue
            if d.shape != inp.shape:
                sizes_ok = False
            elif d.dtype != inp.dtype:
                types_ok = False
            if d.numel() != n_in:
                raise GradcheckError("Analytical gradient has incorrect size")
            flat.append(d.reshape(-1).to(inp.dtype))
        jacobians.append(_stack(flat, 1, (n_in, n_out), inp))
    return jacobians, sizes_ok, types_ok


def _jacobians_equal(j1: list, j2: list, tol: float) -> bool:
    return all(a.numel() == 0 or (a - b).abs().max().item() <= tol for a, b in zip(j1, j2))


def _analytical_jacobian(inputs: tuple, output: Tensor, nondet_tol: float,
                         check_grad_dtypes: bool) -> list:
    diff_inputs = list(_iter_tensors(inputs, True))
    n_out = output.numel()
    jac1, sizes_ok, types_ok = _stack_and_check(_analytical_rows(output, diff_inputs),
                                                diff_inputs, n_out)
    jac2, _, _ = _stack_and_check(_analytical_rows(output, diff_inputs), diff_inputs, n_out)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not _jacobians_equal(jac1, jac2, nondet_tol):
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input "
                             "and grad_output multiple times gives different values, although "
                             "analytical gradient matches numerical gradient."
                             f"The tolerance for nondeterminism was {nondet_tol}."
                             + FAILED_NONDET_MSG)
    return jac1


# -- the checks ------------------------------------------------------------------------------

def _check_no_differentiable_outputs(func, inputs: tuple, func_out: tuple, eps: float) -> None:
    for per_input in _numerical_jacobian(func, inputs, func_out, eps):
        for jac in per_input:
            if jac.ne(0).sum().item() > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(func, func_out, inputs: tuple, outputs: tuple, eps: float, rtol: float,
                    atol: float, check_grad_dtypes: bool, nondet_tol: float) -> None:
    func_out = _as_tuple(func_out)
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, func_out, eps)
        return
    per_input = _numerical_jacobian(func, inputs, func_out, eps)
    float_outs = [o for o in func_out if _is_float_or_complex(o)]
    numerical = [[per_input[j][k] for j in range(len(per_input))]
                 for k, o in enumerate(float_outs) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose_promoted(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))


FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.""".strip()


def _test_batched_grad(inputs: tuple, output: Tensor, output_idx: int) -> None:
    """Two vjps one by one against the same two through ``is_grads_batched``."""
    from .. import randn_like
    from ..ops.views import stack
    from . import grad

    diff_inputs = list(_iter_tensors(inputs, True))

    def vjp(v, batched=False):
        res = grad(output, diff_inputs, v, retain_graph=True, allow_unused=True,
                   is_grads_batched=batched)
        shape = (lambda t: (v.shape[0],) + tuple(t.shape)) if batched else (lambda t: t.shape)
        return tuple(_zeros((), t).expand(shape(t)) if g is None else g
                     for g, t in zip(res, diff_inputs))

    grad_outputs = [randn_like(output) for _ in range(2)]
    expected = [stack(list(shards)) for shards in zip(*[vjp(g) for g in grad_outputs])]
    try:
        result = vjp(stack(grad_outputs), batched=True)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                             f"{FAILED_BATCHED_GRAD_MSG}") from ex
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if not _allclose_promoted(res, exp, 1e-5, 1e-8):
            raise GradcheckError(f"For output {output_idx} and input {input_idx}:\n\n"
                                 f"{FAILED_BATCHED_GRAD_MSG}\n\nGot:\n{res}\n\nExpected:\n{exp}"
                                 .strip())


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple, masked) -> None:
    from .. import zeros_like
    from . import grad

    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads_input, diff_inputs):
        if gi is None:
            continue
        if masked:
            if not _allclose_promoted(gi, zeros_like(gi), 1e-5, 1e-8):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not gi.eq(0).all().item():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """Identity forward; backward hands an undefined (None) gradient to its input."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return None


def _test_undefined_backward_mode(func, outputs: tuple, inputs: tuple) -> None:
    from .. import zeros_like
    from . import grad

    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this function. "
                      "If this is true for you, you can call this function with "
                      '"check_undefined_grad=False" to disable the feature', stacklevel=4)

    def check(outs: list) -> None:
        try:
            grads_input = grad(outs, diff_inputs, [zeros_like(o) for o in outs],
                               allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 'Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"') from e
        for gi in grads_input:
            if gi is not None and not gi.eq(0).all().item():
                warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero. Please look at \"Notes "
                                     "about undefined output gradients\" in "
                                     "\"tools/autograd/derivatives.yaml\"")

    # every output grad undefined at once, then (with several outputs) one at a time
    to_check = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(to_check[0]) > 1:
        for k in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            to_check.append([_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(outs)])
    for outs in to_check:
        check(outs)


# -- public API ------------------------------------------------------------------------------

def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Compare the gradients of ``func`` at ``inputs`` (w.r.t. the floating inputs that
    require grad) with finite differences; True, or ``GradcheckError`` (False with
    ``raise_exception=False``).

    >>> x = jtorch.tensor([0.5, 1.5], dtype=jtorch.float64, requires_grad=True)
    >>> jtorch.autograd.gradcheck(jtorch.exp, x)
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to "
                             "be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad "
                             "to be True")
    if check_forward_ad:
        raise NotImplementedError(_NO_FORWARD_AD.format("check_forward_ad=True",
                                                        "check_forward_ad"))
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes, check_batched_grad, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


# ``jtorch.autograd.gradcheck`` names this function once the package is imported; the error
# class stays reachable through it as well as through the module
gradcheck.GradcheckError = GradcheckError


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, masked) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    _check_outputs(func_out)
    outputs = _differentiable_outputs(func_out)
    _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol)
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _make_grad_output(x: Tensor, noncontiguous: bool) -> Tensor:
    """Uniform in [-1, 1), like ``torch.testing.make_tensor(low=-1, high=1)``."""
    from .. import float64, rand

    dtype = x.dtype if _is_float_or_complex(x) else float64
    shape = tuple(x.shape)
    if noncontiguous and x.numel() > 1:
        t = rand(*shape[:-1], 2 * shape[-1], dtype=dtype, device=x.device)[..., ::2]
    else:
        t = rand(*shape, dtype=dtype, device=x.device)
    prev = _state.enabled
    _state.enabled = False
    try:
        t.mul_(2).sub_(1)
    finally:
        _state.enabled = prev
    return t.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """``gradcheck`` of the map (inputs, grad_outputs) -> the gradients of ``func`` w.r.t. its
    inputs (so second derivatives are checked). Random grad_outputs in [-1, 1) are made when
    none are given.

    >>> x = jtorch.tensor([0.5, 1.5], dtype=jtorch.float64, requires_grad=True)
    >>> jtorch.autograd.gradgradcheck(lambda t: t * t * t, x)
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    if check_fwd_over_rev:
        raise NotImplementedError(_NO_FORWARD_AD.format("check_fwd_over_rev=True",
                                                        "check_fwd_over_rev"))
    from . import grad

    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_make_grad_output(x, gen_non_contig_grad_outputs)
                                    for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_idx = {i for i, x in enumerate(tupled_inputs)
                      if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_output_idx = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_idx else x
                           for i, x in enumerate(args[:len(args) - num_outputs]))
        outs = _differentiable_outputs(func(*input_args))
        gouts = tuple(x.requires_grad_() if i in diff_grad_output_idx else x
                      for i, x in enumerate(args[len(args) - num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_idx)
        grad_inputs = grad(outs, diff_input_args, gouts, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
