"""gradcheck (float64, central differences) for every differentiable non-pointwise OpDef.

Pointwise OpDefs are swept in ``tests/test_registry_grad_sweep.py``. Here every other
registered op with a gradient rule must have a sample call in ``SAMPLES`` (a function and its
inputs); an op that is a backward kernel is checked through ``gradgradcheck`` of the forward
op named in ``VIA_DOUBLE_BACKWARD``. A new OpDef without an entry fails
``test_every_op_has_a_sample``.
"""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F
from jtorch.autograd import gradcheck, gradgradcheck
from jtorch.kernels.registry import REGISTRY

POINTWISE = ("unary", "binary", "ternary")


_LSTM = jtorch.nn.LSTM(3, 2).double()


def _eig_parts(lam, v):
    """Eigenvalues as real pairs and |eigenvectors| (invariant under their phases)."""
    return jtorch.view_as_real(lam), v.abs()


def _r(*shape, seed=0, positive=False):
    a = np.random.default_rng(seed + sum(shape)).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    return jtorch.from_numpy(a).requires_grad_()


def _distinct(*shape, seed=0):
    """Values far apart (order statistics and maxima are smooth there)."""
    n = int(np.prod(shape))
    a = np.random.default_rng(seed).permutation(n).reshape(shape) * 0.37 + 0.1
    return jtorch.from_numpy(a.astype(np.float64)).requires_grad_()


_IDX = jtorch.tensor([2, 0, 2])
_MASK = jtorch.tensor([[True, False, True], [False, True, True]])

# op name -> (function, inputs)
SAMPLES = {
    "sum": (lambda x: x.sum(1), [_r(2, 3)]),
    "mean": (lambda x: x.mean((0, 1), keepdim=True), [_r(2, 3)]),
    "nansum": (lambda x: x.nansum(0), [_r(2, 3)]),
    "prod": (lambda x: x.prod(1), [_r(2, 3)]),
    "amax": (lambda x: x.amax(1), [_distinct(2, 3)]),
    "amin": (lambda x: x.amin(0), [_distinct(2, 3)]),
    "max": (lambda x: x.max(1).values, [_distinct(2, 3)]),
    "min": (lambda x: x.min(), [_distinct(2, 3)]),
    "sumsq": (lambda x: jtorch.linalg.vector_norm(x, 2, 1), [_r(2, 3)]),
    "norm_l1": (lambda x: x.norm(1, 1), [_r(2, 3)]),
    "norm_l2": (lambda x: x.norm(2), [_r(2, 3)]),
    "norm_linf": (lambda x: jtorch.linalg.vector_norm(x, float("inf"), 1), [_distinct(2, 3)]),
    "norm_lninf": (lambda x: jtorch.linalg.vector_norm(x, -float("inf"), 1), [_distinct(2, 3)]),
    "norm": (lambda x: x.norm(3.0, 1), [_r(2, 3, positive=True)]),
    "var": (lambda x: x.var(1), [_r(2, 3)]),
    "std": (lambda x: x.std(0, correction=0), [_r(2, 3)]),
    "var_mean": (lambda x: jtorch.var_mean(x, 1), [_r(2, 3)]),
    "std_mean": (lambda x: jtorch.std_mean(x, 1), [_r(2, 3)]),
    "nanmean": (lambda x: x.nanmean(1), [_r(2, 3)]),
    "logsumexp": (lambda x: x.logsumexp(1), [_r(2, 3)]),
    "softmax": (lambda x: x.softmax(1), [_r(2, 3)]),
    "log_softmax": (lambda x: x.log_softmax(0), [_r(2, 3)]),
    # the backward rows (last dim, contiguous: the compiled kernel), with gradients in g and y
    "_softmax_backward_data": (lambda g, y: jtorch.ops.reduction.softmax_backward(g, y, 1, False),
                               [_r(2, 3), _r(2, 3, seed=1)]),
    "_log_softmax_backward_data": (
        lambda g, y: jtorch.ops.reduction.softmax_backward(g, y, 1, True),
        [_r(2, 3), _r(2, 3, seed=1)]),
    "cumsum": (lambda x: x.cumsum(1), [_r(2, 3)]),
    "cumprod": (lambda x: x.cumprod(1), [_r(2, 3)]),
    "logcumsumexp": (lambda x: x.logcumsumexp(1), [_r(2, 3)]),
    "cummax": (lambda x: x.cummax(1).values, [_distinct(2, 3)]),
    "cummin": (lambda x: x.cummin(1).values, [_distinct(2, 3)]),
    "sort": (lambda x: x.sort(1).values, [_distinct(2, 3)]),
    "topk": (lambda x: x.topk(2, 1).values, [_distinct(2, 3)]),
    "kthvalue": (lambda x: x.kthvalue(2, 1).values, [_distinct(2, 3)]),
    "median": (lambda x: x.median(1).values, [_distinct(2, 3)]),
    "nanmedian": (lambda x: x.nanmedian(), [_distinct(2, 3)]),
    "mode": (lambda x: x.mode(1).values, [_distinct(2, 3)]),
    "view": (lambda x: x.reshape(3, 2), [_r(2, 3)]),
    "permute": (lambda x: x.permute(1, 0), [_r(2, 3)]),
    "expand": (lambda x: x.expand(2, 2, 3), [_r(2, 3)]),
    "slice": (lambda x: x[:, 1:], [_r(2, 3)]),
    "select": (lambda x: x[1], [_r(2, 3)]),
    "diagonal": (lambda x: x.diagonal(1), [_r(3, 3)]),
    "as_strided": (lambda x: x.as_strided((2, 2), (1, 2), 1), [_r(2, 3)]),
    "index": (lambda x: x[_IDX], [_r(3, 2)]),
    "cat": (lambda x, y: jtorch.cat([x, y], 1), [_r(2, 3), _r(2, 2)]),
    "_to_copy": (lambda x: x.to(jtorch.float64, copy=True), [_r(2, 3)]),
    "clone": (lambda x: x.t().clone(), [_r(2, 3)]),
    "t": (lambda x: x.t() * 1, [_r(2, 3)]),
    "t_": (lambda x: x.clone().t_(), [_r(2, 3)]),
    "transpose": (lambda x: x.transpose(0, 2) * 1, [_r(2, 3, 2)]),
    "transpose_": (lambda x: x.clone().transpose_(0, 1), [_r(2, 3)]),
    "squeeze": (lambda x: x.squeeze(1) * 1, [_r(2, 1, 3)]),
    "squeeze_": (lambda x: x.clone().squeeze_(1), [_r(2, 1, 3)]),
    "unsqueeze": (lambda x: x.unsqueeze(1) * 1, [_r(2, 3)]),
    "unsqueeze_": (lambda x: x.clone().unsqueeze_(0), [_r(2, 3)]),
    "as_strided_": (lambda x: x.clone().as_strided_((2, 2), (1, 2)), [_r(2, 3)]),
    "narrow": (lambda x: x.narrow(1, 1, 2) * 1, [_r(2, 3)]),
    "split": (lambda x: x.split(2, 1)[1] * 2 + x.split(2, 1)[0].sum(), [_r(2, 3)]),
    "split_with_sizes": (lambda x: jtorch.cat([p * (i + 1) for i, p in
                                               enumerate(x.split([1, 2], 1))], 1), [_r(2, 3)]),
    "chunk": (lambda x: x.chunk(2, 1)[0] * 1, [_r(2, 4)]),
    "unbind": (lambda x: x.unbind(1)[2] * 3, [_r(2, 3)]),
    "unfold": (lambda x: x.unfold(1, 2, 1) * 1, [_r(2, 4)]),
    "tril_": (lambda x: x.clone().tril_(), [_r(3, 3)]),
    "triu_": (lambda x: x.clone().triu_(1), [_r(3, 3)]),
    "stack": (lambda x, y: jtorch.stack([x, y], 1), [_r(2, 3), _r(2, 3, seed=1)]),
    "flip": (lambda x: x.flip(1), [_r(2, 3)]),
    "roll": (lambda x: x.roll(1, 1), [_r(2, 3)]),
    "repeat": (lambda x: x.repeat(2, 1), [_r(2, 3)]),
    "tril": (lambda x: x.tril(), [_r(3, 3)]),
    "triu": (lambda x: x.triu(1), [_r(3, 3)]),
    "gather": (lambda x: x.gather(1, jtorch.tensor([[0, 2], [1, 1]])), [_r(2, 3)]),
    "scatter": (lambda x, s: x.scatter(1, jtorch.tensor([[0, 2], [1, 0]]), s),
                [_r(2, 3), _r(2, 2)]),
    "scatter_add": (lambda x, s: x.scatter_add(1, jtorch.tensor([[0, 0], [1, 2]]), s),
                    [_r(2, 3), _r(2, 2)]),
    "scatter_reduce": (lambda x, s: x.scatter_reduce(1, jtorch.tensor([[0, 0], [1, 2]]), s,
                                                     "prod"), [_r(2, 3), _r(2, 2)]),
    "index_select": (lambda x: x.index_select(0, _IDX), [_r(3, 2)]),
    "index_add": (lambda x, s: x.index_add(0, _IDX, s, alpha=2), [_r(3, 2), _r(3, 2)]),
    "index_copy": (lambda x, s: x.index_copy(0, jtorch.tensor([2, 0]), s),
                   [_r(3, 2), _r(2, 2)]),
    "index_fill": (lambda x: x.index_fill(1, jtorch.tensor([1]), 0.5), [_r(2, 3)]),
    "index_put": (lambda x, v: x.index_put((_IDX,), v, accumulate=True), [_r(3, 2), _r(3, 2)]),
    "masked_fill": (lambda x: x.masked_fill(_MASK, 2.0), [_r(2, 3)]),
    "masked_scatter": (lambda x, s: x.masked_scatter(_MASK, s), [_r(2, 3), _r(2, 3)]),
    "masked_select": (lambda x: x.masked_select(_MASK), [_r(2, 3)]),
    "take": (lambda x: x.take(jtorch.tensor([5, 0, 5])), [_r(2, 3)]),
    "mm": (lambda a, b: a @ b, [_r(2, 3), _r(3, 2)]),
    "bmm": (lambda a, b: jtorch.bmm(a, b), [_r(2, 2, 3), _r(2, 3, 2)]),
    # the fused LSTM layer (nn.LSTM on float64), its weights as inputs
    "lstm_layer": (lambda x, w_ih, w_hh, b_ih, b_hh: jtorch.func.functional_call(
        _LSTM, {"weight_ih_l0": w_ih, "weight_hh_l0": w_hh, "bias_ih_l0": b_ih,
                "bias_hh_l0": b_hh}, (x,))[0],
                   [_r(3, 2, 3), _r(8, 3, seed=1), _r(8, 2, seed=2), _r(8, seed=3), _r(8, seed=4)]),
    # batch dims that do not merge (the strided-heads path)
    "batched_matmul": (lambda a, b: (a * 1).transpose(0, 1) @ (b * 1).transpose(0, 1),
                       [_r(2, 3, 2, 4), _r(2, 3, 4, 2)]),
    "addmm": (lambda c, a, b: jtorch.addmm(c, a, b.t(), beta=0.5, alpha=-1.5),
              [_r(3), _r(2, 4), _r(3, 4)]),
    "linalg_svdvals": (lambda a: jtorch.linalg.svdvals(a), [_r(3, 2)]),
    # decompositions (torch's formulas): symmetric or well-conditioned inputs built inside
    "linalg_inv_ex": (lambda a: jtorch.linalg.inv(a), [_r(2, 3, 3)]),
    "linalg_det": (lambda a: jtorch.linalg.det(a), [_r(2, 3, 3)]),
    "linalg_slogdet": (lambda a: jtorch.linalg.slogdet(a).logabsdet, [_r(3, 3)]),
    "linalg_solve_ex": (lambda a, b: jtorch.linalg.solve(a, b), [_r(2, 3, 3), _r(3, 2)]),
    "linalg_cholesky_ex": (lambda a: jtorch.linalg.cholesky(a @ a.mT + jtorch.eye(3).double()),
                           [_r(2, 3, 3)]),
    "linalg_solve_triangular": (lambda a, b: jtorch.linalg.solve_triangular(
        a + jtorch.eye(3).double() * 3, b, upper=True), [_r(3, 3), _r(3, 2)]),
    "linalg_eigh": (lambda a: jtorch.linalg.eigh(a + a.mT), [_r(3, 3)]),
    "linalg_svd": (lambda a: [t.abs() for t in jtorch.linalg.svd(a, full_matrices=False)],
                   [_r(4, 3)]),
    "linalg_qr": (lambda a: jtorch.linalg.qr(a), [_r(4, 3)]),
    "linalg_lu_factor_ex": (lambda a: jtorch.linalg.lu_factor_ex(a).LU, [_r(2, 3, 3)]),
    "linalg_eig": (lambda a: _eig_parts(*jtorch.linalg.eig(a)), [_r(2, 3, 3)]),
    "segment_reduce": (lambda x: jtorch.segment_reduce(x, "prod", lengths=jtorch.tensor(
        [[2, 0, 1], [1, 1, 1]]), axis=1, initial=1.5), [_r(2, 3, 2)]),
    "view_as_real": (lambda x: jtorch.view_as_real(jtorch.view_as_complex(x) * (1 + 2j)),
                     [_r(2, 3, 2)]),
    "view_as_complex": (lambda x: jtorch.view_as_complex(x).abs(), [_r(2, 3, 2)]),
    "cdist": (lambda a, b: jtorch.cdist(a, b), [_r(2, 3), _r(3, 3)]),
    "embedding": (lambda w: F.embedding(jtorch.tensor([1, 0, 1]), w), [_r(3, 2)]),
    "copy_": (lambda x, y: (x * 1).copy_(y), [_r(2, 3), _r(3)]),
    "fill_": (lambda x, v: (x * 1).fill_(v), [_r(2, 3), _r()]),
    "convolution": (lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=(1, 2)),
                    [_r(1, 2, 4, 4), _r(3, 2, 3, 3), _r(3)]),
    "im2col": (lambda x: F.unfold(x, 2, padding=1), [_r(1, 2, 3, 3)]),
    "col2im": (lambda x: F.fold(x, (3, 3), 2), [_r(1, 8, 4)]),
    "max_pool2d_with_indices": (lambda x: F.max_pool2d(x, 2, 1), [_distinct(1, 2, 3, 3)]),
    "max_pool3d_with_indices": (lambda x: F.max_pool3d(x, 2), [_distinct(1, 1, 2, 2, 4)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2, 1, 1), [_r(1, 2, 3, 3)]),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 2), [_r(1, 1, 2, 2, 4)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, 2), [_r(1, 2, 3, 3)]),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, 1), [_r(1, 1, 2, 2, 3)]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, 2), [_distinct(1, 2, 3, 3)]),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, 1), [_distinct(1, 1, 2, 2, 3)]),
    "max_unpool2d": (lambda x: F.max_unpool2d(x, jtorch.tensor([[[[0, 3], [9, 14]]]]), 2),
                     [_r(1, 1, 2, 2)]),
    "max_unpool3d": (lambda x: F.max_unpool3d(x, jtorch.tensor([[[[[0]]]]]), 2),
                     [_r(1, 1, 1, 1, 1)]),
    "constant_pad_nd": (lambda x: F.pad(x, (1, 2)), [_r(2, 3)]),
    "resample_gather": (lambda x: F.interpolate(x, scale_factor=2), [_r(1, 1, 3)]),
    "resample_taps": (lambda x: F.interpolate(x, size=(3, 5), mode="bilinear"),
                      [_r(1, 1, 2, 3)]),
    "grid_sampler_2d": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                        [_r(1, 1, 3, 3), jtorch.from_numpy(np.random.default_rng(0).uniform(
                            -0.9, 0.9, (1, 2, 2, 2))).requires_grad_()]),
    "grid_sampler_3d": (lambda x, g: F.grid_sample(x, g, padding_mode="reflection",
                                                   align_corners=False),
                        [_r(1, 1, 2, 3, 3), jtorch.from_numpy(np.random.default_rng(0).uniform(
                            -1.2, 1.2, (1, 2, 2, 2, 3))).requires_grad_()]),
    "native_layer_norm": (lambda x, w, b: F.layer_norm(x, (3,), w, b), [_r(2, 3), _r(3), _r(3)]),
    "nll_loss": (lambda x: F.nll_loss(x, jtorch.tensor([1, 0, -100, 2]),
                                      jtorch.tensor([0.5, 2.0, 1.5], dtype=jtorch.float64)),
                 [_r(4, 3)]),
    "nll_loss2d": (lambda x: F.nll_loss(x, jtorch.tensor([[1, 0], [-100, 2]]),
                                        jtorch.tensor([0.5, 2.0, 1.5], dtype=jtorch.float64)),
                   [_r(2, 3, 2)]),
    "_ctc_loss": (lambda x: F.ctc_loss(x.log_softmax(2), jtorch.tensor([[1, 2], [3, 3]]), (5, 4),
                                       (2, 2), reduction="sum"), [_r(5, 2, 4)]),
    "_grouped_mm": (lambda a, b: jtorch.kernels.defs.grouped_mm.grouped_mm_op(
        a, b, jtorch.tensor([2, 5], dtype=jtorch.int32)), [_r(6, 3), _r(2, 3, 4)]),
    # sparse products over a 3x4 CSR structure (rows hold columns {0, 3}, {}, {1, 2, 3})
    "_sparse_csr_mm": (lambda v, d: jtorch.kernels.defs.sparse.csr_mm_op(
        jtorch.tensor([0, 2, 2, 5]), jtorch.tensor([0, 3, 1, 2, 3]), v, d), [_r(5), _r(4, 2)]),
    "_sparse_csr_sddmm": (lambda a, b: jtorch.kernels.defs.sparse.csr_sddmm_op(
        jtorch.tensor([0, 2, 2, 5]), jtorch.tensor([0, 3, 1, 2, 3]), a, b), [_r(3, 2), _r(4, 2)]),
    # FFTs between real tensors (promoted in, c2r transforms out): tests/fft checks each
    # transform's rule against torch's with complex cotangents
    "_fft_c2c": (lambda x: jtorch.fft.irfft(jtorch.fft.fftn(x, s=(4, 3), norm="ortho"), n=5),
                 [_r(3, 4)]),
    "_fft_r2c": (lambda x: jtorch.fft.irfft(jtorch.fft.rfft(x, n=7) * 2, n=5)
                 + jtorch.fft.hfft(jtorch.fft.ihfft(x, n=4, dim=0), n=3, dim=0).sum(0), [_r(3, 5)]),
    "_fft_c2r": (lambda x: jtorch.fft.hfftn(jtorch.fft.rfft(x), s=(3, 7), norm="forward"),
                 [_r(2, 6)]),
    "binary_cross_entropy": (
        lambda x: F.binary_cross_entropy(x, jtorch.tensor([[0.0, 1.0, 0.3], [1.0, 0.0, 0.5]],
                                                          dtype=jtorch.float64)),
        [jtorch.from_numpy(np.random.default_rng(1).uniform(0.1, 0.9, (2, 3))).requires_grad_()]),
}
# backward kernels: checked by gradgradcheck of their forward op
VIA_DOUBLE_BACKWARD = {
    "lstm_layer_backward": "lstm_layer",
    "nll_loss_backward": "nll_loss", "nll_loss2d_backward": "nll_loss2d",
    "convolution_backward_weight": "convolution", "avg_pool2d_backward": "avg_pool2d",
    "avg_pool3d_backward": "avg_pool3d", "adaptive_avg_pool2d_backward": "adaptive_avg_pool2d",
    "adaptive_avg_pool3d_backward": "adaptive_avg_pool3d",
    "adaptive_max_pool2d_backward": "adaptive_max_pool2d",
    "adaptive_max_pool3d_backward": "adaptive_max_pool3d",
    "max_pool2d_with_indices_backward": "max_pool2d_with_indices",
    "max_pool3d_with_indices_backward": "max_pool3d_with_indices",
    "resample_gather_backward": "resample_gather", "resample_taps_backward": "resample_taps",
}
# differentiable OpDefs without a rule of their own, and why
EXEMPT = {
    "normal": "tensor-parameter normal(): zero gradients, as torch (NormalBackward1/2/3)",
    "aminmax": "recorded as amax/amin nodes",
    "complex": "complex-valued gradients are not supported yet",
    "grid_sampler_2d_backward": "no double backward for grid_sample yet",
    "grid_sampler_3d_backward": "no double backward for grid_sample yet",
    "_ctc_loss_backward": "no double backward, as torch (_ctc_loss_backward: not implemented)",
    "_standard_gamma": "random draws whose gradient is the implicit reparameterisation, not a "
                       "derivative of the sampler: tests/distributions/test_dist_samplers.py "
                       "checks it against finite differences of the CDF",
    "poisson": "zero gradient, as torch's (PoissonBackward0)",
    **dict.fromkeys(["binomial", "_sample_dirichlet", "_standard_gamma_grad", "_dirichlet_grad",
                     "linalg_ldl_factor_ex", "linalg_ldl_solve"],
                    "no derivative in torch either (not_implemented): backward raises its error"),
}


def _ops():
    return sorted(n for n, op in REGISTRY.items()
                  if op.family not in POINTWISE and op.differentiable)


def test_every_op_has_a_sample():
    missing = [n for n in _ops() if n not in SAMPLES and n not in VIA_DOUBLE_BACKWARD
               and n not in EXEMPT]
    assert not missing, f"give these OpDefs a gradcheck sample: {missing}"
    stale = [n for n in [*SAMPLES, *VIA_DOUBLE_BACKWARD, *EXEMPT] if n not in REGISTRY]
    assert not stale, f"samples name ops that are not registered: {stale}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_gradcheck(name):
    fn, inputs = SAMPLES[name]
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", sorted(set(VIA_DOUBLE_BACKWARD.values()) |
                                        {"mm", "addmm", "softmax", "log_softmax", "logsumexp",
                                         "var", "cumprod", "index_put", "as_strided", "embedding",
                                         "cdist", "native_layer_norm"}))
def test_gradgradcheck(name):
    fn, inputs = SAMPLES[name]
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
