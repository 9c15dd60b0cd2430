"""Every kernel of the row-wise CUDA ops (``cuda/rows.py``, ``scan.py``, ``sort.py``) compiles
to PTX for sm_90 over every dtype it takes natively (no GPU needed: the CUDA toolkit's NVVM
does it); the simulator lets through typing that the real target refuses."""

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM"):
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

import jtorch  # noqa: F401  (registers the ops)
from jtorch.kernels.cuda import rows, scan, sort, target

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float32", "float64"]
I = "int64"


def _nb(dt: str) -> str:
    return "boolean" if dt == "bool" else dt


def _ptx(fn, sig: str) -> str:
    ptx = target.compile_ptx(fn, sig, cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
    return ptx


@pytest.mark.parametrize("dt", ["bool", *INTS, *FLOATS])
@pytest.mark.parametrize("largest", [True, False])
def test_arg_reduce(dt, largest):
    t = _nb(dt)
    _ptx(rows.arg_source(dt, largest, 128),
         f"void({t}[::1], {', '.join([I] * 7)}, {t}[::1], int64[::1], int64, int64)")


def test_arg_reduce_pick():
    _ptx(rows.pick, "void(int64[::1], int64[::1], int64, int64[::1])")


SCANS = [("cumsum", "int64", "int64", "int64", "uint8"), ("cumsum", "float32", "float64", "float32", None),
         ("cumsum", "float64", "float64", "float64", None), ("cumprod", "int64", "int64", "int64", "int32"),
         ("cumprod", "float32", "float64", "float32", None),
         ("logcumsumexp", "float32", "float32", "float32", None),
         ("logcumsumexp", "float64", "float64", "float64", None)]


@pytest.mark.parametrize("name,compute,total,out,ins", SCANS)
def test_scan(name, compute, total, out, ins):
    ident = "float64" if total.startswith("float") else "int64"
    _ptx(scan.scan_source(name, compute, total, out),
         f"void({_nb(ins or compute)}[::1], {', '.join([I] * 6)}, {ident}, {out}[::1])")


@pytest.mark.parametrize("name,compute,total,out,ins", SCANS)
def test_block_scan(name, compute, total, out, ins):
    ident = "float64" if total.startswith("float") else "int64"
    _ptx(scan.block_scan_source(name, compute, total, out, 128),
         f"void({_nb(ins or compute)}[::1], {', '.join([I] * 6)}, {ident}, {out}[::1])")


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dt", ["bool", "int32", "int64", *FLOATS])
def test_take_scan(name, dt):
    t = _nb(dt)
    sig = f"void({t}[::1], {', '.join([I] * 6)}, {t}[::1], int64[::1])"
    _ptx(scan.take_source(name, dt), sig)
    _ptx(scan.block_take_source(name, dt, 128), sig)


@pytest.mark.parametrize("kind,bits", [("f32", "int32"), ("f64", "int64"), ("int", "boolean"),
                                       ("int", "uint8"), ("int", "int16"), ("int", "int64")])
def test_sort_keys(kind, bits):
    _ptx(sort.key_source(kind),
         f"void({bits}[::1], {', '.join([I] * 6)}, boolean, int64[::1], int64[::1])")


def test_sort_merge():
    _ptx(sort.merge, "void(int64[::1], int64[::1], int64[::1], int64[::1], int64, int64, int64)")


@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "int64", *FLOATS])
def test_sort_gather_median_mode(dt):
    t = _nb(dt)
    _ptx(sort.gather, f"void({t}[::1], int64[::1], {', '.join([I] * 8)}, {t}[::1], int64[::1])")
    _ptx(sort.median, f"void({t}[::1], int64[::1], int64, int64, int64, boolean, {t}[::1], "
                      "int64[::1])")
    _ptx(sort.mode, f"void({t}[::1], int64[::1], int64, int64, int64, {t}[::1], int64[::1])")


# the generated reductions the statistics are composed of (``reduce.py``), in the dtypes
# rows.py runs them with
REDUCTIONS = [("sumsq", "float32", "float32"), ("sumsq", "float64", "float64"),
              ("norm_l1", "float32", "float32"), ("norm_l2", "float64", "float64"),
              ("norm_linf", "float32", "float32"), ("norm_lninf", "float64", "float64"),
              ("nansum", "float32", "float32"), ("count_nonzero", "int64", "int64"),
              ("amax", "float64", "float64"), ("amin", "int32", "int32")]


@pytest.mark.parametrize("name,compute,out", REDUCTIONS)
def test_composed_reductions(name, compute, out):
    from jtorch.kernels import registry
    from jtorch.kernels.cuda import reduce

    op = registry.REGISTRY[name]
    total = reduce.accumulator(op, compute)
    ins = "bool" if name == "count_nonzero" else None
    mod = reduce.module(op, compute, total, out)
    _ptx(mod.reduce, reduce.signature(compute, out, ins))


@pytest.mark.parametrize("dt", FLOATS)
def test_layer_norm(dt):
    _ptx(rows.layer_norm_source(128),
         f"void({dt}[::1], {dt}[::1], {dt}[::1], int64, int64, float64, boolean, boolean, "
         f"{dt}[::1], {dt}[::1], {dt}[::1])")


@pytest.mark.parametrize("dt", FLOATS)
def test_moments_and_logsumexp(dt):
    head = f"void({dt}[::1], {', '.join([I] * 8)}"
    _ptx(rows.moments_source(128), f"{head}, float64, boolean, {dt}[::1], {dt}[::1])")
    _ptx(rows.logsumexp_source(128), f"{head}, {dt}[::1])")
