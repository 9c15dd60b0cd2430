"""Every generated CUDA kernel compiles to PTX for sm_90 (no GPU needed: the CUDA toolkit's
NVVM does it), built from the same OpDef scalar functions as the CPU loops."""

import os

import pytest

from jtorch.kernels import registry

ARITY = {"unary": 1, "binary": 2, "ternary": 3}

# Scalar functions that call what Numba's CUDA target does not implement: NumPy ufuncs on
# scalars (``math.floor``/``math.trunc``/``math.fmod`` compile there) and the builtin max/min
# of two floats. These ops need a CUDA-compilable scalar before they get a CUDA kernel.
KNOWN_UNSUPPORTED = {
    "floor": "np.floor",
    "ceil": "np.ceil",
    "trunc": "np.trunc",
    "round": "np.rint",
    "frac": "np.trunc",
    "div_trunc": "np.trunc",
    "signbit": "np.signbit",
    "floor_divide": "np.fmod",
    "remainder": "np.fmod",
    "fmod": "np.fmod",
    "nextafter": "np.nextafter",
    "digamma": "np.trunc (special_math._digamma64)",
    "polygamma": "np.trunc (special_math._digamma64)",
    "hypot": "math.hypot: no CUDA typing for these arguments",
    "logaddexp": "builtin max(x, y) of two floats",
    "logaddexp2": "builtin max(x, y) of two floats",
    "hardsigmoid": "builtin max/min of two floats",
    "hardswish": "builtin max/min of two floats",
    "hardtanh": "builtin max/min of two floats",
}


# the dtype of an op's trailing parameters (where's condition, polygamma's order)
PARAM_DTYPE = {"where": "bool", "polygamma": "int64", "mvlgamma": "int64"}


def _target():
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("PTX needs the real CUDA target, not the simulator")
    from jtorch.kernels.cuda import target

    return target


def _dtypes(op, dt: str) -> tuple:
    compute = "bool" if op.dtype_rule == registry.LOGICAL else dt
    out = "bool" if op.dtype_rule in (registry.COMPARE, registry.LOGICAL) else dt
    return compute, out


def _compile_pointwise(op, dt: str) -> None:
    from jtorch.kernels.cuda import pointwise

    target = _target()
    compute, out = _dtypes(op, dt)
    arity = op.scalar.__code__.co_argcount  # the parameters count: isclose's rtol, atol, ...
    param = PARAM_DTYPE.get(op.name, "float64")
    mod = pointwise.module(op, arity, compute, out)
    for which, sig in pointwise.signatures(arity, compute, out, ins=dt, nparams=op.nparams,
                                           param=param).items():
        ptx = target.compile_ptx(getattr(mod, which), sig, cc=(9, 0))
        assert ".target sm_90" in ptx and ".entry" in ptx


def _pointwise_ops(cat: int = 2) -> list:
    """The pointwise ops that accept dtype category ``cat`` (2 float, 1 integer)."""
    import jtorch  # noqa: F401  (registers the ops)

    return [o for o in registry.REGISTRY.values() if o.family in ARITY and o.scalar is not None
            and cat in o.cats]


@pytest.mark.parametrize("name", ["exp", "add", "where", "lt", "logical_and", "isclose"])
def test_pointwise_ptx(name):
    import jtorch  # noqa: F401

    _compile_pointwise(registry.get(name), "float32")


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reduction_ptx(name):
    import jtorch  # noqa: F401
    from jtorch.kernels.cuda import reduce

    target = _target()
    op = registry.get(name)
    for dt in ("float32", "float64"):
        fn = reduce.module(op, dt, reduce.accumulator(op, dt), dt).reduce
        ptx = target.compile_ptx(fn, reduce.signature(dt, dt), cc=(9, 0))
        assert "bar.sync" in ptx  # the block tree's barriers


def test_pointwise_source_is_the_cpu_line():
    """The CUDA body is the SSA line the CPU loops inline, not a second implementation."""
    import jtorch  # noqa: F401
    from jtorch.kernels import codegen
    from jtorch.kernels.cuda import pointwise

    op = registry.get("atan2")
    line = codegen.ssa_line(op, "float32", "float32", "v0", ["in0[i]", "in1[i]"], {}).line
    assert line in pointwise.source(op, 2, "float32", "float32")


@pytest.mark.slow
def test_every_pointwise_op_compiles_to_ptx():
    failed = {}
    for op in _pointwise_ops():
        for dt in ("float32", "float64"):
            try:
                _compile_pointwise(op, dt)
            except Exception as e:  # noqa: BLE001  (collect them all, then compare)
                failed[op.name] = f"{type(e).__name__}"
    for op in _pointwise_ops(1):
        if 2 not in op.cats:  # integer-only ops (bitwise, gcd): their int64 kernels
            _compile_pointwise(op, "int64")
    assert sorted(failed) == sorted(KNOWN_UNSUPPORTED), failed
