"""Every differentiable pointwise OpDef: its gradient rule against torch's autograd.

A new OpDef is picked up without a new test: it must either carry a ``vjp`` or be marked
``differentiable=False``. Inputs are float64 values drawn from the op's smooth domain
(``GRAD_DOMAIN``), operands broadcast against each other, and the upstream gradient is random;
first derivatives are compared, and second derivatives (``create_graph``) for every op whose
rule is itself differentiable.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
from test_registry_sweep import FAMILIES, PARAMS, TENSOR_PARAMS, _jtorch_fn, _torch_fn

import jtorch
from jtorch.kernels.registry import REGISTRY

# Where the op is smooth (and defined): (low, high) of the uniform draw; default (-2, 2).
GRAD_DOMAIN = {
    **dict.fromkeys(["log", "log2", "log10", "sqrt", "rsqrt", "pow", "reciprocal", "div",
                     "remainder", "fmod"], (0.3, 2.0)),
    **dict.fromkeys(["asin", "acos", "atanh", "erfinv"], (-0.9, 0.9)),
    "acosh": (1.2, 3.0),
    "log1p": (-0.5, 2.0),
    **dict.fromkeys(["logit", "logit_eps"], (0.05, 0.95)),
    **dict.fromkeys(["lgamma", "digamma", "polygamma", "entr"], (0.2, 3.0)),
    **dict.fromkeys(["mvlgamma", "zeta"], (1.2, 3.0)),
    **dict.fromkeys(["igamma", "igammac"], (0.3, 3.0)),
    "ndtri": (0.05, 0.95),
    "xlog1py": (-0.5, 2.0),
}
# Operands torch has no derivative for (zeta's exponent, igamma's a): float32, so they do not
# require grad.
NO_GRAD_OPERANDS = {"zeta": 0, "igamma": 0, "igammac": 0}
# Rules that are exact only to first order (torch's own double backward is zero or undefined
# there, or the op is piecewise constant in its derivative).
NO_SECOND_ORDER = {"floor", "ceil", "trunc", "round", "sign", "sgn", "div_trunc", "floor_divide",
                   "copy", "frac", "relu", "hardtanh", "leaky_relu", "hardsigmoid", "hardswish",
                   "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "fmax", "fmin", "abs",
                   "where", "remainder", "fmod", "copysign", "nan_to_num", "logit_eps", "elu",
                   "threshold_backward"}

# torch computes these rules with a float32 constant (1/6), even for float64; igamma's rule
# takes lgamma of its float32 a (NO_GRAD_OPERANDS): each term is within ~6e-8 of the float64
# truth on both sides, but the broadcast operand's gradient sums terms of both signs, which
# can magnify that to ~2e-6 relative.
RTOL = {"hardsigmoid": 1e-7, "igamma": 1e-5, "igammac": 1e-5}
# torch records the op but has no derivative: backward raises in both.
NOT_IMPLEMENTED = {"floor_divide", "heaviside"}

GRAD_OPS = sorted(n for n, op in REGISTRY.items()
                  if op.family in FAMILIES and op.differentiable and 2 in op.cats
                  and op.dtype_rule in ("promote", "int_to_float"))


def test_every_differentiable_pointwise_op_has_a_gradient_rule():
    missing = [n for n in GRAD_OPS if REGISTRY[n].vjp is None and n not in NOT_IMPLEMENTED]
    assert not missing, f"give these OpDefs a vjp or mark them differentiable=False: {missing}"


def _operands(name: str, rng) -> list:
    op = REGISTRY[name]
    arity = {"unary": 1, "binary": 2, "ternary": 3}[op.family] - (name in TENSOR_PARAMS)
    lo, hi = GRAD_DOMAIN.get(name, (-2.0, 2.0))
    shapes = [(3, 4), (4,), (3, 1)][:arity]
    vals = [rng.uniform(lo, hi, s) for s in shapes]
    if name == "pow":
        vals[1] = rng.uniform(-2.0, 2.0, shapes[1])
    if name in TENSOR_PARAMS:
        vals.append(rng.uniform(size=(3, 4)) > 0.5)
    if name in NO_GRAD_OPERANDS:
        vals[NO_GRAD_OPERANDS[name]] = vals[NO_GRAD_OPERANDS[name]].astype(np.float32)
    return vals


@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradient_matches_torch(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = _operands(name, rng)
    for params in PARAMS.get(name, [()]):
        jin = [jtorch.from_numpy(v.copy()).requires_grad_(v.dtype == np.float64) for v in vals]
        tin = [torch.from_numpy(v.copy()).requires_grad_(v.dtype == np.float64) for v in vals]
        jout = _jtorch_fn(name)(*jin, *params)
        tout = _torch_fn(name)(*tin, *params)
        assert jout.requires_grad and type(jout.grad_fn).__name__.endswith(
            ("Backward0", "Backward1") if name not in NOT_IMPLEMENTED else
            type(tout.grad_fn).__name__)  # (a node without a rule: torch's NotImplemented)
        g = rng.standard_normal(tuple(tout.shape))
        jx = [t for t in jin if t.requires_grad]
        tx = [t for t in tin if t.requires_grad]
        if name in NOT_IMPLEMENTED:
            with pytest.raises(RuntimeError, match=f"derivative for aten::{name} is not "):
                torch.autograd.grad(tout, tx, torch.from_numpy(g.copy()))
            with pytest.raises(RuntimeError, match=f"derivative for aten::{name} is not "):
                jtorch.autograd.grad(jout, jx, jtorch.from_numpy(g.copy()))
            continue
        jg = jtorch.autograd.grad(jout, jx, jtorch.from_numpy(g.copy()), create_graph=True)
        tg = torch.autograd.grad(tout, tx, torch.from_numpy(g.copy()), create_graph=True)
        for a, b in zip(jg, tg):
            assert a.dtype is jtorch.float64 and tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(force=True),
                                       rtol=RTOL.get(name, 1e-9),
                                       atol=1e-12, err_msg=f"{name}{params}")
        if name in NO_SECOND_ORDER:
            continue
        jsum = sum((a * a).sum() for a in jg)
        tsum = sum((b * b).sum() for b in tg)
        if not tsum.requires_grad:  # the first derivative does not depend on the inputs
            assert not jsum.requires_grad
            continue
        jgg = jtorch.autograd.grad(jsum, jx, allow_unused=True)
        tgg = torch.autograd.grad(tsum, tx, allow_unused=True)
        for a, b in zip(jgg, tgg):
            if b is None:
                assert a is None or not np.any(a.numpy())
                continue
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=max(RTOL.get(name, 0.0), 1e-8),
                                       atol=1e-10,
                                       err_msg=f"second order of {name}{params}")
