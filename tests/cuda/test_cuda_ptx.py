"""Every generated CUDA kernel compiles to PTX for sm_90 (no GPU needed: the CUDA toolkit's
NVVM does it), built from the same OpDef scalar functions as the CPU loops (copies with CUDA
twins, ``cuda.scalars``, where those call what CUDA does not lower)."""

import os

import pytest

from jtorch.kernels import registry

ARITY = {"unary": 1, "binary": 2, "ternary": 3}

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


def _compile_pointwise(op, dt: str) -> dict:
    """PTX of both kernels (``contiguous``, ``strided``) of ``op`` over ``dt`` inputs."""
    from jtorch.kernels.cuda import pointwise

    target = _target()
    compute, out = _dtypes(op, dt)
    arity = op.scalar.__code__.co_argcount  # the parameters count: isclose's rtol, atol, ...
    param = PARAM_DTYPE.get(op.name, "float64")
    mod = pointwise.module(op, arity, compute, out)
    ptxs = {}
    for which, sig in pointwise.signatures(arity, compute, out, ins=dt, nparams=op.nparams,
                                           param=param).items():
        ptx = ptxs[which] = target.compile_ptx(getattr(mod, which), sig, cc=(9, 0))
        assert ".target sm_90" in ptx and ".entry" in ptx
    return ptxs


def _instructions(ptx: str) -> list:
    """The opcodes of the PTX's instructions (``cvt.rmi.f32.f32``, ``setp.gt.f64``, ...)."""
    ops = []
    for line in ptx.splitlines():
        t = line.strip()
        if t and not t.startswith(("//", ".", "{", "}", "$", "@")) and t[0].isalpha():
            ops.append(t.split()[0].rstrip(";"))
    return ops


def _pointwise_ops(cat: int = 2) -> list:
    """The pointwise ops that accept dtype category ``cat`` (2 float, 1 integer)."""
    import jtorch  # noqa: F401  (registers the ops)

    return [o for o in registry.REGISTRY.values() if o.family in ARITY and o.scalar is not None
            and cat in o.cats]


@pytest.mark.parametrize("name", ["exp", "add", "where", "lt", "logical_and", "isclose"])
def test_pointwise_ptx(name):
    import jtorch  # noqa: F401

    _compile_pointwise(registry.get(name), "float32")


# Ops whose scalar functions call what Numba's CUDA target does not lower (NumPy ufuncs on
# scalars, the builtin max/min of two floats) compile with CUDA twins (``cuda.scalars``): the
# instructions each must show, and what it must not (no float64 in a float32 kernel: the float32
# libdevice variant; no max.f32/min.f32, which drop nans, where the CPU's max keeps them).
TWIN_PTX = {
    ("floor", "float32"): ("cvt.rmi.f32.f32", ".f64"), ("floor", "float64"): ("cvt.rmi.f64.f64", None),
    ("round", "float32"): ("cvt.rni.f32.f32", ".f64"),
    ("fmod", "float32"): (None, ".f64"), ("fmod", "float64"): (None, None),
    ("nextafter", "float32"): (None, ".f64"),
    ("signbit", "float32"): (None, ".f64"), ("signbit", "float64"): (None, None),
    ("hypot", "float32"): ("sqrt.rn.f64", None), ("hypot", "float64"): ("sqrt.rn.f64", None),
    ("digamma", "float32"): (None, None), ("digamma", "float64"): (None, None),
    ("hardtanh", "float32"): ("selp.f32", "max.f"), ("hardtanh", "float64"): ("selp.f64", "max.f"),
}


@pytest.mark.parametrize("name,dt", sorted(TWIN_PTX))
def test_twin_ops_ptx(name, dt):
    import jtorch  # noqa: F401

    must, must_not = TWIN_PTX[name, dt]
    for which, ptx in _compile_pointwise(registry.get(name), dt).items():
        ops = _instructions(ptx)
        if must:
            assert must in ops, (which, sorted(set(ops)))
        if must_not:
            assert not [o for o in ops if must_not in o and not o.startswith(("ld.", "st."))], \
                (which, sorted(set(ops)))


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
    ops = _pointwise_ops()
    for op in ops:
        for dt in ("float32", "float64"):
            try:
                _compile_pointwise(op, dt)
            except Exception as e:  # noqa: BLE001  (collect them all, then report)
                failed[f"{op.name} {dt}"] = f"{type(e).__name__}: {e}"[:300]
    for op in _pointwise_ops(1):
        if 2 not in op.cats:  # integer-only ops (bitwise, gcd): their int64 kernels
            _compile_pointwise(op, "int64")
    print(f"{len(ops) - len({k.split()[0] for k in failed})} of {len(ops)} float ops compile to PTX")
    assert failed == {}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tiled_product_kernel_compiles_for_sm90(dtype):
    """CUDA tensors' mm/bmm/addmm kernel: shared-memory tiles and barriers, fused
    multiply-adds of the dtype (``kernels/cuda/matmul.py``)."""
    from jtorch.kernels.cuda import matmul
    from jtorch.kernels.source import load

    target = _target()
    mod = load(f"jt_cuda_gemm_{dtype}", matmul.source(dtype, 16))
    ptx = target.compile_ptx(mod.gemm, matmul.signature(dtype), cc=(9, 0))
    ops = _instructions(ptx)
    assert ".target sm_90" in ptx and ".shared" in ptx
    assert "bar.sync" in ops
    assert f"fma.rn.f{dtype[-2:]}" in ops


def test_fused_group_kernels_compile_for_sm90():
    """A compiled graph's pointwise group, staged for CUDA from the CPU kernel's loop body
    (``kernels/cuda/fused.py``): both launchers compile, the ops' math inlined."""
    import gc

    import jtorch
    from jtorch.compile import fusion
    from jtorch.kernels.cuda import fused
    from jtorch.kernels.source import load

    target = _target()

    @jtorch.compile
    def f(x, y):
        return (x.sin() + y).exp() * x, x.cos() > 0.5

    f(jtorch.randn(3, 4), jtorch.randn(4))
    # (``type``, not ``isinstance``: that dereferences a weak proxy among the objects, and
    # raises ReferenceError where its referent is gone)
    fks = [k for k in gc.get_objects() if type(k) is fusion.FusedKernel
           and k.names[:2] == ["sin", "add"]]
    assert fks
    fk = fks[-1]
    text = fused.source(fk.template)
    assert "t1[i]" not in text and "@X" not in text  # scratch rows and operands resolved
    mod = load("jt_cuda_fused", text)
    nin = len(fk.template[1]) - len(fk.out_dtypes)  # tensors float32, the scalar 0.5 a double
    ins = ["float32" if j in fk.tensor_pos else "float64" for j in range(nin)]
    assert ins.count("float64") == 1
    sigs = fused.signatures(fk.template, [d.name for d in fk.out_dtypes], ins)
    for which, sig in sigs.items():
        ptx = target.compile_ptx(getattr(mod, which), sig, cc=(9, 0))
        assert ".target sm_90" in ptx and ".entry" in ptx


OPTIMIZERS = {
    "sgd": lambda o, ps: o.SGD(ps, lr=0.1, momentum=0.9), "adam": lambda o, ps: o.Adam(ps),
    "rmsprop": lambda o, ps: o.RMSprop(ps, centered=True), "adagrad": lambda o, ps: o.Adagrad(ps),
    "adadelta": lambda o, ps: o.Adadelta(ps), "adamax": lambda o, ps: o.Adamax(ps),
    "nadam": lambda o, ps: o.NAdam(ps), "radam": lambda o, ps: o.RAdam(ps),
    "asgd": lambda o, ps: o.ASGD(ps), "rprop": lambda o, ps: o.Rprop(ps),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_update_kernels_compile_for_sm90(name, monkeypatch):
    """Each optimizer's CUDA update: its CPU driver restaged with grid-stride loops
    (``kernels/cuda/optim.py``), typed by the arguments a real step passes."""
    import jtorch
    from jtorch.kernels.cpu import optim as cpu_optim
    from jtorch.kernels.cuda import optim
    from jtorch.kernels.source import load

    target = _target()
    seen = []
    real = cpu_optim.run
    monkeypatch.setattr(cpu_optim, "run", lambda n, a, s: (seen.append((n, a, s)), real(n, a, s)))
    p = jtorch.randn(4, requires_grad=True)
    opt = OPTIMIZERS[name](jtorch.optim, [{"params": [p], "foreach": False}])  # the op per param
    (p * p).sum().backward()
    opt.step()
    (n, arrays, scalars), = seen
    assert n == name
    types = ["float32[::1]"] * len(arrays) + ["boolean" if isinstance(s, bool) else "float32"
                                              for s in scalars]
    mod = load(f"jt_cuda_optim_{name}", optim.source(name))
    ptx = target.compile_ptx(mod.step, f"void({', '.join(types)})", cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
