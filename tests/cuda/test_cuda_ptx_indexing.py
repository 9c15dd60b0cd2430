"""Every indexing, scatter/gather and nll kernel (``kernels/cuda/indexing.py``, ``loss.py``)
compiles to PTX for sm_90 at the argument types its launches pass (no GPU needed: the CUDA
toolkit's NVVM does it; the simulator would let mistyped code through)."""

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM"):
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

GEO = "int64[:, ::1]"
I = "int64"  # offsets, strides, sizes
B = "boolean"


def _arr(t: str) -> str:
    return f"{'boolean' if t == 'bool' else t}[::1]"


def _compile(table: dict, name: str, args: list) -> None:
    from jtorch.kernels.cuda import target

    ptx = target.compile_ptx(table[name], f"void({', '.join(args)})", cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx


def _indexing():
    import jtorch  # noqa: F401  (registers the ops)
    from jtorch.kernels.cuda import indexing

    return indexing.KERNELS


def _loss():
    import jtorch  # noqa: F401
    from jtorch.kernels.cuda import loss

    return loss.KERNELS


@pytest.mark.parametrize("dt,it", [("float32", "int64"), ("float64", "int32"), ("int64", "int64"),
                                   ("bool", "int64"), ("uint8", "int32"), ("int16", "int64"),
                                   ("uint16", "int64"), ("uint64", "int32")])
def test_gather_ptx(dt, it):
    _compile(_indexing(), "gather", [GEO, _arr(dt), I, _arr(dt), I, I, _arr(it), I, I, B,
                                     _arr("int64")])


# (mode, dtype): the lines stager for every mode on the dtypes it meets (bool: copy, max, min)
LINES = [(m, dt) for m in range(5) for dt in ("float32", "float64", "int64", "int32", "int8")] + \
        [(m, "bool") for m in (0, 3, 4)] + [(0, "uint8"), (1, "int16"), (0, "uint16"), (0, "uint32"),
                                             (0, "uint64")]


@pytest.mark.parametrize("mode,dt", LINES)
def test_scatter_lines_ptx(mode, dt):
    _compile(_indexing(), f"lines_{mode}", [GEO, _arr(dt), I, I, _arr("int64"), I, _arr(dt), I, I,
                                            B, _arr("int64")])


@pytest.mark.parametrize("dt,it", [("float32", "int64"), ("float64", "int32")])
def test_scatter_atomic_ptx(dt, it):
    _compile(_indexing(), "scatter_atomic", [GEO, _arr(dt), I, I, _arr(it), I, _arr(dt), I, I, B,
                                             _arr("int64")])


@pytest.mark.parametrize("which,dt", [("mean_true", "float32"), ("mean_true", "float64"),
                                      ("mean_floor", "int64"), ("mean_floor", "uint8")])
def test_scatter_mean_ptx(which, dt):
    _compile(_indexing(), which, [GEO, _arr(dt), I, _arr(dt), I])


@pytest.mark.parametrize("dt", ["bool", "float32", "int64", "uint8"])
def test_counting_ptx(dt):
    k = _indexing()
    _compile(k, "count", [GEO, _arr(dt), I, I, _arr("int64")])
    _compile(k, "nonzero", [GEO, _arr(dt), I, I, _arr("int64"), _arr("int64"), I])


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bool", "uint16", "uint64"])
def test_masked_select_and_scatter_ptx(dt):
    k = _indexing()
    m = _arr("bool")
    _compile(k, "select", [GEO, m, I, _arr(dt), I, I, _arr("int64"), _arr(dt)])
    _compile(k, "masked_scatter", [GEO, m, I, _arr(dt), I, _arr(dt), I, I, _arr("int64")])


def test_one_hot_ptx():
    _compile(_indexing(), "one_hot", [GEO, _arr("int64"), I, I, _arr("int64"), _arr("int64")])


@pytest.mark.parametrize("dt,tt", [("float32", "int64"), ("float64", "uint8")])
def test_nll_ptx(dt, tt):
    k = _loss()
    x, t = _arr(dt), _arr(tt)
    _compile(k, "rows", [GEO, x, I, I, I, t, I, x, I, I, I, x, x, _arr("int64")])
    _compile(k, "sum", [x, x, I, I, x])
    _compile(k, "backward", [GEO, I, I, t, I, x, I, I, I, x, I, x, x])


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_binary_cross_entropy_ptx(dt):
    x = _arr(dt)
    _compile(_loss(), "bce", [GEO, x, I, x, I, x, I, x, I, _arr("int64")])


@pytest.mark.parametrize("dt", ["uint16", "uint64"])
def test_masked_fill_bits_ptx(dt):
    _compile(_indexing(), "fill_bits", [GEO, _arr(dt), I, _arr(dt), I, _arr("bool"), I, _arr(dt)])


@pytest.mark.parametrize("it", ["int64", "int32"])
def test_index_offsets_ptx(it):
    _compile(_indexing(), "offsets", [GEO, _arr(it), I, I, I, _arr("int64"), _arr("int64")])
