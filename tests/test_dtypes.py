"""Dtypes and type promotion vs torch: promote_types, result_type, can_cast, aliases, dtype
attributes, the default dtype, finfo/iinfo, and a property test of binary-op promotion."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jtorch

from helpers import same

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
         "complex64", "complex128"]
PAIRS = list(itertools.product(NAMES, NAMES))


def J(name: str):
    return getattr(jtorch, name)


def T(name: str):
    return getattr(torch, name)


@pytest.fixture
def restore_default_dtype():
    jd, td = jtorch.get_default_dtype(), torch.get_default_dtype()
    yield
    jtorch.set_default_dtype(jd)
    torch.set_default_dtype(td)


# -- promote_types / can_cast ------------------------------------------------------------------

def test_promote_types_matches_torch_for_every_pair():
    for a, b in PAIRS:
        same(jtorch.promote_types(J(a), J(b)), torch.promote_types(T(a), T(b)), path=f"{a}, {b}")


def test_can_cast_matches_torch_for_every_pair():
    bad = [(a, b) for a, b in PAIRS if jtorch.can_cast(J(a), J(b)) != torch.can_cast(T(a), T(b))]
    assert not bad


# -- result_type -------------------------------------------------------------------------------

def _operand(kind: str, name: str, lib):
    """A dimensioned tensor, a 0-d tensor, or a Python scalar ('name' is then its type)."""
    if kind == "dim":
        return lib.ones(2, dtype=getattr(lib, name))
    if kind == "zero":
        return lib.ones((), dtype=getattr(lib, name))
    return {"bool": True, "int": 3, "float": 1.5, "complex": 1 + 2j}[name]


_KINDS = ([("dim", n) for n in NAMES] + [("zero", n) for n in NAMES]
          + [("scalar", s) for s in ("bool", "int", "float", "complex")])


@pytest.mark.parametrize("first", _KINDS, ids=lambda k: f"{k[0]}-{k[1]}")
def test_result_type_matches_torch(first):
    for second in _KINDS:
        if first[0] == second[0] == "scalar":
            continue
        j = jtorch.result_type(_operand(*first, jtorch), _operand(*second, jtorch))
        t = torch.result_type(_operand(*first, torch), _operand(*second, torch))
        if t == torch.complex32:
            continue  # jtorch has no complex32 (NumPy has no storage for it)
        same(j, t, path=str(second))


def test_result_type_documented_examples():
    assert jtorch.result_type(jtorch.tensor([1, 2], dtype=jtorch.int32), 1.0) is jtorch.float32
    assert jtorch.result_type(jtorch.tensor([1, 2], dtype=jtorch.uint8), jtorch.tensor(1)) is jtorch.uint8
    assert jtorch.result_type(jtorch.tensor([1, 2], dtype=jtorch.int8), jtorch.tensor(1.0)) \
        is jtorch.float32
    assert jtorch.result_type(2, jtorch.tensor(1.0, dtype=jtorch.float64)) is jtorch.float64
    assert jtorch.result_type(jtorch.tensor(True), 3) is jtorch.int64


def test_result_type_of_two_scalars_matches_torch():
    for a, b in itertools.product([True, 3, 1.5, 1j], repeat=2):
        same(jtorch.result_type(a, b), torch.result_type(a, b), path=f"{a!r}, {b!r}")


def test_numpy_scalars_promote_like_python_scalars():
    t = jtorch.ones(2, dtype=jtorch.int32)
    assert jtorch.result_type(t, np.float64(1.5)) is jtorch.float32
    assert jtorch.result_type(t, np.int64(7)) is jtorch.int32
    assert (t + np.float32(0.5)).dtype is jtorch.float32


# -- dtype objects -----------------------------------------------------------------------------

@pytest.mark.parametrize("alias, target", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
    ("int", "int32"), ("short", "int16"), ("cfloat", "complex64"), ("cdouble", "complex128"),
])
def test_aliases(alias, target):
    assert J(alias) is J(target)
    assert repr(J(alias)) == repr(T(alias)) == f"torch.{target}"


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes_match_torch(name):
    j, t = J(name), T(name)
    assert j.is_floating_point == t.is_floating_point
    assert j.is_complex == t.is_complex
    assert j.is_signed == t.is_signed
    assert j.itemsize == t.itemsize
    assert repr(j) == repr(t) and str(j) == str(t)
    assert jtorch.ones(1, dtype=j).is_floating_point() == t.is_floating_point
    assert jtorch.is_floating_point(jtorch.ones(1, dtype=j)) == t.is_floating_point
    assert jtorch.is_complex(jtorch.ones(1, dtype=j)) == t.is_complex
    assert jtorch.ones(1, dtype=j).element_size() == t.itemsize
    assert pickle.loads(pickle.dumps(j)) is j
    assert j == J(name) and j != (J("float64") if j is not J("float64") else J("float32"))


def test_dtype_conversions_match_torch():
    for name in ("float32", "float64", "complex64", "complex128"):
        same(J(name).to_complex(), T(name).to_complex())
        same(J(name).to_real(), T(name).to_real())
    for name in NAMES:
        assert J(name).abbr == T(name).abbr


# -- default dtype -----------------------------------------------------------------------------

def test_default_dtype_is_float32():
    assert jtorch.get_default_dtype() is jtorch.float32


@pytest.mark.usefixtures("restore_default_dtype")
@pytest.mark.parametrize("name", ["float64", "float16", "float32"])
def test_set_default_dtype_changes_inference_and_arithmetic(name):
    jtorch.set_default_dtype(J(name))
    torch.set_default_dtype(T(name))
    assert jtorch.get_default_dtype() is J(name)
    cases = [
        lambda m: m.tensor(1.5), lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1, 2]),
        lambda m: m.ones(2), lambda m: m.zeros(()), lambda m: m.tensor([1, 2]) / 2,
        lambda m: m.tensor([1, 2]) * 1.5, lambda m: m.tensor([True]) + 0.5,
        lambda m: m.exp(m.tensor([1])), lambda m: m.tensor([1.0], dtype=m.float32) * 2.5,
        lambda m: m.tensor(2.5, dtype=m.float64) + m.tensor([1, 2]),
        lambda m: m.full((2,), 1.5), lambda m: m.tensor(1.5j) if name != "float16" else m.tensor(1),
    ]
    for i, make in enumerate(cases):
        j, t = make(jtorch), make(torch)
        same(j.dtype, t.dtype, path=f"case {i}")
        np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-3)


@pytest.mark.usefixtures("restore_default_dtype")
def test_set_default_dtype_rejects_non_floating_types():
    for bad in (jtorch.int64, jtorch.bool, jtorch.complex64):
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            jtorch.set_default_dtype(bad)
    assert jtorch.get_default_dtype() is jtorch.float32


# -- finfo / iinfo -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_torch(name):
    j, t = jtorch.finfo(J(name)), torch.finfo(T(name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(j, attr) == getattr(t, attr), attr
    assert repr(j) == repr(t)


def test_finfo_default_and_errors():
    assert jtorch.finfo() == jtorch.finfo(jtorch.float32)
    assert jtorch.finfo().eps == torch.finfo().eps
    with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
        jtorch.finfo(jtorch.int32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    j, t = jtorch.iinfo(J(name)), torch.iinfo(T(name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(j, attr) == getattr(t, attr), attr
    assert repr(j) == repr(t)


def test_iinfo_errors():
    with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
        jtorch.iinfo(jtorch.float32)
    with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
        jtorch.iinfo(jtorch.bool)


# -- promotion through binary ops (property test) ----------------------------------------------

# A subset of dtypes keeps the number of compiled kernels (one per input-dtype combination) small.
PROP_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
PROP_OPS = ["add", "mul", "div", "eq", "maximum"]
SHAPES = [(), (1,), (3,), (2, 1), (2, 3), (0,)]


def _values(draw, name, shape):
    n = math.prod(shape)
    if name == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool).reshape(shape)
    if name.startswith("float"):
        vals = st.sampled_from([0.0, -0.0, 1.5, -2.25, 3.0, 1e3, math.nan, math.inf, -7.0])
    else:
        lo = 0 if name == "uint8" else -100
        vals = st.integers(lo, 100)
    return np.array(draw(st.lists(vals, min_size=n, max_size=n))).astype(name).reshape(shape)


@st.composite
def operand(draw):
    kind = draw(st.sampled_from(["tensor", "tensor", "scalar"]))
    if kind == "scalar":
        return draw(st.sampled_from([True, False, 2, -3, 0.5, -1.25]))
    name = draw(st.sampled_from(PROP_DTYPES))
    return _values(draw, name, draw(st.sampled_from(SHAPES)))


def _pair(x):
    if isinstance(x, np.ndarray):
        return jtorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    return x, x


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.sampled_from(PROP_OPS), min_size=2, max_size=2), a=operand(), b=operand(),
       c=operand())
def test_binary_op_chains_promote_broadcast_and_compute_like_torch(ops, a, b, c):
    """(a op1 b) op2 c for random dtype triples, shapes and scalars: same dtype, shape, values
    (or the same exception type)."""
    if not isinstance(a, np.ndarray):
        a = np.array([1.5, -2.0], np.float32)  # the first operand of torch's functions is a tensor
    (ja, ta), (jb, tb), (jc, tc) = _pair(a), _pair(b), _pair(c)
    try:
        expected = getattr(torch, ops[1])(getattr(torch, ops[0])(ta, tb), tc)
    except TypeError:
        return  # torch's function takes no Python scalar there (e.g. maximum): no oracle
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            getattr(jtorch, ops[1])(getattr(jtorch, ops[0])(ja, jb), jc)
        return
    got = getattr(jtorch, ops[1])(getattr(jtorch, ops[0])(ja, jb), jc)
    tol = 1e-3 if expected.dtype == torch.float16 else 1e-6
    same(got, expected, rtol=tol, atol=tol)
