"""torch's top-level spellings (ops/extras.py) and numeric utilities (ops/numeric.py) against
torch: values, dtypes, shapes, errors and gradients, on 0-d, 0-size, non-contiguous and
nan/inf inputs where they matter."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from helpers import pair, same, same_call

import jtorch

R = np.random.default_rng(0)
A34 = R.standard_normal((3, 4)).astype(np.float32)
B34 = R.standard_normal((3, 4)).astype(np.float32)
C34 = R.standard_normal((3, 4)).astype(np.float32)
A3 = R.standard_normal((3, 3)).astype(np.float32)
V5 = R.standard_normal(5).astype(np.float32)
E04 = np.zeros((0, 4), np.float32)
NANS = np.array([0.5, -1.0, np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0], np.float32)
INTS = np.array([[1, -2, 3], [0, 5, -7]], np.int64)
TOL = {"rtol": 1e-5, "atol": 1e-6}

# (id, fn(lib, *tensors), arrays, same_call keywords)
CASES = [
    # -- thin exports with ATen's signatures
    ("batch_norm", lambda t, x: t.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
     [A34], TOL),
    ("batch_norm_eval", lambda t, x, m, v: t.batch_norm(x, None, None, m, v.abs(), False, 0.1, 1e-5,
                                                         True), [A34, B34[0], C34[0]], TOL),
    ("layer_norm", lambda t, x: t.layer_norm(x, [4]), [A34], TOL),
    ("layer_norm_wb", lambda t, x, w, b: t.layer_norm(x, (4,), w, b, 1e-3), [A34, B34[0], C34[0]],
     TOL),
    ("group_norm", lambda t, x: t.group_norm(x.reshape(1, 4, 3), 2), [A34], TOL),
    ("instance_norm", lambda t, x: t.instance_norm(x[None], None, None, None, None, True, 0.1, 1e-5,
                                                    False), [A34], TOL),
    ("native_layer_norm", lambda t, x: t.native_layer_norm(x, [4], None, None, 1e-5), [A34], TOL),
    ("native_layer_norm_2d", lambda t, x: t.native_layer_norm(x.reshape(2, 2, 3), [2, 3], None, None,
                                                               1e-5), [A34], TOL),
    ("embedding", lambda t, w, i: t.embedding(w, i), [A34, np.array([[0, 2], [1, 1]])], {}),
    ("embedding_pad", lambda t, w, i: t.embedding(w, i, 1), [A34, np.array([0, 1, 2])], {}),
    ("celu", lambda t, x: t.celu(x, 0.5), [NANS], TOL),
    ("celu_", lambda t, x: t.celu_(x), [A34], TOL),
    ("selu", lambda t, x: t.selu(x), [NANS], TOL),
    ("selu_", lambda t, x: t.selu_(x), [A34], TOL),
    ("threshold", lambda t, x: t.threshold(x, 0.1, -3.0), [NANS], {}),
    ("threshold_int", lambda t, x: t.threshold(x, 1, 9), [INTS], {}),
    ("threshold_", lambda t, x: t.threshold_(x, 0.0, 2.0), [A34], {}),
    ("prelu", lambda t, x, w: t.prelu(x, w), [A34, np.array([0.25], np.float32)], {}),
    ("prelu_method", lambda t, x, w: x.prelu(w), [A34.reshape(1, 3, 4), B34[0, :3]], {}),
    ("hardshrink", lambda t, x: t.hardshrink(x, 0.6), [NANS], {}),
    ("hardshrink_method", lambda t, x: x.hardshrink(), [A34], {}),
    ("pixel_shuffle", lambda t, x: t.pixel_shuffle(x.reshape(1, 4, 3, 1), 2), [A34], {}),
    ("pixel_unshuffle", lambda t, x: t.pixel_unshuffle(x.reshape(1, 1, 2, 6), 2), [A34], {}),
    ("channel_shuffle", lambda t, x: t.channel_shuffle(x.reshape(1, 4, 3), 2), [A34], {}),
    ("native_channel_shuffle", lambda t, x: t.native_channel_shuffle(x.reshape(1, 4, 3), 2), [A34],
     {}),
    ("pdist", lambda t, x: t.pdist(x), [A34], TOL),
    ("pdist_p1", lambda t, x: t.pdist(x, 1.0), [A34], TOL),
    ("kl_div", lambda t, x, y: t.kl_div(x, y.abs()), [A34, B34], TOL),
    ("kl_div_mean", lambda t, x, y: t.kl_div(x, y.abs(), 1), [A34, B34], TOL),
    ("kl_div_sum_log", lambda t, x, y: t.kl_div(x, y, 2, log_target=True), [A34, B34], TOL),
    ("kl_div_none", lambda t, x, y: t.kl_div(x, y.abs(), 0), [A34, B34], TOL),
    ("margin_ranking", lambda t, x, y, z: t.margin_ranking_loss(x, y, z.sign(), 0.2), [A34, B34, C34],
     TOL),
    ("cosine_embedding", lambda t, x, y: t.cosine_embedding_loss(x, y, t.tensor([1, -1, 1]), 0.1, 2),
     [A34, B34], TOL),
    ("hinge_embedding", lambda t, x, y: t.hinge_embedding_loss(x, y.sign(), 0.5, 0), [A34, B34], TOL),
    ("triplet_margin", lambda t, x, y, z: t.triplet_margin_loss(x, y, z, 0.5, 1.0, 1e-6, True),
     [A34, B34, C34], TOL),
    ("poisson_nll", lambda t, x, y: t.poisson_nll_loss(x, y.abs(), True, True, 1e-8, 1), [A34, B34],
     TOL),
    ("poisson_nll_nolog", lambda t, x, y: t.poisson_nll_loss(x.abs(), y.abs(), False, False, 1e-8, 2),
     [A34, B34], TOL),
    ("bce_logits", lambda t, x, y: t.binary_cross_entropy_with_logits(x, y.sigmoid()), [A34, B34], TOL),
    ("bce_logits_w", lambda t, x, y, w: t.binary_cross_entropy_with_logits(
        x, y.sigmoid(), w, w[0].abs(), 0), [A34, B34, C34], TOL),
    ("constant_pad_nd", lambda t, x: t.constant_pad_nd(x, [1, 2, 0, 1], 0.5), [A34], {}),
    ("constant_pad_nd_int", lambda t, x: t.constant_pad_nd(x, [2, 0]), [INTS], {}),
    ("constant_pad_nd_odd", lambda t, x: t.constant_pad_nd(x, [2]), [INTS], {}),
    ("convolution_2d", lambda t, x, w: t.convolution(x.reshape(1, 1, 3, 4), w.reshape(2, 1, 2, 2), None,
                                                      [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
     [A34, V5.repeat(2)[:8]], TOL),
    ("convolution_1d_t", lambda t, x, w, b: t.convolution(x[None], w.reshape(3, 2, 2), b[:2], [2], [1],
                                                           [1], True, [1], 1),
     [A34, B34.reshape(-1)[:12], V5], TOL),
    # -- in-place and plain forms
    ("detach", lambda t, x: t.detach(x), [A34], {}),
    ("detach_", lambda t, x: t.detach_(x), [A34], {}),
    ("fill", lambda t, x: t.fill(x, 2.5), [A34], {}),
    ("fill_int_tensor", lambda t, x: t.fill(x, t.tensor(3.7)), [INTS], {}),
    ("fill_", lambda t, x: t.fill_(x, 1), [A34], {}),
    ("zero_", lambda t, x: t.zero_(x.t()), [A34], {}),
    ("clamp_", lambda t, x: t.clamp_(x, -0.5, 0.5), [NANS], {}),
    ("clamp_min_", lambda t, x: t.clamp_min_(x, 0.0), [NANS], {}),
    ("clamp_max_", lambda t, x, y: t.clamp_max_(x, y), [A34, B34], {}),
    ("clip_", lambda t, x: t.clip_(x, max=0.1), [A34], {}),
    ("xlogy_", lambda t, x, y: t.xlogy_(x, y.abs()), [A34, B34], TOL),
    ("gcd_", lambda t, x, y: t.gcd_(x, y), [INTS, INTS[::-1].copy()], {}),
    ("lcm_", lambda t, x, y: t.lcm_(x, y), [INTS, INTS[::-1].copy()], {}),
    ("logit_", lambda t, x: t.logit_(x.sigmoid_(), 1e-3), [A34], TOL),
    ("nan_to_num_", lambda t, x: t.nan_to_num_(x, 1.0, 2.0, -2.0), [NANS], {}),
    ("index_put_", lambda t, x: t.index_put_(x, (t.tensor([0, 2]),), t.tensor(5.0), True), [A34], {}),
    ("split_with_sizes", lambda t, x: t.split_with_sizes(x, [1, 3], 1), [A34], {}),
    ("unsafe_split", lambda t, x: t.unsafe_split(x, 2, 1), [A34], {}),
    ("unsafe_split_with_sizes", lambda t, x: t.unsafe_split_with_sizes(x, [2, 1]), [A34], {}),
    ("unsafe_chunk", lambda t, x: t.unsafe_chunk(x, 2, -1), [A34], {}),
    ("unsafe_chunk_method", lambda t, x: x.unsafe_chunk(3), [A34], {}),
    ("row_stack", lambda t, x, y: t.row_stack([x[0], y]), [A34, B34], {}),
    ("is_same_size", lambda t, x, y: (t.is_same_size(x, y), x.is_same_size(y[:1])), [A34, B34], {}),
    ("predicates", lambda t, x: (t.is_conj(x), t.is_neg(x), x.is_neg(), t.is_signed(x),
                                 t.is_inference(x), x.is_inference(), t.get_device(x),
                                 t.is_storage(x)), [A34], {}),
    ("resolve_neg", lambda t, x: (t.resolve_neg(x), x.resolve_neg()), [A34], {}),
    # -- *_copy: contiguous copies of the views
    ("alias_copy", lambda t, x: t.alias_copy(x.t()), [A34], {"strides": True}),
    ("as_strided_copy", lambda t, x: t.as_strided_copy(x, (2, 2), (1, 2), 1), [A34], {"strides": True}),
    ("detach_copy", lambda t, x: t.detach_copy(x), [A34], {"strides": True}),
    ("diagonal_copy", lambda t, x: t.diagonal_copy(x, 1), [A34], {"strides": True}),
    ("expand_copy", lambda t, x: t.expand_copy(x[:1], (2, 3, 4)), [A34], {"strides": True}),
    ("permute_copy", lambda t, x: t.permute_copy(x, (1, 0)), [A34], {"strides": True}),
    ("select_copy", lambda t, x: t.select_copy(x, 1, -1), [A34], {"strides": True}),
    ("slice_copy", lambda t, x: t.slice_copy(x, 1, 1, None, 2), [A34], {"strides": True}),
    ("split_copy", lambda t, x: t.split_copy(x, 2, 1), [A34], {"strides": True}),
    ("split_with_sizes_copy", lambda t, x: t.split_with_sizes_copy(x, [1, 2]), [A34],
     {"strides": True}),
    ("squeeze_copy", lambda t, x: t.squeeze_copy(x[:1]), [A34], {"strides": True}),
    ("t_copy", lambda t, x: t.t_copy(x), [A34], {"strides": True}),
    ("transpose_copy", lambda t, x: t.transpose_copy(x, 0, 1), [A34], {"strides": True}),
    ("unbind_copy", lambda t, x: t.unbind_copy(x, 1), [A34], {"strides": True}),
    ("unfold_copy", lambda t, x: t.unfold_copy(x, 1, 2, 1), [A34], {"strides": True}),
    ("unsqueeze_copy", lambda t, x: t.unsqueeze_copy(x, 1), [A34], {"strides": True}),
    ("view_copy", lambda t, x: t.view_copy(x, (2, 6)), [A34], {"strides": True}),
    ("narrow_copy", lambda t, x: (t.narrow_copy(x, 1, 1, 2), x.narrow_copy(0, 2, 1)), [A34],
     {"strides": True}),
    # -- differences, statistics, integrals
    ("diff", lambda t, x: t.diff(x), [A34], {}),
    ("diff_n2_dim0", lambda t, x, y: t.diff(x, 2, 0, prepend=y[:1], append=y), [A34, B34], {}),
    ("diff_int_high_order", lambda t, x: t.diff(x, 5), [INTS], {}),
    ("diff_bool", lambda t, x: x.diff(), [A34 > 0], {}),
    ("diff_0d", lambda t, x: t.diff(x), [np.float32(1)], {}),
    ("diff_empty", lambda t, x: t.diff(x, dim=0), [E04], {}),
    ("cross", lambda t, x, y: t.cross(x, y, dim=0), [A34, B34], TOL),
    ("cross_default_dim", lambda t, x, y: t.cross(x.t(), y.t()), [A34, B34], TOL),
    ("cross_broadcast", lambda t, x, y: x.cross(y[:, :1], 0), [A34, B34], TOL),
    ("cross_bad_dim", lambda t, x, y: t.cross(x, y, dim=1), [A34, B34], {"message": "type only"}),
    ("cov", lambda t, x: t.cov(x), [A34], TOL),
    ("cov_1d_int", lambda t, x: t.cov(x[0]), [INTS], TOL),
    ("cov_weights", lambda t, x, aw: t.cov(x, correction=0, fweights=t.tensor([1, 2, 1, 3]),
                                           aweights=aw.abs()), [A34, V5[:4]], TOL),
    ("cov_aweights", lambda t, x, aw: x.cov(aweights=aw.abs()), [A34, V5[:4]], TOL),
    ("corrcoef", lambda t, x: t.corrcoef(x), [A34], TOL),
    ("corrcoef_1d", lambda t, x: x.corrcoef(), [V5], TOL),
    ("trapezoid", lambda t, x: t.trapezoid(x), [A34], TOL),
    ("trapezoid_dx_dim", lambda t, x: t.trapezoid(x, dx=0.5, dim=0), [A34], TOL),
    ("trapezoid_x1d", lambda t, y, x: t.trapezoid(y, x[:4].cumsum(0)), [A34, V5], TOL),
    ("trapezoid_xnd", lambda t, y, x: t.trapezoid(y, x, dim=0), [A34, B34], TOL),
    ("trapezoid_int", lambda t, y: t.trapezoid(y), [INTS], TOL),
    ("trapezoid_empty", lambda t, y: t.trapezoid(y, dim=0), [E04], TOL),
    ("trapz", lambda t, y: t.trapz(y, dx=2.0), [A34], TOL),
    ("cumulative_trapezoid", lambda t, y: t.cumulative_trapezoid(y), [A34], TOL),
    ("cumulative_trapezoid_x", lambda t, y, x: t.cumulative_trapezoid(y, x[:4]), [A34, V5], TOL),
    ("vander", lambda t, x: t.vander(x), [V5], TOL),
    ("vander_int_inc", lambda t, x: t.vander(x[0], 4, increasing=True), [INTS], {}),
    ("vander_n0", lambda t, x: t.vander(x, 0), [V5], {}),
    ("vander_2d", lambda t, x: t.vander(x), [A34], {"message": "type only"}),
    ("dist", lambda t, x, y: t.dist(x, y), [A34, B34], TOL),
    ("dist_p", lambda t, x, y: (x.dist(y, 1), x.dist(y, float("inf")), x.dist(y, 0)), [A34, B34], TOL),
    ("renorm", lambda t, x: t.renorm(x, 2, 0, 1.0), [A34], TOL),
    ("renorm_dim1_p1", lambda t, x: x.renorm(1, -1, 0.7), [A34], TOL),
    ("renorm_", lambda t, x: x.renorm_(3, 1, 0.5), [A34], TOL),
    ("isreal", lambda t, x: (t.isreal(x), x.isreal()), [NANS], {}),
    ("angle", lambda t, x: t.angle(x), [NANS], TOL),
    ("angle_int", lambda t, x: x.angle(), [INTS], TOL),
    # -- membership and binning
    ("isin", lambda t, x, y: t.isin(x, y), [INTS, np.array([5, 0, -7])], {}),
    ("isin_invert_scalar", lambda t, x: (t.isin(x, 3, invert=True), t.isin(5, x)), [INTS], {}),
    ("isin_float", lambda t, x: t.isin(x, x[2:5]), [NANS], {}),
    ("bucketize", lambda t, x, b: t.bucketize(x, b), [NANS, np.array([-1.0, 0.0, 0.5, 2.0])], {}),
    ("bucketize_right_int32", lambda t, x, b: t.bucketize(x, b, right=True, out_int32=True),
     [NANS, np.array([-1.0, 0.0, 0.5, 2.0], np.float32)], {}),
    ("bucketize_scalar", lambda t, b: t.bucketize(0.7, b), [np.array([-1.0, 0.0, 0.5, 2.0])], {}),
    ("bucketize_2d_bounds", lambda t, x: t.bucketize(x, x), [A34], {"message": "type only"}),
    ("searchsorted", lambda t, s, v: t.searchsorted(s, v), [np.sort(A34, 1), B34], {}),
    ("searchsorted_side_sorter", lambda t, s, v: t.searchsorted(s, v, side="right",
                                                                sorter=s.argsort()), [A34, B34], {}),
    ("searchsorted_1d", lambda t, s, v: t.searchsorted(s, v, right=True), [np.sort(V5), A34], {}),
    ("searchsorted_bad", lambda t, s, v: t.searchsorted(s, v[:2]), [A34, B34], {}),
    ("searchsorted_opposite", lambda t, s, v: t.searchsorted(s, v, right=True, side="left"),
     [V5, V5], {}),
    ("unravel_index", lambda t, i: t.unravel_index(i, (2, 3)), [np.array([[0, 5], [-1, 3]])], {}),
    ("unravel_index_int", lambda t, i: t.unravel_index(i, 7), [np.array([6, 2])], {}),
    ("bincount", lambda t, x: t.bincount(x), [np.array([0, 3, 3, 1])], {}),
    ("bincount_w", lambda t, x, w: x.bincount(w, 6), [np.array([0, 3, 3, 1]), V5[:4]], {"rtol": 1e-6}),
    ("bincount_empty", lambda t, x: t.bincount(x, minlength=2), [np.zeros(0, np.int64)], {}),
    ("bincount_neg", lambda t, x: t.bincount(x), [np.array([0, -1])], {}),
    ("histc", lambda t, x: t.histc(x, 5), [A34], {}),
    ("histc_range", lambda t, x: x.histc(4, -0.5, 0.5), [NANS[[0, 1, 5, 6, 7]]], {}),
    ("histc_const", lambda t, x: t.histc(x, 3), [np.ones(4, np.float32)], {}),
    ("histc_empty", lambda t, x: t.histc(x, 3), [E04], {}),
    # -- pointwise helpers
    ("ldexp", lambda t, x, e: t.ldexp(x, e), [A34, np.array([1, -2, 3, 0])], {}),
    ("ldexp_int", lambda t, x, e: x.ldexp(e), [INTS, INTS], {}),
    ("ldexp_", lambda t, x, e: t.ldexp_(x, e), [A34, np.array([1, -2, 3, 0])], {}),
    ("ldexp_method_", lambda t, x, e: x.ldexp_(e), [A34, B34], TOL),
    ("float_power_", lambda t, x: x.double().float_power_(2), [A34], {}),
    ("float_power_bad", lambda t, x: x.float_power_(2), [A34], {}),
    # -- fill_diagonal_ and the scatters
    ("fill_diagonal_", lambda t, x: x.fill_diagonal_(7.5), [A34], {}),
    ("fill_diagonal_wrap", lambda t, x: x.reshape(6, 2).fill_diagonal_(1, wrap=True), [A34], {}),
    ("fill_diagonal_tall_nowrap", lambda t, x: x.reshape(6, 2).fill_diagonal_(1), [A34], {}),
    ("fill_diagonal_3d", lambda t: t.zeros(2, 2, 2).fill_diagonal_(3), [], {}),
    ("fill_diagonal_bad", lambda t: t.zeros(2, 3, 2).fill_diagonal_(3), [], {}),
    ("diagonal_scatter", lambda t, x, s: t.diagonal_scatter(x, s[:3], 1), [A34, V5], {}),
    ("diagonal_scatter_bad", lambda t, x, s: x.diagonal_scatter(s), [A34, V5], {}),
    ("select_scatter", lambda t, x, s: t.select_scatter(x, s[:3], 1, -1), [A34, V5], {}),
    ("slice_scatter", lambda t, x, s: t.slice_scatter(x, s[:, :2], 1, 1, None, 2), [A34, B34], {}),
    ("slice_scatter_default", lambda t, x, s: x.slice_scatter(s), [A34, B34], {}),
    ("as_strided_scatter", lambda t, x, s: t.as_strided_scatter(x, s[:4].reshape(2, 2), (2, 2), (4, 1),
                                                                 1), [A34, V5], {}),
    ("index_reduce", lambda t, x, s: t.index_reduce(x, 0, t.tensor([0, 2, 0]), s[:3], "prod"),
     [A34, B34], TOL),
    ("index_reduce_mean_noself", lambda t, x, s: x.index_reduce(1, t.tensor([1, 1, 3, 0]), s, "mean",
                                                                include_self=False), [A34, B34], TOL),
    ("index_reduce_", lambda t, x, s: x.index_reduce_(0, t.tensor([2, 1]), s[:2], "amax"), [A34, B34],
     {}),
    ("index_reduce_bad", lambda t, x, s: x.index_reduce(0, t.tensor([0]), s[:1], "sum"), [A34, B34],
     {}),
]


@pytest.mark.parametrize("fn, arrays, kw", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_torch(fn, arrays, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_call(fn, *arrays, **kw)


def test_constants():
    for name in ("e", "pi", "nan", "newaxis"):
        a, b = getattr(jtorch, name), getattr(torch, name)
        assert a == b or (a is not None and math.isnan(a) and math.isnan(b)), name


def test_typename():
    x = jtorch.ones(2, dtype=jtorch.float64)
    assert jtorch.typename(x) == torch.typename(torch.ones(2, dtype=torch.float64))
    assert jtorch.typename(3) == torch.typename(3) == "int"
    assert jtorch.typename(np.float32) == torch.typename(np.float32)


def test_range_is_end_inclusive_and_float():
    with pytest.warns(UserWarning, match="deprecated"):
        j = jtorch.range(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(j, torch.range(1, 4))
        same(jtorch.range(0, 1, 0.25, dtype=jtorch.float64), torch.range(0, 1, 0.25, dtype=torch.float64))
        same(jtorch.range(5, 1, -2, dtype=jtorch.int64), torch.range(5, 1, -2, dtype=torch.int64))
        with pytest.raises(RuntimeError):
            jtorch.range(0, 1, 0)


def test_empty_permuted_strides():
    j, t = jtorch.empty_permuted((2, 3, 4), (2, 0, 1)), torch.empty_permuted((2, 3, 4), (2, 0, 1))
    assert tuple(j.shape) == tuple(t.shape) and j.stride() == t.stride()


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, n, periodic):
    same(getattr(jtorch, name)(n, periodic), getattr(torch, name)(n, periodic), rtol=1e-5, atol=1e-6)
    same(getattr(jtorch, name)(n, periodic, dtype=jtorch.float64),
         getattr(torch, name)(n, periodic, dtype=torch.float64), rtol=1e-12, atol=1e-12)


def test_window_arguments_and_errors():
    same(jtorch.hamming_window(8, True, 0.5, 0.3), torch.hamming_window(8, True, 0.5, 0.3), rtol=1e-6,
         atol=1e-7)
    same(jtorch.kaiser_window(9, False, 5.0), torch.kaiser_window(9, False, 5.0), rtol=1e-5, atol=1e-6)
    assert jtorch.hann_window(4, requires_grad=True).requires_grad
    for lib in (jtorch, torch):
        with pytest.raises(RuntimeError):
            lib.hann_window(-1)
        with pytest.raises(RuntimeError):
            lib.hann_window(4, dtype=lib.int64)


def test_reduction_must_be_an_int():
    x = jtorch.ones(3)
    with pytest.raises(TypeError):
        jtorch.kl_div(x, x, "mean")


# -- gradients against torch ---------------------------------------------------------------------

GRADS = [
    ("diff", lambda t, x, y: t.diff(x, 2, prepend=y)),
    ("cross", lambda t, x, y: t.cross(x, y, dim=0)),
    ("cov", lambda t, x, y: t.cov(x, aweights=y[0].abs() + 0.1)),
    ("corrcoef", lambda t, x, y: t.corrcoef(x)),
    ("trapezoid", lambda t, x, y: t.trapezoid(x, y, dim=0)),
    ("cumulative_trapezoid", lambda t, x, y: t.cumulative_trapezoid(x, dx=0.3)),
    ("dist", lambda t, x, y: t.dist(x, y, 3)),
    ("renorm", lambda t, x, y: t.renorm(x, 2, 1, 0.8)),
    ("ldexp", lambda t, x, y: t.ldexp(x, (y * 3).round())),
    ("diagonal_scatter", lambda t, x, y: t.diagonal_scatter(x, y[0, :3])),
    ("select_scatter", lambda t, x, y: t.select_scatter(x, y[0], 0, 1)),
    ("slice_scatter", lambda t, x, y: t.slice_scatter(x, y[:, 1:3], 1, 1, 3)),
    ("index_reduce_amax", lambda t, x, y: t.index_reduce(x, 0, t.tensor([0, 2, 1]), y, "amax")),
    ("index_reduce_mean", lambda t, x, y: x.index_reduce(0, t.tensor([0, 0, 1]), y, "mean")),
    ("fill_tensor", lambda t, x, y: t.fill(x, y[0, 0])),
    ("kl_div", lambda t, x, y: t.kl_div(x, y.softmax(-1), 1)),
    ("triplet", lambda t, x, y: t.triplet_margin_loss(x, y, x.flip(0), 2.0)),
    ("copy_variants", lambda t, x, y: t.diagonal_copy(x) * 2 + t.t_copy(y)[1:, 0]),
    ("layer_norm", lambda t, x, y: t.layer_norm(x, [4], y[0], y[1])),
    ("convolution", lambda t, x, y: t.convolution(x[None], y.reshape(2, 3, 2), None, [1], [0], [1],
                                                  False, [0], 1)),
]


@pytest.mark.parametrize("fn", [g[1] for g in GRADS], ids=[g[0] for g in GRADS])
def test_gradients_match_torch(fn):
    (jx, tx), (jy, ty) = pair(A34.astype(np.float64)), pair(B34.astype(np.float64))
    for x in (jx, tx, jy, ty):
        x.requires_grad_()
    jout, tout = fn(jtorch, jx, jy), fn(torch, tx, ty)
    w = np.random.default_rng(1).standard_normal(tuple(tout.shape))
    (jout * jtorch.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    same(jout.detach(), tout.detach(), rtol=1e-10, atol=1e-12)
    for j, t in ((jx, tx), (jy, ty)):
        if t.grad is None or j.grad is None:  # no gradient: None, or zeros where torch keeps them
            assert not any(g is not None and g.abs().sum().item() for g in (j.grad, t.grad))
        else:
            same(j.grad, t.grad, rtol=1e-9, atol=1e-12)


def test_copy_variants_do_not_alias():
    x = jtorch.ones(3, 4)
    for y in (jtorch.alias_copy(x), jtorch.detach_copy(x), jtorch.view_copy(x, (12,)),
              jtorch.slice_copy(x)):
        y.zero_()
        assert x.sum().item() == 12


def test_out_arguments():
    x = jtorch.tensor(A34)
    out = jtorch.empty(0)
    assert jtorch.diff(x, out=out) is out
    same(out, torch.diff(torch.tensor(A34)))
    out = jtorch.empty(0, dtype=jtorch.int64)
    jtorch.bucketize(x, jtorch.tensor([0.0, 1.0]), out=out)
    same(out, torch.bucketize(torch.tensor(A34), torch.tensor([0.0, 1.0])))
    out = jtorch.empty(0)
    jtorch.t_copy(x, out=out)
    same(out, torch.t_copy(torch.tensor(A34)))


def test_as_strided_scatter_gradient():
    """The gradient of the untouched elements is the incoming gradient (torch 2.13's own
    as_strided_scatter backward zeroes them instead: compared with index_put, its equivalent)."""
    (jx, tx), (jy, ty) = pair(A34.astype(np.float64)), pair(B34[0, :2].astype(np.float64))
    for x in (jx, tx, jy, ty):
        x.requires_grad_()
    w = np.random.default_rng(2).standard_normal((3, 4))
    jout = jtorch.as_strided_scatter(jx, jy, (2,), (5,))
    tout = tx.reshape(-1).index_put((torch.tensor([0, 5]),), ty).reshape(3, 4)
    (jout * jtorch.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    same(jout.detach(), tout.detach())
    same(jx.grad, tx.grad)
    same(jy.grad, ty.grad)


def test_isin_treats_nan_as_in_no_set():
    x, t = [1.0, float("nan"), 2.0, 3.0], [float("nan"), 2.0, 7.0]
    for inv in (False, True):
        np.testing.assert_array_equal(
            jtorch.isin(jtorch.tensor(x), jtorch.tensor(t), invert=inv).numpy(),
            torch.isin(torch.tensor(x), torch.tensor(t), invert=inv).numpy())


def test_bincount_counts_and_weighted_sums_as_torch():
    """bincount over int64/int32/uint8/int8 inputs, with float32/float64/int/bool/float16
    weights and minlengths: torch's dtypes and values (weighted float32 sums in input order,
    bit for bit), int64 zeros for an empty input whatever the weights, and torch's error for
    a negative value."""
    r = np.random.default_rng(11)
    inputs = [np.array([0, 3, 3, 1]), np.zeros(0, np.int64), r.integers(0, 50, 1000),
              np.array([2, 2], np.uint8), np.array([1, 5], np.int8), np.array([7], np.int32)]
    weights = [None, lambda n: r.standard_normal(n).astype(np.float32),
               lambda n: r.standard_normal(n), lambda n: r.integers(0, 5, n),
               lambda n: r.random(n) < 0.5, lambda n: r.standard_normal(n).astype(np.float16)]
    for x in inputs:
        for make in weights:
            w = None if make is None else make(x.size)
            for minlength in (0, 3, 60):
                got = jtorch.bincount(jtorch.from_numpy(x), None if w is None else
                                      jtorch.from_numpy(w), minlength)
                want = torch.bincount(torch.from_numpy(x), None if w is None else
                                      torch.from_numpy(w), minlength)
                assert str(got.dtype) == str(want.dtype), (x, w, minlength)
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="non-negative integral"):
        jtorch.bincount(jtorch.tensor([0, -1]))
