"""jtorch._tensor_str.format_tensor must print exactly what torch's repr(tensor) prints."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

try:
    from jtorch._tensor_str import format_tensor, get_printoptions, set_printoptions
except Exception:  # pragma: no cover - package __init__ still in progress elsewhere
    _path = pathlib.Path(__file__).resolve().parents[1] / "jtorch" / "_tensor_str.py"
    _spec = importlib.util.spec_from_file_location("_jtorch_tensor_str", _path)
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)
    format_tensor, get_printoptions, set_printoptions = (
        _mod.format_tensor, _mod.get_printoptions, _mod.set_printoptions)


DEFAULT_OPTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


@pytest.fixture(autouse=True)
def _restore_printoptions():
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def _name(dtype):
    return str(dtype).replace("torch.", "")


def ours(t):
    suffixes = []
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return format_tensor(t.detach().numpy(), _name(t.dtype), _name(torch.get_default_dtype()),
                         suffixes or None)


def check(t):
    expected = repr(t)
    got = ours(t)
    assert got == expected, f"\nexpected:\n{expected}\ngot:\n{got}"


def both_set(**kwargs):
    torch.set_printoptions(**kwargs)
    set_printoptions(**kwargs)


gen = torch.Generator().manual_seed(0)

ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128]

CASES = {
    # 0-d
    "scalar_float": lambda: torch.tensor(3.5),
    "scalar_int": lambda: torch.tensor(7),
    "scalar_neg_int": lambda: torch.tensor(-12),
    "scalar_bool": lambda: torch.tensor(True),
    "scalar_intmode": lambda: torch.tensor(2.0),
    "scalar_zero": lambda: torch.tensor(0.0),
    "scalar_negzero": lambda: torch.tensor(-0.0),
    "scalar_nan": lambda: torch.tensor(float("nan")),
    "scalar_inf": lambda: torch.tensor(float("-inf")),
    "scalar_sci": lambda: torch.tensor(1e10),
    "scalar_small": lambda: torch.tensor(1e-5),
    "scalar_f64": lambda: torch.tensor(1.25, dtype=torch.float64),
    "scalar_f16": lambda: torch.tensor(0.1, dtype=torch.float16),
    "scalar_complex": lambda: torch.tensor(1 - 2j),
    "scalar_complex128": lambda: torch.tensor(0.5 + 1e-7j, dtype=torch.complex128),
    "scalar_uint8": lambda: torch.tensor(255, dtype=torch.uint8),
    # 1-d
    "vec_float": lambda: torch.tensor([1.5, -2.25, 3.0]),
    "vec_intmode": lambda: torch.tensor([1.0, 2.0, -300.0]),
    "vec_int": lambda: torch.tensor([1, -20, 300]),
    "vec_bool": lambda: torch.tensor([True, False, True]),
    "vec_sci_big": lambda: torch.tensor([1e10, 1.0, 2.0]),
    "vec_sci_small": lambda: torch.tensor([1e-5, 1.0]),
    "vec_sci_ratio": lambda: torch.tensor([0.001, 2.5]),
    "vec_sci_intmode": lambda: torch.tensor([1e9, 1.0]),
    "vec_nonfinite": lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0]),
    "vec_nonfinite_mixed": lambda: torch.tensor([float("nan"), 1.5, float("inf"), -0.0, 0.0]),
    "vec_nonfinite_intmode": lambda: torch.tensor([float("nan"), 1.0, -float("inf")]),
    "vec_negzero": lambda: torch.tensor([-0.0, 0.0, 1.0]),
    "vec_all_zero": lambda: torch.zeros(5),
    "vec_mixed_width": lambda: torch.tensor([0.0001, 123.456, -7.5]),
    "vec_long_wrap": lambda: torch.arange(40.0) * 1.37,
    "vec_int_wrap": lambda: torch.arange(-50, 50),
    "vec_f16": lambda: torch.tensor([0.1, 65504.0, -3.0], dtype=torch.float16),
    "vec_f16_small": lambda: torch.tensor([6e-8, 1.0], dtype=torch.float16),
    "vec_f64": lambda: torch.tensor([1.0, 2.5], dtype=torch.float64),
    "vec_f64_precise": lambda: torch.tensor([1 / 3, 2 / 3], dtype=torch.float64),
    "vec_int8": lambda: torch.tensor([-128, 0, 127], dtype=torch.int8),
    "vec_int16": lambda: torch.tensor([-32768, 5], dtype=torch.int16),
    "vec_int32": lambda: torch.tensor([2**31 - 1, -(2**31)], dtype=torch.int32),
    "vec_int64_big": lambda: torch.tensor([2**62, -(2**63)]),
    "vec_uint8": lambda: torch.tensor([0, 7, 255], dtype=torch.uint8),
    "vec_complex": lambda: torch.tensor([1 + 2j, -3.5 - 0.25j, 0 - 0j]),
    "vec_complex_intmode": lambda: torch.tensor([1 + 2j, -3 - 4j]),
    "vec_complex_sci": lambda: torch.tensor([1e10 + 1j, 2 - 1e-6j]),
    "vec_complex_nan": lambda: torch.tensor([complex(float("nan"), 1), complex(1, -float("inf"))]),
    "vec_complex_negzero_imag": lambda: torch.complex(torch.tensor([1.0, 2.0]),
                                                      torch.tensor([-0.0, 0.0])),
    "vec_complex128": lambda: torch.tensor([1.5 + 2j, 3j], dtype=torch.complex128),
    "vec_complex_wrap": lambda: torch.randn(30, dtype=torch.complex64, generator=gen),
    "vec_randn": lambda: torch.randn(20, generator=gen),
    "vec_randn_scaled": lambda: torch.randn(20, generator=gen) * 1e5,
    "vec_large_vals": lambda: torch.tensor([123456789.0, 1.0]),
    "vec_precise_rounding": lambda: torch.tensor([0.00015, 0.99995, 2.5]),
    # 2-d / 3-d / 4-d
    "mat_float": lambda: torch.tensor([[1.5, 2.0], [-3.25, 4.0]]),
    "mat_int": lambda: torch.tensor([[1, 2, 3], [40, 50, -60]]),
    "mat_bool": lambda: torch.tensor([[True, False], [False, True]]),
    "mat_randn": lambda: torch.randn(4, 5, generator=gen),
    "mat_wide": lambda: torch.randn(3, 30, generator=gen),
    "mat_complex": lambda: torch.randn(3, 4, dtype=torch.complex64, generator=gen),
    "mat_f64": lambda: torch.randn(2, 3, dtype=torch.float64, generator=gen),
    "mat_f16": lambda: torch.randn(3, 3, generator=gen).half(),
    "mat_int8": lambda: torch.randint(-128, 127, (4, 6), dtype=torch.int8, generator=gen),
    "t3_float": lambda: torch.randn(2, 3, 4, generator=gen),
    "t3_int": lambda: torch.arange(24).reshape(2, 3, 4),
    "t3_bool": lambda: torch.randn(2, 2, 3, generator=gen) > 0,
    "t4_float": lambda: torch.randn(2, 2, 2, 3, generator=gen),
    "t3_uint8": lambda: torch.arange(60, dtype=torch.uint8).reshape(3, 4, 5),
    "mat_one_row": lambda: torch.randn(1, 7, generator=gen),
    "mat_one_col": lambda: torch.randn(7, 1, generator=gen),
    # 0-size
    "empty_1d": lambda: torch.tensor([]),
    "empty_1d_int": lambda: torch.tensor([], dtype=torch.int64),
    "empty_1d_bool": lambda: torch.tensor([], dtype=torch.bool),
    "empty_1d_f64": lambda: torch.empty(0, dtype=torch.float64),
    "empty_1d_complex64": lambda: torch.empty(0, dtype=torch.complex64),
    "empty_2d": lambda: torch.empty(2, 0),
    "empty_2d_first": lambda: torch.empty(0, 3),
    "empty_3d_int": lambda: torch.empty(0, 2, 3, dtype=torch.int32),
    "empty_2d_uint8": lambda: torch.empty(3, 0, dtype=torch.uint8),
    # summarisation
    "arange_2000": lambda: torch.arange(2000.0),
    "arange_1001_int": lambda: torch.arange(1001),
    "arange_1000_int": lambda: torch.arange(1000),
    "randn_100x100": lambda: torch.randn(100, 100, generator=gen),
    "randn_10x10x20": lambda: torch.randn(10, 10, 20, generator=gen),
    "randn_2x600": lambda: torch.randn(2, 600, generator=gen),
    "randn_600x2": lambda: torch.randn(600, 2, generator=gen),
    "int_50x50": lambda: torch.arange(2500).reshape(50, 50),
    "bool_40x40": lambda: torch.randn(40, 40, generator=gen) > 0,
    "complex_40x40": lambda: torch.randn(40, 40, dtype=torch.complex64, generator=gen),
    "summ_sci_hidden": lambda: torch.cat([torch.ones(3), torch.full((1000,), 1e12), torch.ones(3)]),
    "summ_f16": lambda: torch.randn(1200, generator=gen).half(),
    "summ_f64": lambda: torch.randn(30, 40, dtype=torch.float64, generator=gen),
    "summ_nan": lambda: torch.full((1100,), float("nan")),
    # autograd-style suffixes
    "requires_grad": lambda: torch.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_f64": lambda: torch.tensor([1.0, 2.0], dtype=torch.float64,
                                              requires_grad=True),
    "requires_grad_scalar": lambda: torch.tensor(1.5, requires_grad=True),
    "grad_fn": lambda: torch.tensor([1.0, 2.0], requires_grad=True) + 1,
    "grad_fn_mat_wrap": lambda: torch.randn(4, 8, generator=gen, requires_grad=True) * 2,
    "grad_fn_long_line": lambda: (torch.arange(11.0) * 1.234567).requires_grad_() * 3,
    "grad_fn_f64_wrap": lambda: (torch.arange(8, dtype=torch.float64) * 1.5 + 1e4)
    .requires_grad_().sum(0, keepdim=True) * torch.ones(8, dtype=torch.float64),
    "grad_fn_empty": lambda: torch.empty(2, 0, requires_grad=True) * 2,
    "grad_fn_summ": lambda: torch.randn(50, 50, generator=gen, requires_grad=True).exp(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    check(CASES[name]())


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 1, 3), (0,), (3, 0), (1200,),
                                   (35, 35)])
def test_all_dtypes_shapes(dtype, shape):
    n = math.prod(shape)
    if dtype == torch.bool:
        t = (torch.arange(n) % 3 == 0).reshape(shape)
    elif dtype.is_complex:
        t = torch.complex(torch.arange(n) * 0.5 - 3, -torch.arange(n) * 1.25).reshape(shape)
        t = t.to(dtype)
    elif dtype.is_floating_point:
        t = (torch.arange(n, dtype=torch.float64) * 0.37 - 5).reshape(shape).to(dtype)
    else:
        lo = 0 if dtype == torch.uint8 else -100
        t = torch.randint(lo, 100, shape, dtype=dtype, generator=gen)
    check(t)


@pytest.mark.parametrize("kwargs", [
    dict(precision=2),
    dict(precision=0),
    dict(precision=10),
    dict(threshold=5),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=0),
    dict(linewidth=20),
    dict(linewidth=200),
    dict(linewidth=5),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
])
@pytest.mark.parametrize("name", [
    "vec_float", "vec_int", "vec_intmode", "vec_sci_big", "vec_complex", "mat_randn",
    "t3_float", "arange_2000", "randn_100x100", "int_50x50", "complex_40x40", "scalar_float",
    "scalar_int", "vec_nonfinite_mixed", "vec_all_zero", "empty_2d", "grad_fn_mat_wrap",
    "requires_grad_f64", "vec_long_wrap", "vec_f16", "bool_40x40",
])
def test_printoptions(kwargs, name):
    both_set(**kwargs)
    check(CASES[name]())


def test_printoptions_state():
    assert get_printoptions() == DEFAULT_OPTS
    set_printoptions(precision=6, sci_mode=True)
    assert get_printoptions() == dict(DEFAULT_OPTS, precision=6, sci_mode=True)
    set_printoptions(linewidth=100)  # sci_mode resets to None, like torch
    assert get_printoptions() == dict(DEFAULT_OPTS, precision=6, linewidth=100)
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    set_printoptions(profile="default")
    assert get_printoptions() == DEFAULT_OPTS
    torch.set_printoptions(precision=6, sci_mode=True)
    torch.set_printoptions(linewidth=100)
    assert torch._tensor_str.get_printoptions() == dict(DEFAULT_OPTS, precision=6,
                                                        linewidth=100)


@pytest.mark.parametrize("name", ["vec_float", "vec_f64", "vec_complex", "vec_complex128",
                                  "empty_1d", "empty_1d_f64", "empty_1d_complex64",
                                  "scalar_f64", "vec_f16", "mat_f64", "requires_grad_f64"])
def test_default_dtype_float64(name):
    t = CASES[name]()
    torch.set_default_dtype(torch.float64)
    check(t)


@pytest.mark.parametrize("linewidth", [20, 80, 120])
@pytest.mark.parametrize("name", ["vec_float", "vec_long_wrap", "mat_randn", "scalar_float",
                                  "vec_f64", "empty_2d", "arange_2000"])
def test_suffix_wrapping_many(name, linewidth):
    # torch's own _add_suffixes is the oracle for arbitrary caller-supplied suffixes
    both_set(linewidth=linewidth)
    t = CASES[name]()
    sfx = ["requires_grad=True", "grad_fn=<SomethingVeryLongBackward0>", "x" * 70, "y"]
    torch_suffixes = []
    if t.numel() == 0:
        torch_suffixes.append("size=" + str(tuple(t.shape)))
    if t.dtype not in (torch.float32, torch.int64, torch.bool, torch.complex64):
        torch_suffixes.append("dtype=" + str(t.dtype))
    expected = torch._tensor_str._add_suffixes(
        "tensor(" + torch._tensor_str._tensor_str(t, 7), torch_suffixes + sfx, 7, False)
    assert format_tensor(t.numpy(), _name(t.dtype), "float32", sfx) == expected


float_dtypes = st.sampled_from([np.float16, np.float32, np.float64])
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), dtype=float_dtypes, shape=small_shapes)
def test_property_random_floats(data, dtype, shape):
    arr = data.draw(hnp.arrays(dtype, shape, elements=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True, width=np.finfo(dtype).bits),
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 1e4, 123.0]).map(dtype),
    )))
    t = torch.from_numpy(arr.copy())
    check(t)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), shape=small_shapes,
       opts=st.fixed_dictionaries({
           "precision": st.integers(0, 8), "threshold": st.integers(1, 50),
           "edgeitems": st.integers(0, 4), "linewidth": st.integers(10, 120),
           "sci_mode": st.sampled_from([None, True, False])}))
def test_property_random_floats_printoptions(data, shape, opts):
    arr = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(
        -1e6, 1e6, allow_nan=False, width=32)))
    both_set(**opts)
    check(torch.from_numpy(arr.copy()))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), shape=small_shapes)
def test_property_random_complex(data, shape):
    part = st.one_of(st.floats(width=32),
                     st.sampled_from([0.0, -0.0, 1.0, -2.0, 0.25, 1e-6, 1e9]))
    arr = data.draw(hnp.arrays(np.complex64, shape,
                               elements=st.builds(complex, part, part)))
    check(torch.from_numpy(arr.copy()))
