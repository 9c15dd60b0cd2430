"""Every pointwise OpDef in the registry, checked against torch automatically.

A new unary/binary/ternary OpDef is picked up here without writing a test: the torch
counterpart is ``torch.<name>`` unless ``TORCH`` maps it (names or signatures differ), its
trailing scalar parameters come from ``PARAMS``, and an op with no torch counterpart must be
listed in ``SKIP`` with the reason. Each (op, dtype) runs a few layouts that between them reach
every loop variant (contiguous, scalar operand, strided/broadcast) on edge values; where torch
raises, jtorch must raise the same exception type.
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import jtorch
from jtorch import dispatch
from jtorch.kernels.defs.special import BESSEL_OPS, POLYNOMIAL_OPS
from jtorch.kernels.registry import LOGICAL, REGISTRY

from helpers import ATOL32, RTOL32, exact_like, raises_as, same

FAMILIES = ("unary", "binary", "ternary")
DTYPES = ("float32", "float64", "int64", "bool")

# OpDef name -> f(T, F) giving the public callable of module T (torch or jtorch, F its
# nn.functional) that takes the OpDef's operands and PARAMS in order; only where names differ.
PUBLIC = {
    "div_trunc": lambda T, F: lambda x, y: T.div(x, y, rounding_mode="trunc"),
    "gelu_tanh": lambda T, F: lambda x: F.gelu(x, approximate="tanh"),
    "cube": lambda T, F: lambda x: T.pow(x, 3),
    "logit_eps": lambda T, F: T.logit,
    "where": lambda T, F: lambda x, y, c: T.where(c, x, y),
    "addcmul": lambda T, F: lambda x, a, b, v: T.addcmul(x, a, b, value=v),
    "addcdiv": lambda T, F: lambda x, a, b, v: T.addcdiv(x, a, b, value=v),
    "polygamma": lambda T, F: lambda x, n: T.polygamma(n, x),
    "add_alpha": lambda T, F: lambda x, y, a: T.add(x, y, alpha=a),
    "sub_alpha": lambda T, F: lambda x, y, a: T.sub(x, y, alpha=a),
}
def _tensors(*xs):
    """Operands of an aten op that takes tensors only (a Python scalar there has no oracle)."""
    if not all(isinstance(x, torch.Tensor) for x in xs):
        raise TypeError("tensor operands only")
    return xs


# OpDefs with no public jtorch function of their own: torch's equivalent, and jtorch runs the
# OpDef through dispatch.pointwise with the same operands.
TORCH_ONLY = {
    "copy": lambda x: x.clone(),
    "_to_float32": lambda x: x.to(torch.float32),
    "_to_float64": lambda x: x.to(torch.float64),
    "elu": lambda x, alpha, scale, iscale: torch.ops.aten.elu(x, alpha, scale, iscale),
    "threshold_backward": lambda g, y, t: torch.ops.aten.threshold_backward(*_tensors(g, y), t),
    "tanh_backward": lambda g, y: torch.ops.aten.tanh_backward(*_tensors(g, y)),
    "sigmoid_backward": lambda g, y: torch.ops.aten.sigmoid_backward(*_tensors(g, y)),
    # (broadcast first: torch's oneDNN path fails on operands of different shapes)
    "gelu_backward": lambda g, x: torch.ops.aten.gelu_backward(
        *[t.contiguous() for t in torch.broadcast_tensors(*_tensors(g, x))]),
    "frexp_mantissa": lambda x: torch.frexp(x).mantissa,
    "frexp_exponent": lambda x: torch.frexp(x).exponent.to(x.dtype),
}
# Trailing scalar arguments of the public call (one tuple per variant).
PARAMS = {
    "leaky_relu": [(0.1,)],
    "hardtanh": [(-0.5, 2.0)],
    "elu": [(1.3, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1.0), (0.5, 1.0, 2.0)],
    "softplus": [(2.0, 5.0)],
    "logit_eps": [(1e-3,), (0.25,)],
    "nan_to_num": [(1.5, 100.0, -100.0)],
    "isclose": [(1e-5, 1e-8, False), (1e-3, 1e-2, True)],
    "addcmul": [(1,), (-0.5,)],
    "add_alpha": [(3,), (-0.5,)],
    "sub_alpha": [(2,), (0.25,)],
    "addcdiv": [(2,)],
    "threshold_backward": [(0,), (0.5,), (-1.0,)],
    "polygamma": [(0,), (1,), (2,), (5,)],
    "mvlgamma": [(1,), (3,)],
}
# Ops whose trailing parameter is a tensor operand rather than a scalar.
TENSOR_PARAMS = {"where"}
# OpDefs with no torch counterpart: name -> reason. Empty today; keep the reason when adding one.
SKIP: dict[str, str] = {}
# Inputs on which torch disagrees with itself, so there is no oracle: (op, dtype) -> (mask of
# the operand elements to leave out, reason).


def _quotient_overflows(x, y, *rest):
    with np.errstate(all="ignore"):
        return np.isfinite(x) & np.isfinite(y) & (y != 0) & np.isinf(x / y)


def _recurrence_unstarted(x, n):
    return np.isnan(x.astype(np.float64)) & (n.astype(np.float64) >= 2)


def _recurrence_unbounded(x, n):
    n = n.astype(np.float64)
    return (n >= 2**20) & (n < 2**63)


_FMOD_QUIRK = (_quotient_overflows, ("torch's vectorised fmod returns nan where x / y overflows, "
                                     "its scalar path (and C fmod) the exact remainder"))
TORCH_QUIRKS = {
    ("gelu", "float32"): (lambda x: x == math.inf, ("torch's float32 gelu(inf) is nan on its "
                          "vectorised path and inf on its scalar path (n % 8 elements)")),
    ("gelu_backward", "float32"): (lambda g, x: np.isinf(g) & (x < -10), (
        "gelu's derivative underflows float32 below x ~ -14 (float64 keeps -1e-86 at -20), so an "
        "infinite gradient times it is nan in float32 arithmetic (torch's float32 kernel too)")),
    ("gelu_backward", "float64"): (lambda g, x: x < -5, (
        "torch's float64 formula 0.5 * (1 + erf(x / sqrt(2))) cancels below x ~ -5 (0.2% off at "
        "-8); jtorch's erfc form keeps full precision there (test_gelu_backward_tail)")),
    **{(op, d): _FMOD_QUIRK for op in ("fmod", "remainder", "floor_divide")
       for d in ("float32", "float64")},
    **{(op, "int64"): (lambda x, y: (x == -2**63) | (y == -2**63), (
        "|INT_MIN| overflows: torch's own gcd/lcm kernel traps (SIGFPE) on some INT_MIN pairs"))
       for op in ("gcd", "lcm")},
    ("polygamma", "int64"): (lambda x: x < 0, (
        "torch's float32 trigamma at the poles (negative integers): sin(pi x) with pi rounded is "
        "~1e-7, not 0, so it gives a finite 1e15 where float64 gives 1e32")),
    **{(op, d): (_recurrence_unstarted, (
        "x = nan, n >= 2: the recurrence's first value is nan, so its loop never runs and torch "
        "returns its uninitialised result (whatever the register holds; jtorch gives nan)"))
       for op in ("chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                  "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                  "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w")
       for d in ("float32", "float64")},
    **{(op, d): (lambda x, n: _recurrence_unstarted(x, n) | _recurrence_unbounded(x, n), (
        "as the Chebyshev polynomials at x = nan; and torch's recurrence runs n steps (L_n(x) for "
        "x > 0 and P_n(x) for |x| < 1 stay finite, so nothing stops it early): n = 2**31 takes "
        "seconds, 2**62 does not finish"))
       for op in ("laguerre_polynomial_l", "legendre_polynomial_p") for d in DTYPES},
}


OPS = sorted(n for n, op in REGISTRY.items() if op.family in FAMILIES)


def _lookup(T, F, name):
    return getattr(T, name, None) or getattr(F, name, None)


def _torch_fn(name):
    if name in PUBLIC:
        return PUBLIC[name](torch, F)
    if name in TORCH_ONLY:
        return TORCH_ONLY[name]
    return _lookup(torch, F, name) or getattr(torch.special, name, None)


def _jtorch_fn(name):
    if name in PUBLIC:
        return PUBLIC[name](jtorch, jtorch.nn.functional)
    fn = None if name in TORCH_ONLY else _lookup(jtorch, jtorch.nn.functional, name)
    if fn is None:
        op = REGISTRY[name]

        def fn(*args):
            return dispatch.pointwise(op, args)
    return fn


def test_every_pointwise_op_has_a_torch_counterpart_or_a_skip_reason():
    missing = [n for n in OPS if n not in SKIP and _torch_fn(n) is None]
    assert not missing, f"map these OpDefs in TORCH or list them in SKIP with a reason: {missing}"
    unknown = [n for n in [*PARAMS, *PUBLIC, *TORCH_ONLY, *SKIP, *FLOAT32_DEFINED,
                           *(k[0] for k in TORCH_QUIRKS)]
               if n not in REGISTRY]
    assert not unknown, f"tables name ops that are not registered: {unknown}"
    for n in OPS:
        op = REGISTRY[n]
        if op.nparams and n not in TENSOR_PARAMS:
            assert n in PARAMS, f"give PARAMS for parameterised op {n!r}"


# -- inputs ------------------------------------------------------------------------------------

def _float_edges(np_dtype) -> np.ndarray:
    f64 = np_dtype == np.float64
    big, small, denorm = (1e300, 1e-300, 1e-310) if f64 else (1e30, 1e-30, 1e-40)
    vals = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.7, 0.999,
            -1.0001, 1e-3, 7.25, 21.0, -21.0, 89.0 if not f64 else 710.0, big, -big, small,
            -small, denorm]
    return np.array(vals, np_dtype)


_INT_EDGES = np.array([0, 1, -1, 2, -2, 3, -7, 7, 13, -13, 64, 100, 2**31, -2**31 - 5, 2**62,
                       -2**63, 2**63 - 1], np.int64)
# Shift amounts and exponents stay small where the values are large, so every case is exact.
_INT_SMALL = np.array([0, 1, -1, 2, -2, 3, -7, 7, 13, -13, 63, 64, 65], np.int64)


def edges(dtype: str, name: str = "") -> np.ndarray:
    if dtype == "bool":
        return np.array([True, False])
    if dtype == "int64":
        return _INT_EDGES.copy()
    return _float_edges(np.dtype(dtype))


def _divisor_safe(op, dtype: str, vals: np.ndarray) -> np.ndarray:
    """Integer division by zero raises: value checks use nonzero divisors (tested separately)."""
    if op.int_div and dtype in ("int64", "bool"):
        vals = vals[vals != 0]
    return vals


def n_operands(op) -> int:
    """Tensor operands that take part in promotion (a tensor parameter such as where's
    condition is added separately)."""
    return {"unary": 1, "binary": 2, "ternary": 3}[op.family] - (op.name in TENSOR_PARAMS)


def operand_values(op, dtype: str, arity: int) -> list[np.ndarray]:
    """Same-length 1-D arrays; for two or more operands, all pairs of edge values."""
    vals = _operand_values(op, dtype, arity)
    if (op.name, dtype) in TORCH_QUIRKS:
        keep = ~TORCH_QUIRKS[op.name, dtype][0](*vals)
        vals = [a[keep] for a in vals]
    return vals


def _operand_values(op, dtype: str, arity: int) -> list[np.ndarray]:
    v = edges(dtype)
    if arity == 1:
        return [v]
    second = _divisor_safe(op, dtype, _INT_SMALL if dtype == "int64" and op.name in (
        "pow", "bitwise_left_shift", "bitwise_right_shift") else v)
    pairs = list(itertools.product(v, second))
    if op.int_div and dtype == "int64":
        # torch's own trunc division traps (SIGFPE) on INT_MIN / -1; test_pointwise covers it.
        pairs = [(x, y) for x, y in pairs if not (x == -2**63 and y == -1)]
    a, b = (np.array(p) for p in zip(*pairs))
    if arity == 2:
        return [a.astype(v.dtype), b.astype(v.dtype)]
    # Ternary: the third operand cycles through the edge values.
    c = np.resize(v, a.size)
    if op.name == "lerp" and dtype.startswith("float"):
        c = np.resize(np.array([0.0, 0.25, 0.5, 0.75, 1.0, -1.0, 2.0, math.nan], v.dtype), a.size)
    return [a.astype(v.dtype), b.astype(v.dtype), c]


def _params(name: str):
    return PARAMS.get(name, [()])


# -- comparison --------------------------------------------------------------------------------

# float32 results are held to the exact result (torch's float32 math, computed in float64 and
# rounded once) within float32's accuracy: torch's own float32 results of transcendental ops
# come from its vector or its scalar path (by input length, thread count and CPU capability),
# and the two round differently (gelu's 4e-5 of the value apart at -3). float64 results are
# held to torch's. Ops whose float32 result is defined by float32 arithmetic keep torch's.
RTOL = {"float32": RTOL32, "float64": 1e-10}
ATOL = {"float32": ATOL32, "float64": 1e-12}
FLOAT32_DEFINED = {
    "tanh_backward": "torch's float32 formula: y * y overflows to inf for |y| > 1.8e19, and a "
                     "zero gradient times it is nan (float64 gives -0.0)",
    "sigmoid_backward": "torch's float32 formula: (1 - y) * y overflows for huge |y|, as above",
    "div_trunc": "trunc of the float32 quotient: 2.5 / float32(1e-3) rounds to 2500 (exactly "
                 "2499.9998), and truncating keeps that rounding",
    "logit_eps": "torch clamps to [eps, 1 - eps] with 1 - eps rounded to float32; logit's slope "
                 "near 1 (1 / (x (1 - x)) ~ 1000) turns that rounding into 2e-6 of the result",
    "nextafter": "the next float32, not the float64 neighbour rounded back",
}


# Ops whose integer operands torch computes in float32 arithmetic, losing what the result needs
# (the phase x - pi/4 of J and Y at x = 100, the long recurrences of the polynomials): their
# integer operands are held, as float32 ones are, to the exact result (the float64 computation
# on the operands converted to the float dtype of the result, rounded).
INTS_EXACT = {*BESSEL_OPS, *POLYNOMIAL_OPS}


def _run_both(jfn, tfn, jargs, targs, what, exact=True, ints_exact=False):
    """jtorch raises what torch raises (the message too for RuntimeError and
    NotImplementedError), or returns the same result: the exact one for float32 (``exact``),
    and with ``ints_exact`` for integer operands too."""
    try:
        expected = tfn(*targs)
    except Exception as e:  # noqa: BLE001 - the oracle decides what is an error
        full = isinstance(e, (RuntimeError, NotImplementedError))
        raises_as(e, lambda: jfn(*jargs), message="full" if full else "type only")
        return "raised"
    if exact and ints_exact and expected.is_floating_point():
        targs = [a.to(expected.dtype) if isinstance(a, torch.Tensor) and not a.is_floating_point()
                 else a for a in targs]
    if exact:
        expected = exact_like(tfn, targs, expected)
    same(jfn(*jargs), expected, rtol=RTOL, atol=ATOL, path=what)
    return "ok"


def _pair(arr: np.ndarray, view=None):
    """The same data (and the same NumPy view of it) as a jtorch and a torch tensor."""
    j, t = jtorch.from_numpy(arr.copy()), torch.from_numpy(arr.copy())
    if view is not None:
        j = jtorch.from_numpy(view(j.numpy()))
        t = torch.from_numpy(view(t.numpy()))
    return j, t


# -- the sweep ---------------------------------------------------------------------------------

def _cases(op, dtype: str):
    """(label, operand arrays, NumPy view applied to each) covering the loop variants."""
    arity = n_operands(op)
    vals = operand_values(op, dtype, arity)
    n = vals[0].size
    yield "contiguous", vals, None
    yield "0-d", [v[1:2].reshape(()) for v in vals], None
    yield "0-size", [v[:0] for v in vals], None
    if dtype != layout_dtype(op):
        return
    # Non-contiguous: the same values laid out transposed, and every other element.
    m = n - n % 2
    yield "transposed", [v[:m].reshape(2, m // 2) for v in vals], lambda a: a.T
    yield "step-sliced", vals, lambda a: a[::2]
    if arity > 1:
        # Broadcast (3, 1) with (4,) [with (1, 4) for the third operand].
        k = [np.resize(v, 12) for v in vals]
        shapes = [(3, 1), (4,), (1, 4)]
        yield "broadcast", [k[i][: math.prod(s)].reshape(s) for i, s in enumerate(shapes[:arity])], None
        yield "broadcast-0size", [np.resize(v, math.prod(s)).reshape(s) for v, s in
                                  zip(vals, [(2, 0), (2, 1), (1, 0)][:arity])], None


def layout_dtype(op) -> str:
    """The dtype on which an op also runs the strided and broadcast layouts. The loop templates
    are shared by every op and dtype (tests/test_dispatch.py checks them), so one dtype per op
    exercises its strided kernel; each extra (op, dtype) pair would cost a compile."""
    return "float32" if 2 in op.cats else "int64" if 1 in op.cats else "bool"


def _make_args(op, dtype, arrays, view, params):
    jargs, targs = [], []
    for a in arrays:
        j, t = _pair(a, view)
        jargs.append(j)
        targs.append(t)
    if op.name in TENSOR_PARAMS:
        shape = np.broadcast_shapes(*(a.shape for a in jargs))
        cond = (np.arange(math.prod(shape)) % 3 == 0).reshape(shape)
        j, t = _pair(cond)
        jargs.append(j)
        targs.append(t)
    return jargs + list(params), targs + list(params)


SWEEP = [n for n in OPS if n not in SKIP]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SWEEP)
def test_op_matches_torch(name, dtype):
    op = REGISTRY[name]
    tfn, jfn = _torch_fn(name), _jtorch_fn(name)
    for params in _params(name):
        for label, arrays, view in _cases(op, dtype):
            jargs, targs = _make_args(op, dtype, arrays, view, params)
            _run_both(jfn, tfn, jargs, targs, f"{name}[{dtype}, {label}, params={params}]",
                      exact=name not in FLOAT32_DEFINED, ints_exact=name in INTS_EXACT)


# Python scalar operands: torch treats them as lower-priority "wrapped numbers".
# One scalar per position (each distinct scalar type compiles a kernel variant): the first
# operand goes through the Python operator, the others through the function.
LEFT_SCALAR = {"float32": 2.5, "float64": 2, "int64": 3, "bool": True}
RIGHT_SCALAR = {"float32": 3, "float64": -0.75, "int64": -2.5, "bool": 2}
# A scalar first operand goes through the Python operator (torch's functions reject it).
OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floor_divide": operator.floordiv, "remainder": operator.mod, "pow": operator.pow,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n for n in SWEEP if REGISTRY[n].family != "unary"])
def test_op_with_python_scalars_matches_torch(name, dtype):
    op = REGISTRY[name]
    arity = n_operands(op)
    vals = operand_values(op, dtype, arity)
    params = _params(name)[0]
    ran = 0
    for pos in range(arity):
        s = RIGHT_SCALAR[dtype] if pos else LEFT_SCALAR[dtype]
        arrays = [v for i, v in enumerate(vals) if i != pos]
        if (name, dtype) in TORCH_QUIRKS:
            full = [np.full(v.shape, s, v.dtype) if i == pos else v for i, v in enumerate(vals)]
            keep = ~TORCH_QUIRKS[name, dtype][0](*full)
            arrays = [a[keep] for a in arrays]
        jargs, targs = _make_args(op, dtype, arrays, None, params)
        jargs.insert(pos, s)
        targs.insert(pos, s)
        if pos == 0 and name in OPERATORS:
            jfn = tfn = OPERATORS[name]
        else:
            jfn, tfn = _jtorch_fn(name), _torch_fn(name)
            try:
                tfn(*targs)
            except TypeError:
                continue  # torch's functional form takes no scalar here: no oracle
            except Exception:  # noqa: BLE001, S110 - _run_both compares the exceptions
                pass
        ran += 1
        _run_both(jfn, tfn, jargs, targs, f"{name}[{dtype}, scalar {s!r} at {pos}]",
                  exact=name not in FLOAT32_DEFINED, ints_exact=name in INTS_EXACT)
    if not ran:
        pytest.skip(f"torch.{name} takes no Python scalar operands")


@pytest.mark.parametrize("name", [n for n in SWEEP if REGISTRY[n].int_div])
def test_integer_division_by_zero_raises_like_torch(name):
    tfn, jfn = _torch_fn(name), _jtorch_fn(name)
    for y in (0, np.array([3, 0, 1], np.int64)):
        x = np.array([7, -7, 0], np.int64)
        jx, tx = _pair(x)
        jy, ty = (y, y) if isinstance(y, int) else _pair(y)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            tfn(tx, ty)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            jfn(jx, jy)


# -- float32 stays float32 ----------------------------------------------------------------------
# Under njit a Python constant is float64, so ``x * 0.5`` of a float32 x computes in float64:
# half the vector width and the float64 kernels of fastmath (gelu was 13x slower than torch).
# Scalar functions write constants as ``fm.like(x, c)``; these may compute in float64 on purpose.
FLOAT64_INSIDE = {
    "erfinv": "two Newton steps on math.erf in float64 refine the float32 starting value",
}


@pytest.mark.parametrize("name", [n for n in OPS if REGISTRY[n].scalar is not None
                                  and 2 in REGISTRY[n].cats and n not in TENSOR_PARAMS
                                  and REGISTRY[n].dtype_rule != LOGICAL])  # computes in bool
def test_float32_scalar_function_computes_in_float32(name):
    import numba

    from jtorch.kernels.registry import COMPARE, scalar_of

    op = REGISTRY[name]
    arity = n_operands(op) + op.nparams
    args = ", ".join(f"a{i}" for i in range(arity))
    scope = {"f": scalar_of(name)}
    exec(f"def g({args}):\n    return f({args})", scope)
    g = numba.njit(scope["g"])
    g.compile((numba.float32,) * arity)
    got = next(iter(g.overloads.values())).signature.return_type
    want = numba.boolean if op.dtype_rule == COMPARE else numba.float32
    if name in FLOAT64_INSIDE:
        assert got == numba.float64, f"{name} computes in float32 now: drop it from FLOAT64_INSIDE"
        return
    assert got == want, f"{name}'s float32 scalar function returns {got} (a Python constant "\
        "promotes to float64: write it as fm.like(x, c))"
