"""Calls that sweep the public surface in ``test_op_path.py``.

``PATTERNS``: for each public callable ("torch:<name>", "method:<name>", "F:<name>" for
``nn.functional``), the operands of a call that runs: ``x``/``y``/``z`` float32 tensors,
``i`` int64, ``b`` bool, numbers as written. The sweep runs it over contiguous, non-contiguous,
0-d and 0-size operands. Regenerate entries with ``test_op_path._discover``.
``SAMPLES``: hand-written calls for what a pattern cannot express (other shapes, index tensors,
lists, keyword forms, gradients; also "linalg:<name>" and "optim:<Class>", namespaces the
surface sweep does not list); ``FACTORIES``: calls of the factories on a device;
``NOT_SWEPT``: names left out, each with the reason.
"""

from __future__ import annotations

import numpy as np

import jtorch

PATTERNS = {
    "method:get_device": "x",
    # -- special functions (ops/special.py; jtorch.special's own ops in SAMPLES) --
    "torch:lgamma": "x", "method:lgamma": "x", "method:lgamma_": "x",
    "torch:digamma": "x", "method:digamma": "x", "method:digamma_": "x",
    "torch:polygamma": "1 x", "method:polygamma": "x 1", "method:polygamma_": "x 1",
    "torch:mvlgamma": "x 1", "method:mvlgamma": "x 1", "method:mvlgamma_": "x 1",
    "torch:i0": "x", "torch:i0_": "x", "method:i0": "x", "method:i0_": "x",
    "torch:frexp": "x", "method:frexp": "x",
    "torch:nextafter": "x y", "method:nextafter": "x y", "method:nextafter_": "x y",
    # -- top-level spellings and numeric utilities (ops/extras.py, ops/numeric.py) --
    "torch:alias_copy": "x", "torch:detach_copy": "x", "torch:diagonal_copy": "x",
    "torch:squeeze_copy": "x", "torch:t_copy": "x", "torch:unbind_copy": "x",
    "torch:slice_copy": "x", "torch:split_copy": "x 1", "torch:select_copy": "x 1 1",
    "torch:transpose_copy": "x 1 1", "torch:unsqueeze_copy": "x 1", "torch:view_copy": "x -1",
    "torch:quantile": "x 0.5", "method:quantile": "x 0.5",
    "torch:nanquantile": "x 0.5", "method:nanquantile": "x 0.5",
    "torch:angle": "x", "method:angle": "x", "torch:isreal": "x", "method:isreal": "x",
    "torch:binary_cross_entropy_with_logits": "x y", "torch:celu": "x", "torch:celu_": "x",
    "torch:selu": "x", "torch:selu_": "x", "torch:threshold": "x 1 1", "torch:threshold_": "x 1 1",
    "torch:hardshrink": "x", "method:hardshrink": "x", "torch:pdist": "x",
    "torch:kl_div": "x y", "torch:hinge_embedding_loss": "x y",
    "torch:margin_ranking_loss": "x y z", "torch:triplet_margin_loss": "x y z",
    "torch:group_norm": "x 1", "torch:embedding": "x i",
    "torch:channel_shuffle": "x 2", "torch:native_channel_shuffle": "x 2",
    "torch:clamp_": "x y", "torch:clamp_max_": "x y", "torch:clamp_min_": "x y", "torch:clip_": "x y",
    "torch:xlogy_": "x y", "torch:gcd_": "i i", "torch:lcm_": "i i", "torch:logit_": "x",
    "torch:nan_to_num_": "x", "torch:fill": "x 1", "torch:fill_": "x 1", "torch:zero_": "x",
    "torch:detach": "x", "torch:detach_": "x", "torch:get_device": "x",
    "torch:is_conj": "x", "torch:is_neg": "x", "method:is_neg": "x", "torch:resolve_neg": "x",
    "method:resolve_neg": "x", "torch:is_signed": "x", "torch:is_storage": "x",
    "torch:is_same_size": "x y", "method:is_same_size": "x y", "torch:is_inference": "x",
    "method:is_inference": "x", "torch:typename": "x",
    "torch:unsafe_chunk": "x 1", "method:unsafe_chunk": "x 1", "torch:unsafe_split": "x 1",
    "method:unsafe_split": "x 1",
    "torch:diff": "x", "method:diff": "x", "torch:cross": "x y", "method:cross": "x y",
    "torch:cov": "x", "method:cov": "x", "torch:corrcoef": "x", "method:corrcoef": "x",
    "torch:trapezoid": "x", "torch:trapz": "x", "torch:cumulative_trapezoid": "x",
    "torch:dist": "x y", "method:dist": "x y", "torch:isin": "x y", "torch:searchsorted": "x y",
    "torch:ldexp": "x y", "method:ldexp": "x y", "torch:ldexp_": "x y", "method:ldexp_": "x y",
    "method:fill_diagonal_": "x 1", "torch:slice_scatter": "x y", "method:slice_scatter": "x y",
    "F:adaptive_avg_pool1d": "x 1",
    "F:adaptive_max_pool1d": "x 1",
    "F:adaptive_max_pool1d_with_indices": "x 1",
    "F:alpha_dropout": "x",
    "F:feature_alpha_dropout": "x",
    "F:avg_pool1d": "x 1",
    "F:binary_cross_entropy_with_logits": "x y",
    "F:celu": "x",
    "F:celu_": "x",
    "F:cosine_similarity": "x y",
    "F:cross_entropy": "x y",
    "F:dropout": "x",
    "F:dropout1d": "x",
    "F:dropout2d": "x 0",
    "F:dropout3d": "x 0",
    "F:elu": "x",
    "F:elu_": "x",
    "F:embedding": "i i",
    "F:embedding_bag": "i i",
    "F:fold": "x 2 1",
    "F:gelu": "x",
    "F:glu": "x",
    "F:group_norm": "x 1",
    "F:hardshrink": "x",
    "F:hardsigmoid": "x",
    "F:hardswish": "x",
    "F:hardtanh": "x",
    "F:hardtanh_": "x",
    "F:hinge_embedding_loss": "x y",
    "F:huber_loss": "x y",
    "F:kl_div": "x y",
    "F:l1_loss": "x y",
    "F:leaky_relu": "x",
    "F:leaky_relu_": "x",
    "F:linear": "x y",
    "F:log_softmax": "x",
    "F:logsigmoid": "x",
    "F:lp_pool1d": "x 1 1",
    "F:margin_ranking_loss": "x y z",
    "F:max_pool1d": "x 1",
    "F:max_pool1d_with_indices": "x 1",
    "F:mish": "x",
    "F:mse_loss": "x y",
    "F:multilabel_soft_margin_loss": "x y",
    "F:normalize": "x",
    "F:pairwise_distance": "x y",
    "F:poisson_nll_loss": "x y",
    "F:relu": "x",
    "F:relu6": "x",
    "F:relu_": "x",
    "F:rrelu": "x",
    "F:rrelu_": "x",
    "F:scaled_dot_product_attention": "x y z",
    "F:selu": "x",
    "F:selu_": "x",
    "F:sigmoid": "x",
    "F:silu": "x",
    "F:smooth_l1_loss": "x y",
    "F:soft_margin_loss": "x y",
    "F:softmax": "x",
    "F:softmin": "x",
    "F:softplus": "x",
    "F:softshrink": "x",
    "F:softsign": "x",
    "F:tanh": "x",
    "F:tanhshrink": "x",
    "F:threshold": "x 1 1",
    "F:threshold_": "x 1 1",
    "F:triplet_margin_loss": "x y z",
    "F:triplet_margin_with_distance_loss": "x y z",
    "method:abs": "x",
    "method:abs_": "x",
    "method:absolute": "x",
    "method:absolute_": "x",
    "method:acos": "x",
    "method:acos_": "x",
    "method:acosh": "x",
    "method:acosh_": "x",
    "method:add": "x y",
    "method:add_": "x y",
    "method:addcdiv": "x y z",
    "method:addcdiv_": "x y z",
    "method:addcmul": "x y z",
    "method:addcmul_": "x y z",
    "method:all": "x",
    "method:amax": "x",
    "method:amin": "x",
    "method:aminmax": "x",
    "method:any": "x",
    "method:arccos": "x",
    "method:arccos_": "x",
    "method:arccosh": "x",
    "method:arccosh_": "x",
    "method:arcsin": "x",
    "method:arcsin_": "x",
    "method:arcsinh": "x",
    "method:arcsinh_": "x",
    "method:arctan": "x",
    "method:arctan2": "x y",
    "method:arctan2_": "x y",
    "method:arctan_": "x",
    "method:arctanh": "x",
    "method:arctanh_": "x",
    "method:argmax": "x",
    "method:argmin": "x",
    "method:argsort": "x",
    "method:argwhere": "x",
    "method:as_strided": "x 1 1",
    "method:as_strided_": "x 1 1",
    "method:asin": "x",
    "method:asin_": "x",
    "method:asinh": "x",
    "method:asinh_": "x",
    "method:atan": "x",
    "method:atan2": "x y",
    "method:atan2_": "x y",
    "method:atan_": "x",
    "method:atanh": "x",
    "method:atanh_": "x",
    "method:bernoulli": "x 1",
    "method:bernoulli_": "x",
    "method:bitwise_and": "i i",
    "method:bitwise_and_": "i i",
    "method:bitwise_left_shift": "i i",
    "method:bitwise_left_shift_": "i i",
    "method:bitwise_not": "i",
    "method:bitwise_not_": "i",
    "method:bitwise_or": "i i",
    "method:bitwise_or_": "i i",
    "method:bitwise_right_shift": "i i",
    "method:bitwise_right_shift_": "i i",
    "method:bitwise_xor": "i i",
    "method:bitwise_xor_": "i i",
    "method:bool": "x",
    "method:byte": "x",
    "method:cauchy_": "x",
    "method:cdouble": "x",
    "method:ceil": "x",
    "method:ceil_": "x",
    "method:cfloat": "x",
    "method:char": "x",
    "method:chunk": "x 1",
    "method:clamp": "x y",
    "method:clamp_": "x y",
    "method:clamp_max": "x y",
    "method:clamp_max_": "x y",
    "method:clamp_min": "x y",
    "method:clamp_min_": "x y",
    "method:clip": "x y",
    "method:clip_": "x y",
    "method:clone": "x",
    "method:conj": "x",
    "method:conj_physical": "x",
    "method:contiguous": "x",
    "method:copy_": "x y",
    "method:copysign": "x y",
    "method:copysign_": "x y",
    "method:cos": "x",
    "method:cos_": "x",
    "method:cosh": "x",
    "method:cosh_": "x",
    "method:count_nonzero": "x",
    "method:cummax": "x 1",
    "method:cummin": "x 1",
    "method:cumprod": "x 1",
    "method:cumprod_": "x 1",
    "method:cumsum": "x 1",
    "method:cumsum_": "x 1",
    "method:data_ptr": "x",
    "method:deg2rad": "x",
    "method:deg2rad_": "x",
    "method:detach": "x",
    "method:detach_": "x",
    "method:diag": "x",
    "method:diag_embed": "x",
    "method:diagflat": "x",
    "method:diagonal": "x",
    "method:dim": "x",
    "method:div": "x y",
    "method:div_": "x y",
    "method:divide": "x y",
    "method:divide_": "x y",
    "method:double": "x",
    "method:element_size": "x",
    "method:eq": "x y",
    "method:eq_": "x y",
    "method:erf": "x",
    "method:erf_": "x",
    "method:erfc": "x",
    "method:erfc_": "x",
    "method:erfinv": "x",
    "method:erfinv_": "x",
    "method:exp": "x",
    "method:exp2": "x",
    "method:exp2_": "x",
    "method:exp_": "x",
    "method:expand_as": "x y",
    "method:expm1": "x",
    "method:expm1_": "x",
    "method:exponential_": "x",
    "method:fill_": "x 1",
    "method:fix": "x",
    "method:fix_": "x",
    "method:flatten": "x",
    "method:flip": "x",
    "method:fliplr": "x",
    "method:flipud": "x",
    "method:float": "x",
    "method:float_power": "x y",
    "method:floor": "x",
    "method:floor_": "x",
    "method:floor_divide": "x y",
    "method:floor_divide_": "x y",
    "method:fmax": "x y",
    "method:fmax_": "x y",
    "method:fmin": "x y",
    "method:fmin_": "x y",
    "method:fmod": "x y",
    "method:fmod_": "x y",
    "method:frac": "x",
    "method:frac_": "x",
    "method:gcd": "i i",
    "method:gcd_": "i i",
    "method:ge": "x y",
    "method:ge_": "x y",
    "method:geometric_": "x 0.5",
    "method:greater": "x y",
    "method:greater_": "x y",
    "method:greater_equal": "x y",
    "method:greater_equal_": "x y",
    "method:gt": "x y",
    "method:gt_": "x y",
    "method:half": "x",
    "method:bfloat16": "x",
    "method:heaviside": "x y",
    "method:heaviside_": "x y",
    "method:hsplit": "x 1",
    "method:hypot": "x y",
    "method:hypot_": "x y",
    "method:inner": "x y",
    "method:int": "x",
    "method:is_complex": "x",
    "method:is_conj": "x",
    "method:is_contiguous": "x",
    "method:is_floating_point": "x",
    "method:is_signed": "x",
    "method:isclose": "x y",
    "method:isfinite": "x",
    "method:isinf": "x",
    "method:isnan": "x",
    "method:isneginf": "x",
    "method:isposinf": "x",
    "method:kron": "x y",
    "method:kthvalue": "x 1",
    "method:lcm": "i i",
    "method:lcm_": "i i",
    "method:le": "x y",
    "method:le_": "x y",
    "method:lerp": "x y z",
    "method:lerp_": "x y z",
    "method:less": "x y",
    "method:less_": "x y",
    "method:less_equal": "x y",
    "method:less_equal_": "x y",
    "method:log": "x",
    "method:log10": "x",
    "method:log10_": "x",
    "method:log1p": "x",
    "method:log1p_": "x",
    "method:log2": "x",
    "method:log2_": "x",
    "method:log_": "x",
    "method:log_normal_": "x",
    "method:log_softmax": "x 1",
    "method:logaddexp": "x y",
    "method:logaddexp2": "x y",
    "method:logcumsumexp": "x 1",
    "method:logical_and": "x y",
    "method:logical_and_": "x y",
    "method:logical_not": "x",
    "method:logical_not_": "x",
    "method:logical_or": "x y",
    "method:logical_or_": "x y",
    "method:logical_xor": "x y",
    "method:logical_xor_": "x y",
    "method:logit": "x",
    "method:logit_": "x",
    "method:logsumexp": "x",
    "method:long": "x",
    "method:lt": "x y",
    "method:lt_": "x y",
    "method:masked_select": "x b",
    "method:max": "x",
    "method:maximum": "x y",
    "method:maximum_": "x y",
    "method:mean": "x",
    "method:median": "x",
    "method:min": "x",
    "method:minimum": "x y",
    "method:minimum_": "x y",
    "method:mode": "x",
    "method:moveaxis": "x 1 1",
    "method:movedim": "x 1 1",
    "method:msort": "x",
    "method:mul": "x y",
    "method:mul_": "x y",
    "method:multinomial": "x 1",
    "method:multiply": "x y",
    "method:multiply_": "x y",
    "method:nan_to_num": "x",
    "method:nan_to_num_": "x",
    "method:nanmean": "x",
    "method:nanmedian": "x",
    "method:nansum": "x",
    "method:ndimension": "x",
    "method:ne": "x y",
    "method:ne_": "x y",
    "method:neg": "x",
    "method:neg_": "x",
    "method:negative": "x",
    "method:negative_": "x",
    "method:nelement": "x",
    "method:new_empty": "x",
    "method:new_full": "x 1 1",
    "method:new_ones": "x",
    "method:new_tensor": "x y",
    "method:new_zeros": "x",
    "method:nonzero": "x",
    "method:norm": "x",
    "method:normal_": "x",
    "method:not_equal": "x y",
    "method:not_equal_": "x y",
    "method:numel": "x",
    "method:permute": "x 0 1",
    "method:positive": "x",
    "method:pow": "x y",
    "method:pow_": "x y",
    "method:prod": "x",
    "method:rad2deg": "x",
    "method:rad2deg_": "x",
    "method:random_": "x",
    "method:ravel": "x",
    "method:reciprocal": "x",
    "method:reciprocal_": "x",
    "method:register_post_accumulate_grad_hook": "x y",
    "method:relu": "x",
    "method:relu_": "x",
    "method:remainder": "x y",
    "method:remainder_": "x y",
    "method:repeat": "x 1 1",
    "method:repeat_interleave": "x 1",
    "method:requires_grad_": "x",
    "method:reshape": "x -1",
    "method:reshape_as": "x y",
    "method:resolve_conj": "x",
    "method:roll": "x 1",
    "method:rot90": "x",
    "method:round": "x",
    "method:round_": "x",
    "method:rsqrt": "x",
    "method:rsqrt_": "x",
    "method:select": "x 1 1",
    "method:sgn": "x",
    "method:sgn_": "x",
    "method:short": "x",
    "method:sigmoid": "x",
    "method:sigmoid_": "x",
    "method:sign": "x",
    "method:sign_": "x",
    "method:signbit": "x",
    "method:sin": "x",
    "method:sin_": "x",
    "method:sinc": "x",
    "method:sinc_": "x",
    "method:sinh": "x",
    "method:sinh_": "x",
    "method:size": "x",
    "method:softmax": "x 1",
    "method:sort": "x",
    "method:split": "x 1",
    "method:sqrt": "x",
    "method:sqrt_": "x",
    "method:square": "x",
    "method:square_": "x",
    "method:squeeze": "x",
    "method:squeeze_": "x",
    "method:std": "x",
    "method:storage_offset": "x",
    "method:stride": "x",
    "method:sub": "x y",
    "method:sub_": "x y",
    "method:subtract": "x y",
    "method:subtract_": "x y",
    "method:sum": "x",
    "method:swapaxes": "x 1 1",
    "method:swapdims": "x 1 1",
    "method:t": "x",
    "method:t_": "x",
    "method:take": "x i",
    "method:take_along_dim": "x i",
    "method:tan": "x",
    "method:tan_": "x",
    "method:tanh": "x",
    "method:tanh_": "x",
    "method:tensor_split": "x 1",
    "method:tile": "x",
    "method:to": "x",
    "method:topk": "x 1",
    "method:trace": "x",
    "method:transpose": "x 1 1",
    "method:transpose_": "x 1 1",
    "method:tril": "x",
    "method:tril_": "x",
    "method:triu": "x",
    "method:triu_": "x",
    "method:true_divide": "x y",
    "method:true_divide_": "x y",
    "method:trunc": "x",
    "method:trunc_": "x",
    "method:type": "x",
    "method:type_as": "x y",
    "method:unbind": "x",
    "method:uniform_": "x",
    "method:unique": "x",
    "method:unique_consecutive": "x",
    "method:unsqueeze": "x 1",
    "method:unsqueeze_": "x 1",
    "method:untyped_storage": "x",
    "method:var": "x",
    "method:view": "x -1",
    "method:view_as": "x y",
    "method:vsplit": "x 1",
    "method:xlogy": "x y",
    "method:xlogy_": "x y",
    "method:zero_": "x",
    "torch:abs": "x",
    "torch:abs_": "x",
    "torch:absolute": "x",
    "torch:absolute_": "x",
    "torch:acos": "x",
    "torch:acos_": "x",
    "torch:acosh": "x",
    "torch:acosh_": "x",
    "torch:adaptive_avg_pool1d": "x 1",
    "torch:adaptive_max_pool1d": "x 1",
    "torch:add": "x y",
    "torch:addcdiv": "x y z",
    "torch:addcmul": "x y z",
    "torch:all": "x",
    "torch:amax": "x",
    "torch:amin": "x",
    "torch:aminmax": "x",
    "torch:any": "x",
    "torch:arccos": "x",
    "torch:arccos_": "x",
    "torch:arccosh": "x",
    "torch:arccosh_": "x",
    "torch:arcsin": "x",
    "torch:arcsin_": "x",
    "torch:arcsinh": "x",
    "torch:arcsinh_": "x",
    "torch:arctan": "x",
    "torch:arctan2": "x y",
    "torch:arctan_": "x",
    "torch:arctanh": "x",
    "torch:arctanh_": "x",
    "torch:argmax": "x",
    "torch:argmin": "x",
    "torch:argsort": "x",
    "torch:argwhere": "x",
    "torch:as_strided": "x 1 1",
    "torch:as_tensor": "x",
    "torch:asarray": "x",
    "torch:asin": "x",
    "torch:asin_": "x",
    "torch:asinh": "x",
    "torch:asinh_": "x",
    "torch:atan": "x",
    "torch:atan2": "x y",
    "torch:atan_": "x",
    "torch:atanh": "x",
    "torch:atanh_": "x",
    "torch:atleast_1d": "x",
    "torch:atleast_2d": "x",
    "torch:atleast_3d": "x",
    "torch:avg_pool1d": "x 1",
    "torch:bernoulli": "x 1",
    "torch:bitwise_and": "i i",
    "torch:bitwise_left_shift": "i i",
    "torch:bitwise_not": "i",
    "torch:bitwise_not_": "i",
    "torch:bitwise_or": "i i",
    "torch:bitwise_right_shift": "i i",
    "torch:bitwise_xor": "i i",
    "torch:block_diag": "x",
    "torch:broadcast_tensors": "x",
    "torch:cdist": "x y",
    "torch:ceil": "x",
    "torch:ceil_": "x",
    "torch:chunk": "x 1",
    "torch:clamp": "x y",
    "torch:clamp_max": "x y",
    "torch:clamp_min": "x y",
    "torch:clip": "x y",
    "torch:clone": "x",
    "torch:complex": "x y",
    "torch:conj": "x",
    "torch:conj_physical": "x",
    "torch:copysign": "x y",
    "torch:cos": "x",
    "torch:cos_": "x",
    "torch:cosh": "x",
    "torch:cosh_": "x",
    "torch:cosine_similarity": "x y",
    "torch:count_nonzero": "x",
    "torch:cummax": "x 1",
    "torch:cummin": "x 1",
    "torch:cumprod": "x 1",
    "torch:cumsum": "x 1",
    "torch:deg2rad": "x",
    "torch:deg2rad_": "x",
    "torch:diag": "x",
    "torch:diag_embed": "x",
    "torch:diagflat": "x",
    "torch:diagonal": "x",
    "torch:div": "x y",
    "torch:divide": "x y",
    "torch:empty_like": "x",
    "torch:eq": "x y",
    "torch:erf": "x",
    "torch:erf_": "x",
    "torch:erfc": "x",
    "torch:erfc_": "x",
    "torch:erfinv": "x",
    "torch:erfinv_": "x",
    "torch:exp": "x",
    "torch:exp2": "x",
    "torch:exp2_": "x",
    "torch:exp_": "x",
    "torch:expm1": "x",
    "torch:expm1_": "x",
    "torch:fix": "x",
    "torch:fix_": "x",
    "torch:flatten": "x",
    "torch:flip": "x 1",
    "torch:fliplr": "x",
    "torch:flipud": "x",
    "torch:float_power": "x y",
    "torch:floor": "x",
    "torch:floor_": "x",
    "torch:floor_divide": "x y",
    "torch:fmax": "x y",
    "torch:fmin": "x y",
    "torch:fmod": "x y",
    "torch:frac": "x",
    "torch:frac_": "x",
    "torch:full_like": "x 1",
    "torch:gcd": "i i",
    "torch:ge": "x y",
    "torch:greater": "x y",
    "torch:greater_equal": "x y",
    "torch:gt": "x y",
    "torch:heaviside": "x y",
    "torch:hsplit": "x 1",
    "torch:hypot": "x y",
    "torch:inner": "x y",
    "torch:is_complex": "x",
    "torch:is_floating_point": "x",
    "torch:is_tensor": "x",
    "torch:isclose": "x y",
    "torch:isfinite": "x",
    "torch:isinf": "x",
    "torch:isnan": "x",
    "torch:isneginf": "x",
    "torch:isposinf": "x",
    "torch:kron": "x y",
    "torch:kthvalue": "x 1",
    "torch:lcm": "i i",
    "torch:le": "x y",
    "torch:lerp": "x y z",
    "torch:less": "x y",
    "torch:less_equal": "x y",
    "torch:linear": "x y",
    "torch:log": "x",
    "torch:log10": "x",
    "torch:log10_": "x",
    "torch:log1p": "x",
    "torch:log1p_": "x",
    "torch:log2": "x",
    "torch:log2_": "x",
    "torch:log_": "x",
    "torch:log_softmax": "x 1",
    "torch:logaddexp": "x y",
    "torch:logaddexp2": "x y",
    "torch:logcumsumexp": "x 1",
    "torch:logical_and": "x y",
    "torch:logical_not": "x",
    "torch:logical_not_": "x",
    "torch:logical_or": "x y",
    "torch:logical_xor": "x y",
    "torch:logit": "x",
    "torch:logsumexp": "x",
    "torch:lt": "x y",
    "torch:masked_select": "x b",
    "torch:max": "x",
    "torch:max_pool1d": "x 1",
    "torch:max_pool1d_with_indices": "x 1",
    "torch:maximum": "x y",
    "torch:mean": "x",
    "torch:median": "x",
    "torch:min": "x",
    "torch:minimum": "x y",
    "torch:mode": "x",
    "torch:moveaxis": "x 1 1",
    "torch:movedim": "x 1 1",
    "torch:msort": "x",
    "torch:mul": "x y",
    "torch:multinomial": "x 1",
    "torch:multiply": "x y",
    "torch:nan_to_num": "x",
    "torch:nanmean": "x",
    "torch:nanmedian": "x",
    "torch:nansum": "x",
    "torch:ne": "x y",
    "torch:neg": "x",
    "torch:neg_": "x",
    "torch:negative": "x",
    "torch:negative_": "x",
    "torch:nonzero": "x",
    "torch:norm": "x",
    "torch:normal": "x",
    "torch:not_equal": "x y",
    "torch:numel": "x",
    "torch:ones_like": "x",
    "torch:pairwise_distance": "x y",
    "torch:permute": "x 0 1",
    "torch:polar": "x y",
    "torch:positive": "x",
    "torch:pow": "x y",
    "torch:prod": "x",
    "torch:rad2deg": "x",
    "torch:rad2deg_": "x",
    "torch:rand_like": "x",
    "torch:randint_like": "x 1",
    "torch:randn_like": "x",
    "torch:ravel": "x",
    "torch:real": "x",
    "torch:reciprocal": "x",
    "torch:reciprocal_": "x",
    "torch:relu": "x",
    "torch:relu_": "x",
    "torch:remainder": "x y",
    "torch:repeat_interleave": "x 1",
    "torch:reshape": "x -1",
    "torch:resolve_conj": "x",
    "torch:result_type": "x y",
    "torch:roll": "x 1",
    "torch:rot90": "x",
    "torch:round": "x",
    "torch:round_": "x",
    "torch:rsqrt": "x",
    "torch:rsqrt_": "x",
    "torch:rsub": "x y",
    "torch:select": "x 1 1",
    "torch:sgn": "x",
    "torch:sgn_": "x",
    "torch:sigmoid": "x",
    "torch:sigmoid_": "x",
    "torch:sign": "x",
    "torch:sign_": "x",
    "torch:signbit": "x",
    "torch:sin": "x",
    "torch:sin_": "x",
    "torch:sinc": "x",
    "torch:sinc_": "x",
    "torch:sinh": "x",
    "torch:sinh_": "x",
    "torch:softmax": "x 1",
    "torch:sort": "x",
    "torch:split": "x 1",
    "torch:sqrt": "x",
    "torch:sqrt_": "x",
    "torch:square": "x",
    "torch:square_": "x",
    "torch:squeeze": "x",
    "torch:std": "x",
    "torch:std_mean": "x",
    "torch:sub": "x y",
    "torch:subtract": "x y",
    "torch:sum": "x",
    "torch:swapaxes": "x 1 1",
    "torch:swapdims": "x 1 1",
    "torch:t": "x",
    "torch:take": "x i",
    "torch:take_along_dim": "x i",
    "torch:tan": "x",
    "torch:tan_": "x",
    "torch:tanh": "x",
    "torch:tanh_": "x",
    "torch:tensor": "x",
    "torch:tensor_split": "x 1",
    "torch:tensordot": "x y",
    "torch:tile": "x 1",
    "torch:topk": "x 1",
    "torch:trace": "x",
    "torch:transpose": "x 1 1",
    "torch:tril": "x",
    "torch:triu": "x",
    "torch:true_divide": "x y",
    "torch:trunc": "x",
    "torch:trunc_": "x",
    "torch:unbind": "x",
    "torch:unique": "x",
    "torch:unique_consecutive": "x",
    "torch:unsqueeze": "x 1",
    "torch:var": "x",
    "torch:var_mean": "x",
    "torch:vsplit": "x 1",
    "torch:where": "x",
    "torch:xlogy": "x y",
    "torch:zeros_like": "x",
}

# -- SAMPLES ------------------------------------------------------------------------------------
# name -> list of functions ``sample(ops) -> (fn, args, kwargs)``; ``ops`` is the dict of operands
# of ``test_op_path._inputs`` (CPU tensors of one geometry variant: (3, 4), (3, 4) transposed,
# 0-d, (0, 4)). Every tensor the call reads must be in ``args``/``kwargs`` (the sweep makes their
# meta twins), built deterministically. A sample may raise on CPU for some variant (a 0-d input
# to conv2d): meta must then raise the same error. Indices are kept in range for every variant
# (an out-of-range index is a data error, which meta cannot see).

F = jtorch.nn.functional


def _r(*shape, seed=0):
    """A deterministic float32 CPU tensor."""
    return jtorch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=jtorch.float32)


def _cl(*shape, seed=0):
    """Like ``_r`` (N, C, *spatial), laid out channels-last (a permuted view)."""
    t = _r(shape[0], *shape[2:], shape[1], seed=seed)
    return t.permute(0, t.ndim - 1, *range(1, t.ndim - 1))


def _long(values):
    """An int64 CPU tensor."""
    return jtorch.tensor(np.asarray(values, dtype=np.int64))


def _m(name):
    """Tensor method ``name`` as a function of (self, *args)."""
    return lambda self, *a, **k: getattr(self, name)(*a, **k)


def _size(t, dim):
    """Size of ``dim``; a 0-d tensor counts as size 1 there (torch's rule for index ops)."""
    return t.shape[dim] if t.ndim else 1


def _pick(n, k, seed=2):
    """``k`` valid indices into a dimension of size ``n`` (repeats allowed; none when n == 0)."""
    return _long((np.arange(k) * 5 + seed) % n if n else np.zeros(0))


def _ix(ops, dim):
    """The int64 operand, made a valid index along ``dim`` of ``x``."""
    n = _size(ops["x"], dim)
    return ops["i"] % n if n else ops["i"]


def _vec(t, n):
    """A 1-D tensor of at most ``n`` elements of ``t``."""
    return t.reshape(-1)[:n]


def _lead(t, k):
    """``t`` with ``k`` leading singleton dims (a view keeping ``t``'s strides)."""
    return t[(None,) * k]


def _rows(t, k):
    """The first ``k`` rows of ``t`` (``t`` itself when 0-d)."""
    return t[:k] if t.ndim else t


def _cols(t, k):
    """The first ``k`` columns of ``t`` (``t`` itself when not 2-D)."""
    return t[:, :k] if t.ndim == 2 else t


def _grid(*shape):
    """Sampling locations in [-1, 1] for grid_sample."""
    return _r(*shape, seed=5).tanh()


def _targets(o, ncls):
    """Class targets for the rows of ``x`` (shape x.shape[:1]; 0-d when x is 0-d)."""
    n = o["x"].shape[0] if o["x"].ndim else 1
    t = _long(np.arange(n) * 3 % ncls)
    return t if o["x"].ndim else t.reshape(())


def _on(fn, specs):
    """Bind ``fn`` into specs ``spec(fn, ops) -> (fn, args, kwargs)``."""
    return [lambda ops, s=s: s(fn, ops) for s in specs]


def _pair(name, specs, out=(), inplace=None):
    """Samples for ``torch:name`` and ``method:name`` from the same specs; ``out`` specs go to the
    torch function only; ``inplace`` specs to ``method:name_``."""
    res = {f"torch:{name}": _on(getattr(jtorch, name), list(specs) + list(out)),
           f"method:{name}": _on(_m(name), specs)}
    if inplace is not None:
        res[f"method:{name}_"] = _on(_m(name + "_"), inplace)
    return res


def _out():
    """An empty ``out=`` tensor: the call resizes it (no warning: it held no elements)."""
    return jtorch.empty(0)


SAMPLES: dict = {}

# ---- top-level spellings and numeric utilities (ops/extras.py, ops/numeric.py) ----------------

_NORM_ARGS = (None, None, None, None)
SAMPLES.update({
    "torch:as_strided_copy": [lambda o: (jtorch.as_strided_copy, (o["x"], (2, 2), (1, 1)), {})],
    "torch:expand_copy": [lambda o: (jtorch.expand_copy, (o["x"], (2, *o["x"].shape)), {})],
    "torch:permute_copy": [lambda o: (jtorch.permute_copy, (o["x"], list(range(o["x"].ndim))[::-1]), {})],
    "torch:unfold_copy": [lambda o: (jtorch.unfold_copy, (o["x"], 0, 2, 1), {})],
    "torch:split_with_sizes": [lambda o: (jtorch.split_with_sizes, (o["x"], [1, 2]), {})],
    "torch:split_with_sizes_copy": [lambda o: (jtorch.split_with_sizes_copy, (o["x"], [1, 2]), {})],
    "torch:unsafe_split_with_sizes": [
        lambda o: (jtorch.unsafe_split_with_sizes, (o["x"], [1, 2]), {})],
    "method:unsafe_split_with_sizes": [
        lambda o: (_m("unsafe_split_with_sizes"), (o["x"], [2, 1]), {})],
    "torch:row_stack": [lambda o: (jtorch.row_stack, ([o["x"], o["y"]],), {})],
    "torch:batch_norm": [lambda o: (jtorch.batch_norm, (o["x"], *_NORM_ARGS, True, 0.1, 1e-5, False), {})],
    "torch:instance_norm": [
        lambda o: (jtorch.instance_norm, (_lead(o["x"], 1), *_NORM_ARGS, True, 0.1, 1e-5, False), {})],
    "torch:layer_norm": [lambda o: (jtorch.layer_norm, (o["x"], list(o["x"].shape[-1:])), {})],
    "torch:native_layer_norm": [
        lambda o: (jtorch.native_layer_norm, (o["x"], list(o["x"].shape[-1:]), None, None, 1e-5), {})],
    "torch:pixel_shuffle": [lambda o: (jtorch.pixel_shuffle, (_lead(o["x"], 2), 1), {}),
                            lambda o: (jtorch.pixel_shuffle, (_r(1, 4, 2, 3), 2), {})],
    "torch:pixel_unshuffle": [lambda o: (jtorch.pixel_unshuffle, (_lead(o["x"], 2), 1), {}),
                              lambda o: (jtorch.pixel_unshuffle, (_r(1, 1, 4, 2), 2), {})],
    "torch:poisson_nll_loss": [
        lambda o: (jtorch.poisson_nll_loss, (o["x"], o["y"], True, False, 1e-8, 1), {})],
    "torch:cosine_embedding_loss": [
        lambda o: (jtorch.cosine_embedding_loss, (o["x"], o["y"], _targets(o, 2) * 2 - 1), {})],
    "torch:prelu": [lambda o: (jtorch.prelu, (o["x"], _r(1)), {})],
    "method:prelu": [lambda o: (_m("prelu"), (o["x"], _r(1)), {})],
    "torch:constant_pad_nd": [lambda o: (jtorch.constant_pad_nd, (o["x"], [1, 2], 0.5), {})],
    "torch:convolution": [
        lambda o: (jtorch.convolution, (_lead(o["x"], 2), _r(2, 1, 2, 2), None, [1, 1], [0, 0],
                                        [1, 1], False, [0, 0], 1), {}),
        lambda o: (jtorch.convolution, (_lead(o["x"], 1), _r(1, 2, 2), None, [1], [1], [1],
                                        True, [0], 1), {})],
    "torch:index_put_": [lambda o: (jtorch.index_put_, (o["x"], (_ix(o, 0),), _r()), {})],
    "torch:narrow_copy": [lambda o: (jtorch.narrow_copy, (o["x"], 0, 0, 1), {})],
    "method:narrow_copy": [lambda o: (_m("narrow_copy"), (o["x"], -1, 1, 1), {})],
    "torch:diagonal_scatter": [lambda o: (jtorch.diagonal_scatter, (
        o["x"], o["y"].diagonal() if o["y"].ndim == 2 else o["y"]), {})],
    "method:diagonal_scatter": [lambda o: (_m("diagonal_scatter"), (
        o["x"], o["y"].diagonal(1) if o["y"].ndim == 2 else o["y"], 1), {})],
    "torch:select_scatter": [lambda o: (jtorch.select_scatter, (
        o["x"], o["y"][:1].sum(0) if o["y"].ndim else o["y"], 0, 0), {})],
    "method:select_scatter": [lambda o: (_m("select_scatter"), (
        o["x"], o["y"][..., :1].sum(-1) if o["y"].ndim else o["y"], -1, 0), {})],
    "torch:as_strided_scatter": [lambda o: (jtorch.as_strided_scatter, (
        o["x"], _vec(o["y"], 1), (1,), (1,)), {})],
    "method:as_strided_scatter": [lambda o: (_m("as_strided_scatter"), (
        o["x"], _vec(o["y"], 1), (1,), (1,), 0), {})],
    "torch:index_reduce": [lambda o: (jtorch.index_reduce, (
        o["x"], 0, _pick(_size(o["x"], 0), 2), _rows(o["y"], 2), "amax"), {})],
    "method:index_reduce": [lambda o: (_m("index_reduce"), (
        o["x"], 0, _pick(_size(o["x"], 0), 2), _rows(o["y"], 2), "mean"), {"include_self": False})],
    "method:index_reduce_": [lambda o: (_m("index_reduce_"), (
        o["x"], 0, _pick(_size(o["x"], 0), 2), _rows(o["y"], 2), "prod"), {})],
    "torch:bucketize": [lambda o: (jtorch.bucketize, (o["x"], _r(3).sort().values), {}),
                        lambda o: (jtorch.bucketize, (o["x"], _r(3).sort().values), {"right": True,
                                                                                    "out_int32": True})],
    "torch:unravel_index": [lambda o: (jtorch.unravel_index, (o["i"], (3, 4)), {})],
    "torch:vander": [lambda o: (jtorch.vander, (_vec(o["x"], 3),), {}),
                     lambda o: (jtorch.vander, (_vec(o["x"], 3), 2), {"increasing": True})],
    "torch:add": [lambda o: (jtorch.add, (o["x"], o["y"]), {"alpha": 2})],  # (add_alpha)
    "torch:sub": [lambda o: (jtorch.sub, (o["x"], o["y"]), {"alpha": 2})],  # (sub_alpha)
    "torch:histc": [lambda o: (jtorch.histc, (o["x"], 4, -1, 1), {})],
    "method:histc": [lambda o: (_m("histc"), (o["x"], 3, 0, 2), {})],
    "torch:renorm": [lambda o: (jtorch.renorm, (o["x"], 2, 0, 1.0), {})],
    "method:renorm": [lambda o: (_m("renorm"), (o["x"], 1, -1, 0.5), {})],
    "method:renorm_": [lambda o: (_m("renorm_"), (o["x"], 2, 0, 1.0), {})],
    "method:float_power_": [lambda o: (_m("float_power_"), (o["x"].double(), 2), {}),
                            lambda o: (_m("float_power_"), (o["x"], 2), {})],  # not double: error
})

# ---- views and shapes -------------------------------------------------------------------------

SAMPLES.update(_pair("broadcast_to", [
    lambda f, o: (f, (o["x"], (2,) + tuple(o["x"].shape)), {}),
    lambda f, o: (f, (o["x"], (-1,) * o["x"].ndim), {}),
    lambda f, o: (f, (o["x"], (5, 7)), {}),  # not broadcastable (0-d: fine)
]))
SAMPLES["method:expand"] = [
    lambda o: (_m("expand"), (o["x"], 2, *o["x"].shape), {}),
    lambda o: (_m("expand"), (o["x"], (2, 1) + (-1,) * o["x"].ndim), {}),
    lambda o: (_m("expand"), (_lead(o["x"], 1), 3, *o["x"].shape), {}),
    lambda o: (_m("expand"), (o["x"], 5), {}),  # too few sizes (0-d: fine)
]
SAMPLES.update(_pair("narrow", [
    lambda f, o: (f, (o["x"], 0, 1, 2), {}),
    lambda f, o: (f, (o["x"], -1, 0, 2), {}),
    lambda f, o: (f, (o["x"], 1, -2, 2), {}),
    lambda f, o: (f, (o["x"], 1, 3, 2), {}),  # start + length past the end
]))
SAMPLES.update(_pair("unflatten", [
    lambda f, o: (f, (o["x"], 1, (2, 2)), {}),
    lambda f, o: (f, (o["x"], 0, (-1, 1)), {}),
    lambda f, o: (f, (o["x"], -1, (1, 4, 1)), {}),
    lambda f, o: (f, (o["x"], 1, (3, 3)), {}),  # sizes do not multiply to the dim
]))
SAMPLES["method:unfold"] = [
    lambda o: (_m("unfold"), (o["x"], 1, 2, 1), {}),
    lambda o: (_m("unfold"), (o["x"], 0, 2, 2), {}),
    lambda o: (_m("unfold"), (o["x"], -1, 1, 3), {}),
    lambda o: (_m("unfold"), (o["x"], 0, 5, 1), {}),  # window larger than the dim
]
SAMPLES["method:split_with_sizes"] = [
    lambda o: (_m("split_with_sizes"), (o["x"], [1, 2]), {}),
    lambda o: (_m("split_with_sizes"), (o["x"], [2, 0, 2], 1), {}),
    lambda o: (_m("split_with_sizes"), (o["x"], [1, 3]), {"dim": -1}),
]
SAMPLES["method:new_empty_strided"] = [
    lambda o: (_m("new_empty_strided"), (o["x"], (2, 3), (1, 2)), {}),
    lambda o: (_m("new_empty_strided"), (o["i"], (2, 3), (3, 1)), {"dtype": jtorch.float64}),
    lambda o: (_m("new_empty_strided"), (o["x"], (0, 3), (1, 1)), {"requires_grad": True}),
]
SAMPLES["method:where"] = [
    lambda o: (_m("where"), (o["x"], o["b"], o["y"]), {}),
    lambda o: (_m("where"), (o["x"], o["b"], 0.5), {}),
    lambda o: (_m("where"), (o["i"], o["b"], o["x"]), {}),
]
SAMPLES["torch:imag"] = [
    lambda o: (jtorch.imag, (jtorch.complex(o["x"], o["y"]),), {}),
    lambda o: (jtorch.imag, (o["x"],), {}),  # real input: error
]


def _cplx(o):
    return jtorch.complex(o["x"], o["y"])


def _pairs(o):
    return jtorch.view_as_real(_cplx(o))


SAMPLES.update({
    "torch:view_as_real": [lambda o: (jtorch.view_as_real, (_cplx(o),), {}),
                           lambda o: (jtorch.view_as_real, (o["x"],), {})],  # real: error
    "torch:view_as_real_copy": [lambda o: (jtorch.view_as_real_copy, (_cplx(o),), {})],
    "torch:view_as_complex": [lambda o: (jtorch.view_as_complex, (_pairs(o),), {}),
                              lambda o: (jtorch.view_as_complex, (o["x"],), {}),  # no pairs
                              lambda o: (jtorch.view_as_complex, (o["i"],), {})],  # dtype
    "torch:view_as_complex_copy": [lambda o: (jtorch.view_as_complex_copy, (_pairs(o),), {})],
})


def _seg_lengths(x):
    """Valid segment lengths for ``x``'s dim 0 (one leading row, then the rest)."""
    n = x.shape[0] if x.ndim else 1
    return jtorch.tensor([min(1, n), n - min(1, n)])


SAMPLES["torch:segment_reduce"] = [
    lambda o: (jtorch.segment_reduce, (o["x"], "sum"), {"lengths": _seg_lengths(o["x"])}),
    lambda o: (jtorch.segment_reduce, (o["x"], "max"), {"lengths": _seg_lengths(o["x"]),
                                                         "initial": 0.5}),
    lambda o: (jtorch.segment_reduce, (o["x"], "mean"), {"offsets": jtorch.tensor([0, 1])}),
    lambda o: (jtorch.segment_reduce, (_r(2, 3, 4), "prod"),
               {"lengths": jtorch.tensor([[1, 2], [3, 0]]), "axis": 1}),
    lambda o: (_segment_grads, (o["x"],), {}),
]


def _segment_grads(x):
    """segment_reduce's forward and backward."""
    a = x.detach().requires_grad_()
    lengths = _seg_lengths(a).to(a.device)
    jtorch.segment_reduce(a, "prod", lengths=lengths, initial=2.0).sum().backward()
    return a.grad
SAMPLES["torch:meshgrid"] = [
    lambda o: (jtorch.meshgrid, (_vec(o["x"], 3), _vec(o["y"], 2)), {"indexing": "ij"}),
    lambda o: (jtorch.meshgrid, (_vec(o["x"], 3), _vec(o["y"], 2), _vec(o["z"], 4)),
               {"indexing": "xy"}),
    lambda o: (jtorch.meshgrid, ([_vec(o["x"], 2), _vec(o["i"], 2)],), {"indexing": "ij"}),  # dtypes
    lambda o: (jtorch.meshgrid, (), {"indexing": "ij"}),  # no tensors: error
]
SAMPLES["torch:cartesian_prod"] = [
    lambda o: (jtorch.cartesian_prod, (_vec(o["x"], 3), _vec(o["y"], 2)), {}),
    lambda o: (jtorch.cartesian_prod, (_vec(o["x"], 3),), {}),
    lambda o: (jtorch.cartesian_prod, (_vec(o["i"], 2), _vec(o["i"], 3), _vec(o["i"], 1)), {}),
]
SAMPLES["torch:combinations"] = [
    lambda o: (jtorch.combinations, (_vec(o["x"], 4),), {}),
    lambda o: (jtorch.combinations, (_vec(o["x"], 4),), {"r": 3, "with_replacement": True}),
    lambda o: (jtorch.combinations, (o["x"],), {}),  # not 1-D: error (0-d too)
]

# ---- joins ------------------------------------------------------------------------------------

_CAT = [
    lambda f, o: (f, ([o["x"], o["y"]],), {}),
    lambda f, o: (f, ((o["x"], o["y"], o["z"]), 1), {}),
    lambda f, o: (f, ([o["x"], o["i"]], -1), {}),  # promotes
    lambda f, o: (f, ([o["x"], jtorch.empty(0)],), {}),  # legacy empty 1-D operand is skipped
    lambda f, o: (f, ([o["x"], o["y"].t()], 0), {}),  # shapes differ off dim 0
    lambda f, o: (f, ([o["x"], o["y"]],), {"out": _out()}),
]
for _name in ("cat", "concat", "concatenate"):
    SAMPLES[f"torch:{_name}"] = _on(getattr(jtorch, _name), _CAT)
SAMPLES["torch:stack"] = _on(jtorch.stack, [
    lambda f, o: (f, ([o["x"], o["y"]],), {}),
    lambda f, o: (f, ((o["x"], o["y"], o["z"]), -1), {}),
    lambda f, o: (f, ([o["x"], o["y"].t()],), {}),  # shapes differ (0-d: fine)
    lambda f, o: (f, ([o["x"], o["y"]], 1), {"out": _out()}),
])
for _name in ("hstack", "vstack", "dstack", "column_stack"):
    SAMPLES[f"torch:{_name}"] = _on(getattr(jtorch, _name), [
        lambda f, o: (f, ([o["x"], o["y"]],), {}),
        lambda f, o: (f, ((o["x"], _vec(o["y"], 3), o["z"]),), {}),
        lambda f, o: (f, ([o["x"], o["y"]],), {"out": _out()}),
    ])

# ---- matmul family ----------------------------------------------------------------------------

SAMPLES.update(_pair("mm", [
    lambda f, o: (f, (o["x"], o["y"].t()), {}),
    lambda f, o: (f, (o["x"].t(), o["y"]), {}),
    lambda f, o: (f, (o["x"], _r(4, 5).requires_grad_()), {}),
    lambda f, o: (f, (o["x"], o["y"]), {}),  # inner dims differ
], out=[lambda f, o: (f, (o["x"], o["y"].t()), {"out": _out()})]))
SAMPLES.update(_pair("bmm", [
    lambda f, o: (f, (_lead(o["x"], 1), _lead(o["y"].t(), 1)), {}),
    lambda f, o: (f, (jtorch.stack([o["x"], o["y"]]), _r(2, 4, 5)), {}),
    lambda f, o: (f, (_r(2, 3, 4), _r(3, 4, 5)), {}),  # batch sizes differ
], out=[lambda f, o: (f, (_lead(o["x"], 1), _lead(o["y"].t(), 1)), {"out": _out()})]))
SAMPLES.update(_pair("matmul", [
    lambda f, o: (f, (o["x"], o["y"].t()), {}),
    lambda f, o: (f, (o["x"], _vec(o["y"], 4)), {}),  # matrix @ vector
    lambda f, o: (f, (_vec(o["y"], 3), o["x"]), {}),  # vector @ matrix
    lambda f, o: (f, (_vec(o["x"], 4), _vec(o["y"], 4)), {}),  # dot
    lambda f, o: (f, (_lead(o["x"], 1).expand(2, *o["x"].shape), o["y"].t()), {}),  # batched
    lambda f, o: (f, (_r(2, 1, 3, 4), _lead(o["y"].t(), 1)), {}),  # broadcast batch
], out=[lambda f, o: (f, (o["x"], o["y"].t()), {"out": _out()})]))
_DOT = [
    lambda f, o: (f, (_vec(o["x"], 4), _vec(o["y"], 4)), {}),
    lambda f, o: (f, (o["x"], o["y"]), {}),  # not 1-D (0-d too)
    lambda f, o: (f, (_vec(o["x"], 4), _vec(o["i"], 4)), {}),  # dtypes differ
]
SAMPLES.update(_pair("dot", _DOT, out=[
    lambda f, o: (f, (_vec(o["x"], 4), _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("vdot", _DOT, out=[
    lambda f, o: (f, (_vec(o["x"], 4), _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("mv", [
    lambda f, o: (f, (o["x"], _vec(o["y"], 4)), {}),
    lambda f, o: (f, (o["x"].t(), _vec(o["y"], 3)), {}),
    lambda f, o: (f, (o["x"], _vec(o["y"], 3)), {}),  # sizes differ
], out=[lambda f, o: (f, (o["x"], _vec(o["y"], 4)), {"out": _out()})]))
_OUTER = [
    lambda f, o: (f, (_vec(o["x"], 3), _vec(o["y"], 4)), {}),
    lambda f, o: (f, (_vec(o["x"], 2), _vec(o["i"], 3)), {}),  # promotes
    lambda f, o: (f, (o["x"], _vec(o["y"], 4)), {}),  # 2-D operand
]
SAMPLES.update(_pair("outer", _OUTER, out=[
    lambda f, o: (f, (_vec(o["x"], 3), _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("ger", _OUTER, out=[
    lambda f, o: (f, (_vec(o["x"], 3), _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("addmm", [
    lambda f, o: (f, (_vec(o["z"], 3), o["x"], o["y"].t()), {}),  # broadcast bias
    lambda f, o: (f, (o["z"], o["x"], _r(4, 4)), {"beta": 0.5, "alpha": 2}),
    lambda f, o: (f, (_r(3, 5), o["x"], _r(4, 5)), {"beta": 0}),
    lambda f, o: (f, (o["z"], o["x"], o["y"]), {}),  # inner dims differ
], out=[lambda f, o: (f, (o["z"], o["x"], _r(4, 4)), {"out": _out()})]))
SAMPLES["method:addmm_"] = [
    lambda o: (_m("addmm_"), (o["z"], o["x"], _r(4, 4)), {}),
    lambda o: (_m("addmm_"), (o["z"], o["x"], _r(4, 4).t()), {"beta": 2, "alpha": 0.5}),
    lambda o: (_m("addmm_"), (_vec(o["z"], 4), o["x"], _r(4, 4)), {}),  # cannot broadcast in place
]
SAMPLES.update(_pair("addmv", [
    lambda f, o: (f, (_vec(o["z"], 3), o["x"], _vec(o["y"], 4)), {}),
    lambda f, o: (f, (_r(1), o["x"], _vec(o["y"], 4)), {"beta": 0.5, "alpha": 2}),
    lambda f, o: (f, (_vec(o["z"], 3), o["x"], _vec(o["y"], 3)), {}),  # sizes differ
], out=[lambda f, o: (f, (_vec(o["z"], 3), o["x"], _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("addr", [
    lambda f, o: (f, (o["z"], _vec(o["x"], 3), _vec(o["y"], 4)), {}),
    lambda f, o: (f, (_r(4), _vec(o["x"], 3), _vec(o["y"], 4)), {"beta": 2, "alpha": 0.5}),
    lambda f, o: (f, (o["z"], o["x"], _vec(o["y"], 4)), {}),  # 2-D vec1
], out=[lambda f, o: (f, (o["z"], _vec(o["x"], 3), _vec(o["y"], 4)), {"out": _out()})]))
SAMPLES.update(_pair("addbmm", [
    lambda f, o: (f, (o["z"], jtorch.stack([o["x"], o["y"]]), _r(2, 4, 4)), {}),
    lambda f, o: (f, (_r(5), _r(2, 3, 4), _r(2, 4, 5)), {"beta": 0.5, "alpha": 2}),
    lambda f, o: (f, (o["z"], _r(2, 3, 4), _r(3, 4, 4)), {}),  # batch sizes differ
], out=[lambda f, o: (f, (o["z"], jtorch.stack([o["x"], o["y"]]), _r(2, 4, 4)),
                      {"out": _out()})]))
SAMPLES.update(_pair("baddbmm", [
    lambda f, o: (f, (_lead(o["z"], 1), jtorch.stack([o["x"], o["y"]]), _r(2, 4, 4)), {}),
    lambda f, o: (f, (o["z"], _r(2, 3, 4), _r(2, 4, 4)), {"beta": 0.5, "alpha": 2}),
    lambda f, o: (f, (o["z"], o["x"], o["y"].t()), {}),  # 2-D batches
], out=[lambda f, o: (f, (_lead(o["z"], 1), jtorch.stack([o["x"], o["y"]]), _r(2, 4, 4)),
                      {"out": _out()})]))
SAMPLES["torch:chain_matmul"] = [
    lambda o: (jtorch.chain_matmul, (o["x"], o["y"].t(), o["z"]), {}),
    lambda o: (jtorch.chain_matmul, (o["x"],), {}),
    lambda o: (jtorch.chain_matmul, (o["x"], _r(4, 2), _r(2, 5), _r(5, 1)), {}),
    lambda o: (jtorch.chain_matmul, (o["x"], o["y"]), {"out": _out()}),  # inner dims differ
]
SAMPLES["torch:einsum"] = [
    lambda o: (jtorch.einsum, ("ij,kj->ik", o["x"], o["y"]), {}),
    lambda o: (jtorch.einsum, ("ij->ji", o["x"]), {}),
    lambda o: (jtorch.einsum, ("ij,ij->", o["x"], o["y"]), {}),
    lambda o: (jtorch.einsum, ("...j,jk", [o["x"], _r(4, 2)]), {}),
    lambda o: (jtorch.einsum, ("bij,bjk->bik", jtorch.stack([o["x"], o["y"]]), _r(2, 4, 3)), {}),
]
_BILINEAR = [
    lambda f, o: (f, (o["x"], o["y"], _r(2, 4, 4), _r(2)), {}),
    lambda f, o: (f, (o["x"], _r(3, 5), _r(2, 4, 5)), {}),
    lambda f, o: (f, (o["x"], o["y"], _r(2, 3, 4)), {}),  # weight does not fit
]
SAMPLES["F:bilinear"] = _on(F.bilinear, _BILINEAR)
SAMPLES["torch:bilinear"] = _on(jtorch.bilinear, _BILINEAR)

# ---- indexing ---------------------------------------------------------------------------------

SAMPLES.update(_pair("gather", [
    lambda f, o: (f, (o["x"], 1, _ix(o, 1)), {}),
    lambda f, o: (f, (o["x"], 0, _ix(o, 0)), {}),
    lambda f, o: (f, (o["x"], -1, _cols(_ix(o, 1), 2)), {"sparse_grad": False}),
    lambda f, o: (f, (o["x"], 1, _long([[0, 1, 2, 3, 0]] * 4)), {}),  # index larger than self
], out=[lambda f, o: (f, (o["x"], 1, _ix(o, 1)), {"out": _out()})]))
SAMPLES.update(_pair("index_select", [
    lambda f, o: (f, (o["x"], 0, _pick(_size(o["x"], 0), 2)), {}),
    lambda f, o: (f, (o["x"], 1, _pick(_size(o["x"], 1), 5)), {}),
    lambda f, o: (f, (o["x"], -1, _long(_size(o["x"], -1) - 1)), {}),  # 0-d index
    lambda f, o: (f, (o["x"], 0, _pick(_size(o["x"], 0), 2).float()), {}),  # float index
], out=[lambda f, o: (f, (o["x"], 0, _pick(_size(o["x"], 0), 2)), {"out": _out()})]))


def _idx_src(o, dim, k):
    """(index, source) for index_add/index_copy along ``dim`` of ``x``: ``k`` valid indices."""
    idx = _pick(_size(o["x"], dim), k)
    src = o["y"]
    if src.ndim:
        if len(idx) > src.shape[dim]:
            src = jtorch.cat([src, src], dim)
        src = src.narrow(dim, 0, len(idx))
    return idx, src


def _index_specs(extra):
    return [
        lambda f, o: (f, (o["x"], 0, *_idx_src(o, 0, 2)), {}),
        lambda f, o: (f, (o["x"], 1, *_idx_src(o, 1, 5)), {}),
        lambda f, o: (f, (o["x"], -1, _pick(4, 2), o["y"]), {}),  # source does not fit
    ] + extra


_ADD_ALPHA = [lambda f, o: (f, (o["x"], 1, *_idx_src(o, 1, 2)), {"alpha": 2})]
SAMPLES.update(_pair("index_add", _index_specs(_ADD_ALPHA),
                     inplace=_index_specs(_ADD_ALPHA)))
SAMPLES.update(_pair("index_copy", _index_specs([]), inplace=_index_specs([])))
_FILL = [
    lambda f, o: (f, (o["x"], 1, _pick(_size(o["x"], 1), 2), -1.0), {}),
    lambda f, o: (f, (o["x"], 0, _pick(_size(o["x"], 0), 3), jtorch.tensor(2.5)), {}),
    lambda f, o: (f, (o["i"], 0, _pick(_size(o["x"], 0), 1), 7), {}),
    lambda f, o: (f, (o["x"], 1, _pick(_size(o["x"], 1), 2), _r(2)), {}),  # value not 0-d
]
SAMPLES.update(_pair("index_fill", _FILL, inplace=_FILL))


def _rows_index(o, k):
    """``k`` valid row indices of ``x`` (none when it has no rows)."""
    return _pick(_size(o["x"], 0), k)


def _row_col_index(o):
    """(rows, cols) index tensors picking 3 elements of a 2-D ``x`` (none when it has no rows)."""
    rows = _rows_index(o, 3)
    return rows, _pick(4, len(rows), 1)


def _put_specs():
    return [
        lambda f, o: (f, (o["x"], (_rows_index(o, 2),), _r(1)), {}),  # broadcast value
        lambda f, o: (f, (o["x"], [_rows_index(o, 2)], _rows(o["y"], 2)), {}),
        lambda f, o: (f, (o["x"], _row_col_index(o), jtorch.tensor(5.0)), {"accumulate": True}),
        lambda f, o: (f, (o["x"], (o["b"],), jtorch.tensor(0.0)), {}),  # mask: data-dependent
        lambda f, o: (f, (o["x"], (_rows_index(o, 2),), _r(7)), {}),  # values do not fit
    ]


SAMPLES.update(_pair("index_put", _put_specs(), inplace=_put_specs()))
_MASKED_FILL = [
    lambda f, o: (f, (o["x"], o["b"], 0.5), {}),
    lambda f, o: (f, (o["x"], jtorch.tensor([True, False, True, False]), -2), {}),  # broadcast
    lambda f, o: (f, (o["x"], o["b"], jtorch.tensor(2.0)), {}),
    lambda f, o: (f, (o["x"], o["i"], 1.0), {}),  # mask not bool
]
SAMPLES.update(_pair("masked_fill", _MASKED_FILL, inplace=_MASKED_FILL))
_MASKED_SCATTER = [
    lambda f, o: (f, (o["x"], o["b"], o["y"]), {}),
    lambda f, o: (f, (o["x"], o["b"], _r(20)), {}),
    lambda f, o: (f, (o["x"], o["i"], o["y"]), {}),  # mask not bool
]
SAMPLES.update(_pair("masked_scatter", _MASKED_SCATTER, inplace=_MASKED_SCATTER))


def _put(name):
    def spec(o, acc):
        n = o["x"].numel()
        idx = _pick(n, 3)
        return (_m(name), (o["x"], idx, _vec(o["y"], len(idx))), {"accumulate": acc})
    return [lambda o: spec(o, False), lambda o: spec(o, True),
            lambda o: (_m(name), (o["x"], _pick(o["x"].numel(), 2), _r(3)), {})]  # sizes differ


SAMPLES["method:put"] = _put("put")
SAMPLES["method:put_"] = _put("put_")


def _scatter_specs():
    return [
        lambda f, o: (f, (o["x"], 1, _ix(o, 1), o["y"]), {}),
        lambda f, o: (f, (o["x"], 0, _ix(o, 0)), {"value": 2.0}),
        lambda f, o: (f, (o["x"], 1, _ix(o, 1), 1.5), {}),
        lambda f, o: (f, (o["x"], 1, _ix(o, 1), o["y"]), {"reduce": "add"}),
        lambda f, o: (f, (o["x"], 0, _ix(o, 0), o["y"]), {"reduce": "multiply"}),
        lambda f, o: (f, (o["x"], 1, _ix(o, 1).float(), o["y"]), {}),  # float index
    ]


SAMPLES.update(_pair("scatter", _scatter_specs(), inplace=_scatter_specs()))
_SCATTER_ADD = [
    lambda f, o: (f, (o["x"], 0, _ix(o, 0), o["y"]), {}),
    lambda f, o: (f, (o["x"], -1, _cols(_ix(o, 1), 2), o["y"]), {}),
    lambda f, o: (f, (o["x"], 1, _ix(o, 1), o["i"]), {}),  # src dtype differs
]
SAMPLES.update(_pair("scatter_add", _SCATTER_ADD, inplace=_SCATTER_ADD))
_SCATTER_REDUCE = [
    lambda f, o, r=r, s=s: (f, (o["x"], 1, _ix(o, 1), o["y"], r), {"include_self": s})
    for r, s in (("sum", True), ("prod", False), ("mean", True), ("amax", False), ("amin", True))
] + [
    lambda f, o: (f, (o["x"], 0, _ix(o, 0), o["y"], "max"), {}),  # unknown reduction
]
SAMPLES.update(_pair("scatter_reduce", _SCATTER_REDUCE, inplace=_SCATTER_REDUCE))

# ---- data reads (errors only: multi-element or empty operands) -------------------------------

SAMPLES["method:item"] = [
    lambda o: (_m("item"), (_lead(o["x"], 1).expand(2, *o["x"].shape),), {}),
]
SAMPLES["torch:is_nonzero"] = [
    lambda o: (jtorch.is_nonzero, (_lead(o["x"], 1).expand(2, *o["x"].shape),), {}),
]

# ---- autograd: gradients of meta tensors are meta ---------------------------------------------


def _rg(t):
    return t.requires_grad_()


def _grads(fwd):
    """A call running ``fwd(*tensors).sum().backward()`` that returns the inputs' gradients."""
    def f(*ts):
        fwd(*ts).sum().backward()
        return tuple(t.grad for t in ts if t.requires_grad)
    return f


def _bw_gradient(x, y):
    x.exp().backward(gradient=y)
    return x.grad


def _bw_nonscalar(x):
    (x * 2).backward()  # no gradient for a non-scalar (0-d: fine)
    return x.grad


def _hooked(x):
    x.register_hook(lambda g: g * 2)
    (x * x).sum().backward()
    return x.grad


def _retained(x, y):
    h = x * y
    h.retain_grad()
    h.sum().backward()
    return h.grad, x.grad


def _lstm_out(x, *weights):
    """The output of an LSTM(3, 2) run on ``weights`` (operands: CPU or meta), through its fused
    layer op (``lstm_layer``) and that op's backward. The module is made on meta: its own
    parameters are replaced, and making it draws nothing from the generator."""
    lstm = jtorch.nn.LSTM(3, 2, device="meta")
    names = [n for n, _ in lstm.named_parameters()]
    return jtorch.func.functional_call(lstm, dict(zip(names, weights)), (x,))[0]


SAMPLES["method:backward"] = [
    lambda o: (_grads(lambda x, y: x * y), (_rg(o["x"]), o["y"]), {}),
    lambda o: (_bw_gradient, (_rg(o["x"]), o["y"]), {}),
    lambda o: (_grads(lambda x, y: x @ y.t()), (_rg(o["x"]), _rg(o["y"])), {}),
    lambda o: (_grads(lambda x, w: F.max_pool2d(F.conv2d(x, w), 2)),
               (_rg(_r(2, 1, 6, 6)), _rg(_r(2, 1, 3, 3, seed=1))), {}),
    lambda o: (_bw_nonscalar, (_rg(o["x"]),), {}),
    # through the ops whose backward is an OpDef of its own
    lambda o: (_grads(lambda x, y: F.softmax(x, -1) * y), (_rg(o["x"]), o["y"]), {}),
    lambda o: (_grads(lambda x, y: F.log_softmax(x, 0) * y), (_rg(o["x"]), o["y"]), {}),
    lambda o: (_grads(lambda x, y: F.relu(x - 1.5) * y), (_rg(o["x"]), o["y"]), {}),
    lambda o: (_grads(lambda x: F.adaptive_avg_pool2d(x, (2, 3))), (_rg(_r(1, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.adaptive_avg_pool3d(x, 2)), (_rg(_r(1, 2, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.adaptive_max_pool2d(x, (2, 3))), (_rg(_r(1, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.adaptive_max_pool3d(x, 2)), (_rg(_r(1, 2, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.avg_pool2d(x, 2)), (_rg(_cl(1, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.avg_pool3d(x, 2)), (_rg(_r(1, 2, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x: F.max_pool3d(x, 2)), (_rg(_r(1, 2, 2, 4, 6)),), {}),
    lambda o: (_grads(lambda x, g: F.grid_sample(x, g, align_corners=False)),
               (_rg(_r(1, 2, 4, 5)), _rg(_grid(1, 3, 3, 2))), {}),
    lambda o: (_grads(lambda x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False)),
               (_rg(_r(1, 2, 4, 5)), _rg(_grid(1, 3, 3, 2))), {}),
    lambda o: (_grads(lambda x, g: F.grid_sample(x, g, align_corners=True)),
               (_rg(_r(1, 2, 3, 4, 5)), _rg(_grid(1, 2, 3, 3, 3))), {}),
    lambda o: (_grads(lambda x: F.interpolate(x, (2, 3), mode="bicubic", antialias=True)),
               (_rg(_r(1, 2, 5, 7)),), {}),
    lambda o: (_grads(lambda x: F.interpolate(x, scale_factor=2)), (_rg(_r(1, 2, 3, 4)),), {}),
    lambda o: (_grads(lambda x: F.interpolate(x, (5, 7), mode="bilinear")),
               (_rg(_r(1, 2, 3, 4)),), {}),
    lambda o: (_grads(lambda x, t: F.nll_loss(x, t)), (_rg(o["x"]), _targets(o, 4)), {}),
    lambda o: (_grads(lambda x, t: F.nll_loss(x, t, reduction="none")),
               (_rg(_r(2, 4, 3, 5)), _long(np.arange(30).reshape(2, 3, 5) % 4)), {}),
    lambda o: (_grads(_lstm_out), (_rg(_r(4, 2, 3)), _rg(_r(8, 3, seed=1)), _rg(_r(8, 2, seed=2)),
                                   _r(8, seed=3), _rg(_r(8, seed=4))), {}),
]
SAMPLES["method:register_hook"] = [
    lambda o: (_hooked, (_rg(o["x"]),), {}),
    lambda o: (_m("register_hook"), (o["x"], lambda g: g), {}),  # no grad required: error
]
SAMPLES["method:retain_grad"] = [
    lambda o: (_retained, (_rg(o["x"]), o["y"]), {}),
]

# ---- convolution ------------------------------------------------------------------------------


def _conv_specs(nd):
    lead = {1: 0, 2: 2, 3: 3}[nd]  # x made (C=3, L=4), (1, 1, 3, 4), (1, 1, 1, 3, 4)
    cin = 3 if nd == 1 else 1
    k = (2,) * nd if nd != 3 else (1, 2, 2)
    return [
        lambda f, o: (f, (_lead(o["x"], lead), _r(2, cin, *k)), {}),
        lambda f, o: (f, (_lead(o["x"], lead + (nd == 1)), _r(2, cin, *k), _r(2)),
                      {"stride": 2, "padding": 1}),
        lambda f, o: (f, (_r(2, 4, *(7,) * nd), _r(6, 2, *(3,) * nd).requires_grad_()),
                      {"groups": 2, "dilation": 2, "bias": None}),
        lambda f, o: (f, (_cl(2, 4, *(6,) * nd), _r(4, 4, *(3,) * nd), _r(4)),
                      {"padding": "same"}),
        lambda f, o: (f, (_r(1, 3, *(5,) * nd), _r(2, 3, *(2,) * nd)), {"padding": "valid",
                                                                         "stride": 1}),
        lambda f, o: (f, (_r(1, 3, *(5,) * nd), _r(2, 2, *(2,) * nd)), {}),  # channels differ
    ]


def _conv_t_specs(nd):
    lead = {1: 0, 2: 2, 3: 3}[nd]
    cin = 3 if nd == 1 else 1
    k = (2,) * nd if nd != 3 else (1, 2, 2)
    return [
        lambda f, o: (f, (_lead(o["x"], lead), _r(cin, 2, *k)), {}),
        lambda f, o: (f, (_lead(o["x"], lead + (nd == 1)), _r(cin, 2, *k), _r(2)),
                      {"stride": 2, "padding": 1 if nd < 3 else (0, 1, 1), "output_padding": 1}),
        lambda f, o: (f, (_r(2, 4, *(4,) * nd), _r(4, 3, *(3,) * nd).requires_grad_()),
                      {"groups": 2, "dilation": 2}),
        lambda f, o: (f, (_cl(1, 2, *(4,) * nd), _r(2, 2, *(2,) * nd)), {"stride": 3}),
        lambda f, o: (f, (_r(1, 2, *(4,) * nd), _r(2, 2, *(2,) * nd)),
                      {"stride": 2, "output_padding": 2}),  # output_padding >= stride
    ]


for _nd in (1, 2, 3):
    for _ns, _mod in (("torch", jtorch), ("F", F)):
        SAMPLES[f"{_ns}:conv{_nd}d"] = _on(getattr(_mod, f"conv{_nd}d"), _conv_specs(_nd))
        SAMPLES[f"{_ns}:conv_transpose{_nd}d"] = _on(getattr(_mod, f"conv_transpose{_nd}d"),
                                                     _conv_t_specs(_nd))

# ---- pooling ----------------------------------------------------------------------------------
# x is made (1, 1, 3, 4) for 2-d pooling and (1, 1, 1, 3, 4) for 3-d (0-d x: too few dims).


def _max_pool_specs(nd, **kw):
    lead = nd
    k1 = 2 if nd == 2 else (1, 2, 2)
    return [
        lambda f, o: (f, (_lead(o["x"], lead), k1), dict(kw)),
        lambda f, o: (f, (_lead(o["x"], lead), k1, 1, (0,) * (nd - 2) + (1, 1)), dict(kw)),
        lambda f, o: (f, (_r(2, 3, *(7,) * nd), 3), dict(kw, stride=2, padding=1,
                                                          ceil_mode=True)),
        lambda f, o: (f, (_cl(1, 2, *(8,) * nd), (2,) * (nd - 1) + (3,)), dict(kw, dilation=2)),
        lambda f, o: (f, (_lead(o["x"], lead - 1), k1), dict(kw)),  # unbatched
        lambda f, o: (f, (_r(1, 1, *(6,) * nd), 2), dict(kw, padding=2)),  # padding > k/2
    ]


SAMPLES["F:max_pool2d"] = _on(F.max_pool2d, _max_pool_specs(2) + _max_pool_specs(
    2, return_indices=True)[:3])
SAMPLES["F:max_pool3d"] = _on(F.max_pool3d, _max_pool_specs(3) + _max_pool_specs(
    3, return_indices=True)[:3])
SAMPLES["torch:max_pool2d"] = _on(jtorch.max_pool2d, _max_pool_specs(2))
SAMPLES["torch:max_pool3d"] = _on(jtorch.max_pool3d, _max_pool_specs(3))
SAMPLES["F:max_pool2d_with_indices"] = _on(F.max_pool2d_with_indices, _max_pool_specs(2))
SAMPLES["F:max_pool3d_with_indices"] = _on(F.max_pool3d_with_indices, _max_pool_specs(3))


def _avg_pool_specs(nd):
    k1 = 2 if nd == 2 else (1, 2, 2)
    return [
        lambda f, o: (f, (_lead(o["x"], nd), k1), {}),
        lambda f, o: (f, (_lead(o["x"], nd), k1, 1, (0,) * (nd - 2) + (1, 1)),
                      {"count_include_pad": False}),
        lambda f, o: (f, (_r(2, 3, *(7,) * nd), 3, 2, 1),
                      {"ceil_mode": True, "divisor_override": 2}),
        lambda f, o: (f, (_cl(1, 2, *(6,) * nd), (2,) * (nd - 1) + (3,)), {}),
        lambda f, o: (f, (_r(1, 1, *(6,) * nd), 2), {"padding": 2}),  # padding > k/2
    ]


SAMPLES["F:avg_pool2d"] = _on(F.avg_pool2d, _avg_pool_specs(2))
SAMPLES["F:avg_pool3d"] = _on(F.avg_pool3d, _avg_pool_specs(3))


def _adaptive_specs(nd, **kw):
    return [
        lambda f, o: (f, (_lead(o["x"], nd), (2,) * nd), dict(kw)),
        lambda f, o: (f, (_lead(o["x"], nd), 1), dict(kw)),
        lambda f, o: (f, (_lead(o["x"], nd), (None,) * (nd - 1) + (3,)), dict(kw)),
        lambda f, o: (f, (_cl(2, 3, *(7,) * nd), (3,) * (nd - 1) + (5,)), dict(kw)),
        lambda f, o: (f, (_lead(o["x"], nd - 1), 2), dict(kw)),  # unbatched
    ]


SAMPLES["F:adaptive_avg_pool2d"] = _on(F.adaptive_avg_pool2d, _adaptive_specs(2))
SAMPLES["F:adaptive_avg_pool3d"] = _on(F.adaptive_avg_pool3d, _adaptive_specs(3))
for _nd in (2, 3):
    SAMPLES[f"F:adaptive_max_pool{_nd}d"] = _on(
        getattr(F, f"adaptive_max_pool{_nd}d"),
        _adaptive_specs(_nd) + _adaptive_specs(_nd, return_indices=True)[:2])
    SAMPLES[f"F:adaptive_max_pool{_nd}d_with_indices"] = _on(
        getattr(F, f"adaptive_max_pool{_nd}d_with_indices"), _adaptive_specs(_nd))


def _lp_specs(nd):
    k1 = 2 if nd == 2 else (1, 2, 2)
    return [
        lambda f, o: (f, (_lead(o["x"], nd), 2, k1), {}),
        lambda f, o: (f, (_lead(o["x"], nd), 1.5, (1,) * (nd - 1) + (2,)), {"stride": 1}),
        lambda f, o: (f, (_r(2, 3, *(7,) * nd).abs(), 3, 3), {"stride": 2, "ceil_mode": True}),
    ]


SAMPLES["F:lp_pool2d"] = _on(F.lp_pool2d, _lp_specs(2))
SAMPLES["F:lp_pool3d"] = _on(F.lp_pool3d, _lp_specs(3))


def _unpool_specs(nd):
    pool = getattr(F, f"max_pool{nd}d")
    unpool = getattr(F, f"max_unpool{nd}d")

    def pooled(shape, k, s=None):
        return pool(_r(*shape), k, s, return_indices=True)

    spatial = {1: (8,), 2: (4, 6), 3: (2, 4, 6)}[nd]
    return [
        lambda o: (unpool, (*pooled((1, 2) + spatial, 2), 2), {}),
        lambda o: (unpool, (*pooled((2,) + spatial, 2), 2), {}),  # unbatched
        lambda o: (unpool, (*pooled((1, 2) + spatial, 2), 2),
                   {"output_size": tuple(s + 1 for s in spatial)}),
        lambda o: (unpool, (*pooled((1, 2) + spatial, 2, 1), 2), {"stride": 1, "padding": 0}),
        lambda o: (unpool, (*pooled((1, 2) + spatial, 2), 2),
                   {"output_size": tuple(s + 2 for s in spatial)}),  # output_size too large
    ]


for _nd in (1, 2, 3):
    SAMPLES[f"F:max_unpool{_nd}d"] = _unpool_specs(_nd)

SAMPLES["F:unfold"] = [
    lambda o: (F.unfold, (_lead(o["x"], 2), 2), {}),
    lambda o: (F.unfold, (_lead(o["x"], 1), (2, 3)), {"padding": 1, "stride": 2}),  # unbatched
    lambda o: (F.unfold, (_cl(2, 3, 6, 7), (2, 3)), {"dilation": 2, "padding": (1, 0)}),
    lambda o: (F.unfold, (_r(1, 1, 2, 2), 3), {}),  # kernel larger than the input
]
SAMPLES["F:pixel_shuffle"] = [
    lambda o: (F.pixel_shuffle, (o["x"].t()[:, None] if o["x"].ndim == 2 else o["x"], 2),
               {}),  # (4, 1, 3): channels 4
    lambda o: (F.pixel_shuffle, (_cl(2, 8, 2, 3), 2), {}),
    lambda o: (F.pixel_shuffle, (_lead(o["x"], 1), 2), {}),  # channels 1: not divisible
]
SAMPLES["F:pdist"] = [
    lambda o: (F.pdist, (_cl(4, 3),), {}),
    lambda o: (F.pdist, (_cl(4, 3), 1.0), {}),
    lambda o: (F.pdist, (_cl(2, 3, 4),), {}),  # 3-D: torch's error
]
SAMPLES["F:multilabel_margin_loss"] = [
    lambda o: (F.multilabel_margin_loss, (o["x"], o["i"]), {}),
    lambda o: (F.multilabel_margin_loss, (o["x"], o["i"]), {"reduction": "none"}),
]
SAMPLES["F:channel_shuffle"] = [
    lambda o: (F.channel_shuffle, (_cl(2, 6, 2, 3), 3), {}),
    lambda o: (F.channel_shuffle, (_lead(o["x"], 1), 1), {}),
    lambda o: (F.channel_shuffle, (_cl(2, 6, 2, 3), 4), {}),  # 6 channels: not divisible
]
SAMPLES["F:pixel_unshuffle"] = [
    lambda o: (F.pixel_unshuffle, (_lead(o["x"], 2), 1), {}),
    lambda o: (F.pixel_unshuffle, (_cl(2, 1, 4, 6), 2), {}),
    lambda o: (F.pixel_unshuffle, (_lead(o["x"], 2), 2), {}),  # height 3: not divisible
]

# ---- resampling -------------------------------------------------------------------------------

SAMPLES["F:interpolate"] = [
    lambda o: (F.interpolate, (_lead(o["x"], 1),), {"scale_factor": 2}),
    lambda o: (F.interpolate, (_lead(o["x"], 1), 7), {"mode": "linear", "align_corners": True}),
    lambda o: (F.interpolate, (_lead(o["x"], 2), (5, 6)), {"mode": "bilinear"}),
    lambda o: (F.interpolate, (_lead(o["x"], 2),), {"scale_factor": (1.5, 2.0),
                                                    "mode": "bicubic"}),
    lambda o: (F.interpolate, (_cl(2, 3, 7, 8), (3, 2)), {"mode": "area"}),
    lambda o: (F.interpolate, (_lead(o["x"], 2),), {"scale_factor": 1.7, "mode": "nearest-exact",
                                                    "recompute_scale_factor": True}),
    lambda o: (F.interpolate, (_r(1, 2, 2, 3, 4), (3, 4, 5)), {"mode": "trilinear"}),
    lambda o: (F.interpolate, (_lead(o["x"], 2), (5, 6)), {"mode": "bilinear",
                                                           "antialias": True}),
    lambda o: (F.interpolate, (_cl(1, 2, 7, 8),), {"scale_factor": 0.4, "mode": "bicubic",
                                                   "antialias": True}),
    lambda o: (F.interpolate, (_cl(1, 2, 7, 8), (3, 11)), {"mode": "lanczos", "antialias": True}),
    lambda o: (F.interpolate, (_lead(o["x"], 1), 7), {"mode": "bilinear"}),  # 3-D: error
]
SAMPLES["F:upsample"] = [
    lambda o: (F.upsample, (_lead(o["x"], 2),), {"scale_factor": 2}),
    lambda o: (F.upsample, (_lead(o["x"], 2), (5, 7)), {"mode": "bilinear",
                                                        "align_corners": True}),
    lambda o: (F.upsample, (_lead(o["x"], 1), 9), {"mode": "nearest", "align_corners": True}),
]
SAMPLES["F:upsample_nearest"] = [
    lambda o: (F.upsample_nearest, (_lead(o["x"], 2),), {"scale_factor": 2}),
    lambda o: (F.upsample_nearest, (_cl(1, 2, 3, 4), (5, 5)), {}),
]
SAMPLES["F:upsample_bilinear"] = [
    lambda o: (F.upsample_bilinear, (_lead(o["x"], 2),), {"scale_factor": 2}),
    lambda o: (F.upsample_bilinear, (_cl(1, 2, 3, 4), (5, 5)), {}),
]
SAMPLES["F:pad"] = [
    lambda o: (F.pad, (o["x"], (1, 2)), {}),
    lambda o: (F.pad, (o["x"], (1, 1, 2, 0)), {"value": 3.0}),
    lambda o: (F.pad, (o["x"], (-1, 0)), {}),  # negative pad crops
    lambda o: (F.pad, (_lead(o["x"], 1), (2, 1)), {"mode": "reflect"}),
    lambda o: (F.pad, (_lead(o["x"], 2), (1, 1, 1, 1)), {"mode": "replicate"}),
    lambda o: (F.pad, (_lead(o["x"], 1), (1, 2)), {"mode": "circular"}),
    lambda o: (F.pad, (_r(1, 2, 3, 4, 5), (1, 0, 1, 0, 1, 0)), {"mode": "replicate"}),
    lambda o: (F.pad, (_lead(o["x"], 1), (4, 0)), {"mode": "reflect"}),  # pad >= size
    lambda o: (F.pad, (o["x"], (1,)), {}),  # odd pad length
]
SAMPLES["F:affine_grid"] = [
    lambda o: (F.affine_grid, (_r(2, 2, 3), (2, 1, 4, 5)), {"align_corners": False}),
    lambda o: (F.affine_grid, (_r(1, 2, 3), [1, 3, 2, 2]), {"align_corners": True}),
    lambda o: (F.affine_grid, (_r(1, 3, 4), (1, 1, 2, 3, 4)), {"align_corners": False}),
    lambda o: (F.affine_grid, (_r(2, 2, 3), (1, 1, 4, 5)), {"align_corners": False}),  # N differs
]


SAMPLES["F:grid_sample"] = [
    lambda o: (F.grid_sample, (_r(1, 2, 4, 5), _grid(1, 3, 3, 2)), {"align_corners": False}),
    lambda o: (F.grid_sample, (_cl(2, 2, 4, 5), _grid(2, 2, 6, 2)),
               {"mode": "nearest", "padding_mode": "border", "align_corners": True}),
    lambda o: (F.grid_sample, (_lead(o["x"], 2), _grid(1, 3, 3, 2)),
               {"mode": "bicubic", "padding_mode": "reflection", "align_corners": False}),
    lambda o: (F.grid_sample, (_r(1, 2, 3, 4, 5), _grid(1, 2, 2, 2, 3)), {"align_corners": False}),
    lambda o: (F.grid_sample, (_r(1, 2, 4, 5), _grid(2, 3, 3, 2)), {"align_corners": False}),
    lambda o: (F.grid_sample, (_r(1, 2, 3, 4, 5), _grid(1, 2, 2, 2, 3)),
               {"mode": "nearest", "padding_mode": "reflection", "align_corners": True}),
    lambda o: (F.grid_sample, (_r(1, 2, 3, 4, 5), _grid(1, 2, 2, 2, 3)),
               {"mode": "bicubic", "align_corners": True}),  # 5-D bicubic: torch's error
]

# ---- normalisation ----------------------------------------------------------------------------

SAMPLES["F:batch_norm"] = [
    lambda o: (F.batch_norm, (o["x"], _r(4), _r(4).abs()), {}),  # eval, (N=3, C=4)
    lambda o: (F.batch_norm, (o["x"], _r(4), _r(4).abs(), _r(4), _r(4)),
               {"training": True, "momentum": 0.2}),
    lambda o: (F.batch_norm, (_cl(2, 3, 4, 5), None, None, _r(3).requires_grad_()),
               {"training": True}),
    lambda o: (F.batch_norm, (_r(2, 3, 4, 5, 2), _r(3), _r(3).abs()), {"eps": 1e-3}),
    lambda o: (F.batch_norm, (o["x"], _r(3), _r(3).abs()), {}),  # stats do not fit
]
SAMPLES["F:instance_norm"] = [
    lambda o: (F.instance_norm, (_lead(o["x"], 1),), {}),  # (1, C=3, L=4)
    lambda o: (F.instance_norm, (_r(2, 3, 5), None, None, _r(3), _r(3)), {}),
    lambda o: (F.instance_norm, (_cl(2, 3, 4, 5), _r(3), _r(3).abs()),
               {"use_input_stats": True, "momentum": 0.3}),
    lambda o: (F.instance_norm, (_r(2, 3, 5), _r(3), _r(3).abs()), {"use_input_stats": False}),
]
SAMPLES["F:layer_norm"] = [
    lambda o: (F.layer_norm, (o["x"], (4,)), {}),
    lambda o: (F.layer_norm, (o["x"], (4,), _r(4), _r(4)), {"eps": 1e-3}),
    lambda o: (F.layer_norm, (o["x"], (3, 4), _r(3, 4).requires_grad_()), {}),
    lambda o: (F.layer_norm, (_cl(2, 3, 4, 5), [4, 5]), {}),
    lambda o: (F.layer_norm, (o["x"], (5,)), {}),  # shape does not fit
]
SAMPLES["F:rms_norm"] = [
    lambda o: (F.rms_norm, (o["x"], (4,)), {}),
    lambda o: (F.rms_norm, (o["x"], [3, 4], _r(3, 4)), {"eps": 1e-3}),
    lambda o: (F.rms_norm, (_cl(2, 3, 4, 5), (5,), _r(5)), {}),
    lambda o: (F.rms_norm, (o["x"], (2,)), {}),  # shape does not fit
]
SAMPLES["F:local_response_norm"] = [
    lambda o: (F.local_response_norm, (_lead(o["x"], 1), 2), {}),
    lambda o: (F.local_response_norm, (_cl(2, 5, 6, 7), 3), {"alpha": 1e-2, "beta": 0.5,
                                                             "k": 2.0}),
    lambda o: (F.local_response_norm, (_r(1, 4, 2, 3, 3), 3), {}),
    lambda o: (F.local_response_norm, (o["x"], 2), {}),  # fewer than 3 dims
]
SAMPLES["F:prelu"] = [
    lambda o: (F.prelu, (o["x"], jtorch.tensor([0.25])), {}),
    lambda o: (F.prelu, (o["x"], _r(4)), {}),  # one weight per channel (dim 1)
    lambda o: (F.prelu, (_cl(2, 3, 4, 5), _r(3).requires_grad_()), {}),
    lambda o: (F.prelu, (o["x"], _r(5)), {}),  # weight does not fit
]

# ---- losses -----------------------------------------------------------------------------------


SAMPLES["F:binary_cross_entropy"] = [
    lambda o: (F.binary_cross_entropy, (o["x"].sigmoid(), o["y"].sigmoid()), {}),
    lambda o: (F.binary_cross_entropy, (o["x"].sigmoid(), o["y"].sigmoid(), _r(4).abs()),
               {"reduction": "none"}),
    lambda o: (F.binary_cross_entropy, (o["x"].sigmoid(), o["y"].sigmoid()),
               {"reduction": "sum"}),
    lambda o: (F.binary_cross_entropy, (o["x"].sigmoid(), _r(5).sigmoid()), {}),  # sizes differ
]
SAMPLES["F:cosine_embedding_loss"] = [
    lambda o: (F.cosine_embedding_loss, (o["x"], o["y"], _targets(o, 2) * 2 - 1), {}),
    lambda o: (F.cosine_embedding_loss, (o["x"], o["y"], _targets(o, 2).float() * 2 - 1),
               {"margin": 0.5, "reduction": "none"}),
    lambda o: (F.cosine_embedding_loss, (_vec(o["x"], 4), _vec(o["y"], 4), jtorch.tensor(1.0)),
               {"reduction": "sum"}),
]
# A call that gets past the argument checks reads the data (torch's ``torch.any(var < 0)``),
# which raises on meta in torch as well: only the argument errors, which come first, are swept.
SAMPLES["F:gaussian_nll_loss"] = [
    lambda o: (F.gaussian_nll_loss, (o["x"], o["y"], _r(2, 3).abs()), {}),  # var does not fit
    lambda o: (F.gaussian_nll_loss, (o["x"], o["y"], o["z"].abs()), {"reduction": "bad"}),
]
SAMPLES["F:multi_margin_loss"] = [
    lambda o: (F.multi_margin_loss, (o["x"], _targets(o, 4)), {}),
    lambda o: (F.multi_margin_loss, (o["x"], _targets(o, 4)),
               {"p": 2, "margin": 0.5, "weight": _r(4).abs(), "reduction": "none"}),
    lambda o: (F.multi_margin_loss, (o["x"], _targets(o, 4)), {"p": 3}),  # p not 1 or 2
]
SAMPLES["F:nll_loss"] = [
    lambda o: (F.nll_loss, (o["x"], _targets(o, 4)), {}),
    lambda o: (F.nll_loss, (o["x"], _targets(o, 4)),
               {"weight": _r(4).abs(), "reduction": "none"}),
    lambda o: (F.nll_loss, (o["x"], _targets(o, 4)), {"ignore_index": 1, "reduction": "sum"}),
    lambda o: (F.nll_loss, (_cl(2, 4, 3, 5), _long(np.arange(30).reshape(2, 3, 5) % 4)), {}),
    lambda o: (F.nll_loss, (o["x"], _targets(o, 4).float()), {}),  # float target
]

# ---- attention --------------------------------------------------------------------------------


def _mha(o, **kw):
    """F.multi_head_attention_forward on x, y, z as (L=3, E=4) unbatched query/key/value."""
    args = (o["x"], o["y"], o["z"], 4, 2, _r(12, 4), _r(12), None, None, False, 0.0, _r(4, 4),
            _r(4))
    return F.multi_head_attention_forward, args, dict({"training": False}, **kw)


SAMPLES["F:multi_head_attention_forward"] = [
    lambda o: _mha(o),
    lambda o: _mha(o, need_weights=False),
    lambda o: _mha(o, average_attn_weights=False, attn_mask=jtorch.zeros(3, 3)),
    lambda o: (F.multi_head_attention_forward,
               (_r(3, 2, 4), _r(5, 2, 4), _r(5, 2, 4), 4, 1, _r(12, 4), _r(12), _r(1, 1, 4),
                _r(1, 1, 4), True, 0.0, _r(4, 4), _r(4)),
               {"training": False, "key_padding_mask": jtorch.zeros(2, 5, dtype=jtorch.bool)}),
    lambda o: (F.multi_head_attention_forward,
               (o["x"], o["y"], o["z"], 5, 2, _r(15, 5), _r(15), None, None, False, 0.0,
                _r(5, 5), _r(5)), {"training": False}),  # embed_dim_to_check differs
]

# ---- argument forms the patterns above do not reach (each selects an OpDef of its own) --------

SAMPLES["F:gelu"] = [lambda o: (F.gelu, (o["x"],), {"approximate": "tanh"})]
SAMPLES["torch:logit"] = [lambda o: (jtorch.logit, (o["x"].sigmoid(),), {"eps": 1e-6})]
SAMPLES["torch:div"] = [
    lambda o: (jtorch.div, (o["x"], o["y"]), {"rounding_mode": "trunc"}),
    lambda o: (jtorch.div, (o["i"], 2), {"rounding_mode": "floor"}),
    lambda o: (jtorch.div, (o["x"], o["y"]), {"rounding_mode": "round"}),  # unknown mode
]
_MAX_MIN = [
    lambda f, o: (f, (o["x"], 1), {}),  # (values, indices)
    lambda f, o: (f, (o["x"],), {"dim": 0, "keepdim": True}),
    lambda f, o: (f, (o["x"], o["y"]), {}),  # elementwise
    lambda f, o: (f, (o["i"], -1), {}),
]
for _name in ("max", "min"):
    SAMPLES.update(_pair(_name, _MAX_MIN, out=[
        lambda f, o: (f, (o["x"], 1), {"out": (_out(), _long([]))})]))
SAMPLES["torch:norm"] = [
    lambda o: (jtorch.norm, (o["x"], 1, 1), {}),
    lambda o: (jtorch.norm, (o["x"], float("inf")), {"dim": 0, "keepdim": True}),
    lambda o: (jtorch.norm, (o["x"], -float("inf")), {}),
    lambda o: (jtorch.norm, (o["x"], 2), {"dim": (0, 1)}),
    lambda o: (jtorch.norm, (o["x"], "fro"), {"dtype": jtorch.float64}),
]
SAMPLES["torch:var"] = [lambda o: (jtorch.var, (o["x"], 1), {"correction": 0, "keepdim": True})]
SAMPLES["torch:std"] = [lambda o: (jtorch.std, (o["x"],), {"dim": (0, 1), "unbiased": False})]
SAMPLES["torch:nan_to_num"] = [
    lambda o: (jtorch.nan_to_num, (o["i"],), {}),  # integers: a copy
    lambda o: (jtorch.nan_to_num, (o["x"],), {"nan": 0.0, "posinf": 1.0, "out": _out()}),
]
SAMPLES["method:view"] = [
    lambda o: (_m("view"), (o["x"], jtorch.int32), {}),
    lambda o: (_m("view"), (o["x"], jtorch.float16), {}),  # last dim doubles
    lambda o: (_m("view"), (o["x"], jtorch.float64), {}),  # last dim halves (0-d: error)
    lambda o: (_m("view"), (o["x"], 2, -1), {}),
]
SAMPLES["torch:repeat_interleave"] = [
    lambda o: (jtorch.repeat_interleave, (o["x"], _long(np.arange(_size(o["x"], 0)) % 3)),
               {"dim": 0}),  # data-dependent size
    lambda o: (jtorch.repeat_interleave, (o["x"], _long([1, 0, 2, 1])),
               {"dim": -1, "output_size": 4}),
    lambda o: (jtorch.repeat_interleave, (_long([1, 2, 0]),), {}),
    lambda o: (jtorch.repeat_interleave, (o["x"], _long([1, 2])), {"dim": 1}),  # sizes differ
]

# ---- jtorch.linalg (a namespace the surface sweep does not list) ------------------------------

_LA = jtorch.linalg
SAMPLES["linalg:matmul"] = [
    lambda o: (_LA.matmul, (o["x"], o["y"].t()), {}),
    lambda o: (_LA.matmul, (o["x"], o["y"]), {"out": _out()}),  # inner dims differ
]
SAMPLES["linalg:vecdot"] = [
    lambda o: (_LA.vecdot, (o["x"], o["y"]), {}),
    lambda o: (_LA.vecdot, (o["x"], o["y"]), {"dim": 0}),
    lambda o: (_LA.vecdot, (o["x"], _vec(o["y"], 3)), {}),  # sizes differ
]
SAMPLES["linalg:vector_norm"] = [
    lambda o: (_LA.vector_norm, (o["x"],), {}),
    lambda o: (_LA.vector_norm, (o["x"], 1, 1), {"keepdim": True}),
    lambda o: (_LA.vector_norm, (o["x"], float("inf")), {"dim": (0, 1)}),
    lambda o: (_LA.vector_norm, (o["x"], 0.5), {"dtype": jtorch.float64}),
    lambda o: (_LA.vector_norm, (o["i"],), {}),  # integer input
]
SAMPLES["linalg:matrix_norm"] = [
    lambda o: (_LA.matrix_norm, (o["x"],), {}),
    lambda o: (_LA.matrix_norm, (o["x"], "nuc"), {}),
    lambda o: (_LA.matrix_norm, (o["x"], 2), {"keepdim": True}),
    lambda o: (_LA.matrix_norm, (_r(2, 3, 4), -1), {"dim": (2, 1)}),
    lambda o: (_LA.matrix_norm, (o["x"], 3), {}),  # unsupported ord
]
SAMPLES["linalg:norm"] = [
    lambda o: (_LA.norm, (o["x"],), {}),
    lambda o: (_LA.norm, (o["x"], "fro"), {}),
    lambda o: (_LA.norm, (o["x"], 2), {"dim": 1, "keepdim": True}),
    lambda o: (_LA.norm, (o["x"],), {"out": _out()}),
]
SAMPLES["linalg:multi_dot"] = [
    lambda o: (_LA.multi_dot, ([o["x"], o["y"].t(), o["z"]],), {}),
    lambda o: (_LA.multi_dot, ([_vec(o["x"], 3), o["y"], _r(4, 2)],), {}),  # 1-D first operand
    lambda o: (_LA.multi_dot, ([o["x"]],), {}),  # fewer than 2
]
SAMPLES["linalg:svdvals"] = [
    lambda o: (_LA.svdvals, (o["x"],), {}),
    lambda o: (_LA.svdvals, (_r(2, 3, 4),), {}),
    lambda o: (_LA.svdvals, (o["x"].t(),), {"out": _out()}),
]

# decompositions and solvers (ops/linalg_decomp.py): well-conditioned square matrices, SPD ones
# for Cholesky, and the sweep's (3, 4) ``x`` for the shape errors


def _sq(*batch, seed=0):
    return _r(*batch, 3, 3, seed=seed) + jtorch.eye(3) * 3


def _spd(*batch):
    a = _r(*batch, 3, 3)
    return a @ a.mT + jtorch.eye(3)


_J = jtorch
SAMPLES.update({
    "linalg:inv": [lambda o: (_LA.inv, (_sq(2),), {}), lambda o: (_LA.inv, (o["x"],), {}),
                   lambda o: (_LA.inv, (_sq(),), {"out": _out()})],
    "linalg:inv_ex": [lambda o: (_LA.inv_ex, (_sq(0),), {"check_errors": True})],
    "linalg:det": [lambda o: (_LA.det, (_sq(2),), {}), lambda o: (_LA.det, (o["x"],), {})],
    "linalg:slogdet": [lambda o: (_LA.slogdet, (_sq(2),), {})],
    "linalg:solve": [lambda o: (_LA.solve, (_sq(2), _r(3)), {}),
                     lambda o: (_LA.solve, (_sq(), _r(2, 3, 2)), {}),
                     lambda o: (_LA.solve, (_sq(), _r(4, 3)), {"left": False}),
                     lambda o: (_LA.solve, (_sq(), o["x"]), {})],
    "linalg:solve_ex": [lambda o: (_LA.solve_ex, (_sq(2), _r(2, 3, 1)), {})],
    "linalg:solve_triangular": [
        lambda o: (_LA.solve_triangular, (_sq().triu(), _r(3, 2)), {"upper": True}),
        lambda o: (_LA.solve_triangular, (_sq(2), _r(4, 3)), {"upper": False, "left": False,
                                                              "unitriangular": True})],
    "linalg:cholesky": [lambda o: (_LA.cholesky, (_spd(2),), {}),
                        lambda o: (_LA.cholesky, (_spd(),), {"upper": True}),
                        lambda o: (_LA.cholesky, (o["x"],), {})],
    "linalg:cholesky_ex": [lambda o: (_LA.cholesky_ex, (_spd(),), {})],
    "linalg:qr": [lambda o: (_LA.qr, (o["x"],), {}), lambda o: (_LA.qr, (_r(4, 3).mT,), {}),
                  lambda o: (_LA.qr, (_r(2, 4, 3),), {"mode": "complete"}),
                  lambda o: (_LA.qr, (_r(4, 3),), {"mode": "r"}),
                  lambda o: (_LA.qr, (_r(4, 3),), {"mode": "x"})],
    "linalg:eigh": [lambda o: (_LA.eigh, (_spd(2),), {}),
                    lambda o: (_LA.eigh, (_spd(),), {"UPLO": "U"})],
    "linalg:eigvalsh": [lambda o: (_LA.eigvalsh, (_spd(),), {})],
    "linalg:eig": [lambda o: (_LA.eig, (_sq(2),), {})],
    "linalg:eigvals": [lambda o: (_LA.eigvals, (_sq(),), {})],
    "linalg:svd": [lambda o: (_LA.svd, (o["x"],), {}),
                   lambda o: (_LA.svd, (_r(2, 4, 3),), {"full_matrices": False})],
    "linalg:matrix_power": [lambda o: (_LA.matrix_power, (_sq(2), 3), {}),
                            lambda o: (_LA.matrix_power, (_sq(), -2), {}),
                            lambda o: (_LA.matrix_power, (_sq(), 0), {})],
    "linalg:matrix_exp": [lambda o: (_LA.matrix_exp, (_sq(2),), {})],
    "linalg:pinv": [lambda o: (_LA.pinv, (_r(4, 3),), {}),
                    lambda o: (_LA.pinv, (_spd(),), {"hermitian": True})],
    "linalg:matrix_rank": [lambda o: (_LA.matrix_rank, (_r(4, 3),), {}),
                           lambda o: (_LA.matrix_rank, (_r(2, 3, 3),), {"atol": 0.5})],
    "linalg:lstsq": [lambda o: (_LA.lstsq, (_r(5, 3), _r(5, 2)), {}),
                     lambda o: (_LA.lstsq, (_r(5, 3), _r(5, 2)), {"driver": "gelsd"})],
    "linalg:lu_factor": [lambda o: (_LA.lu_factor, (_sq(2),), {})],
    "linalg:lu_factor_ex": [lambda o: (_LA.lu_factor_ex, (o["x"],), {})],
    "linalg:lu": [lambda o: (_LA.lu, (_r(4, 3),), {})],
    "linalg:lu_solve": [lambda o: (lambda a, b: _LA.lu_solve(*_LA.lu_factor(a), b),
                                   (_sq(), _r(3, 2)), {})],
    "linalg:householder_product": [lambda o: (_LA.householder_product, (_r(4, 3), _r(2)), {})],
    "linalg:cond": [lambda o: (_LA.cond, (_sq(2),), {}), lambda o: (_LA.cond, (_sq(), "fro"), {})],
    "linalg:cross": [lambda o: (_LA.cross, (_r(2, 3), _r(2, 3)), {})],
    "linalg:diagonal": [lambda o: (_LA.diagonal, (o["x"],), {"offset": 1})],
    "linalg:vander": [lambda o: (_LA.vander, (_r(3),), {"N": 4})],
    "linalg:tensorinv": [lambda o: (_LA.tensorinv, (_sq().reshape(3, 3, 1),), {})],
    "linalg:tensorsolve": [lambda o: (_LA.tensorsolve, (_sq().reshape(3, 3, 1), _r(3)), {})],
    "torch:det": [lambda o: (_J.det, (_sq(),), {})],
    "method:det": [lambda o: (_J.Tensor.det, (_sq(),), {})],
    "torch:logdet": [lambda o: (_J.logdet, (_spd(),), {})],
    "method:logdet": [lambda o: (_J.Tensor.logdet, (_sq(),), {})],
    "torch:slogdet": [lambda o: (_J.slogdet, (_sq(),), {})],
    "method:slogdet": [lambda o: (_J.Tensor.slogdet, (_sq(),), {})],
    "torch:inverse": [lambda o: (_J.inverse, (_sq(),), {})],
    "method:inverse": [lambda o: (_J.Tensor.inverse, (_sq(),), {})],
    "torch:pinverse": [lambda o: (_J.pinverse, (o["x"],), {})],
    "method:pinverse": [lambda o: (_J.Tensor.pinverse, (_r(4, 3),), {})],
    "torch:matrix_power": [lambda o: (_J.matrix_power, (_sq(), 2), {})],
    "method:matrix_power": [lambda o: (_J.Tensor.matrix_power, (_sq(), 2), {})],
    "torch:matrix_exp": [lambda o: (_J.matrix_exp, (_sq(),), {})],
    "method:matrix_exp": [lambda o: (_J.Tensor.matrix_exp, (_sq(),), {})],
    "torch:cholesky": [lambda o: (_J.cholesky, (_spd(),), {})],
    "method:cholesky": [lambda o: (_J.Tensor.cholesky, (_spd(), True), {})],
    "torch:cholesky_solve": [lambda o: (_J.cholesky_solve, (_r(3, 2), _spd().tril()), {})],
    "method:cholesky_solve": [lambda o: (_J.Tensor.cholesky_solve, (_r(3, 2), _spd().triu(), True),
                                         {})],
    "torch:cholesky_inverse": [lambda o: (_J.cholesky_inverse, (_spd().tril(),), {})],
    "method:cholesky_inverse": [lambda o: (_J.Tensor.cholesky_inverse, (_spd().tril(),), {})],
    "torch:qr": [lambda o: (_J.qr, (o["x"],), {}), lambda o: (_J.qr, (_r(4, 3), False), {})],
    "method:qr": [lambda o: (_J.Tensor.qr, (_r(4, 3),), {})],
    "torch:svd": [lambda o: (_J.svd, (o["x"],), {}),
                  lambda o: (_J.svd, (_r(4, 3),), {"some": False, "compute_uv": False})],
    "method:svd": [lambda o: (_J.Tensor.svd, (_r(4, 3),), {})],
    "torch:lu": [lambda o: (_J.lu, (_sq(),), {}), lambda o: (_J.lu, (_sq(),), {"get_infos": True})],
    "method:lu": [lambda o: (_J.Tensor.lu, (_sq(),), {})],
    "torch:lu_solve": [lambda o: (lambda b, a: _J.lu_solve(b, *_J.lu(a)), (_r(3, 2), _sq()), {})],
    "method:lu_solve": [lambda o: (lambda b, a: b.lu_solve(*_J.lu(a)), (_r(3, 2), _sq()), {})],
    "torch:lu_unpack": [lambda o: (lambda a: _J.lu_unpack(*_J.lu(a)), (_r(2, 3, 4),), {})],
    "torch:triangular_solve": [lambda o: (_J.triangular_solve, (_r(3, 2), _sq()), {}),
                               lambda o: (_J.triangular_solve, (_r(3, 2), _sq()),
                                          {"transpose": True, "upper": False})],
    "method:triangular_solve": [lambda o: (_J.Tensor.triangular_solve, (_r(3, 2), _sq()), {})],
    "torch:geqrf": [lambda o: (_J.geqrf, (o["x"],), {})],
    "method:geqrf": [lambda o: (_J.Tensor.geqrf, (_r(4, 3),), {})],
    "torch:orgqr": [lambda o: (_J.orgqr, (_r(4, 3), _r(2)), {})],
    "method:orgqr": [lambda o: (_J.Tensor.orgqr, (_r(4, 3), _r(3)), {})],
    "torch:ormqr": [lambda o: (_J.ormqr, (_r(4, 3), _r(3), _r(4, 2)), {})],
    "method:ormqr": [lambda o: (_J.Tensor.ormqr, (_r(4, 3), _r(3), _r(2, 4), False, True), {})],
    "torch:frobenius_norm": [lambda o: (_J.frobenius_norm, (o["x"], (0, 1)), {})],
    "torch:nuclear_norm": [lambda o: (_J.nuclear_norm, (o["x"],), {})],
    # removed from torch since 1.9: they raise torch's RuntimeError
    "torch:matrix_rank": [lambda o: (_J.matrix_rank, (o["x"],), {})],
    "torch:symeig": [lambda o: (_J.symeig, (o["x"],), {})],
    "method:symeig": [lambda o: (_J.Tensor.symeig, (o["x"],), {})],
    "torch:eig": [lambda o: (_J.eig, (o["x"],), {})],
    "method:eig": [lambda o: (_J.Tensor.eig, (o["x"],), {})],
    "torch:solve": [lambda o: (_J.solve, (o["x"], o["y"]), {})],
    "method:solve": [lambda o: (_J.Tensor.solve, (o["x"], o["y"]), {})],
    "torch:lstsq": [lambda o: (_J.lstsq, (o["x"], o["y"]), {})],
    "method:lstsq": [lambda o: (_J.Tensor.lstsq, (o["x"], o["y"]), {})],
})

# ---- optimizer steps: one fused in-place update per parameter ----------------------------------


def _step(cls, **options):
    """Two steps of ``cls`` on parameter ``p`` with gradient ``g``; returns ``p`` and its state
    buffers (not ``step``: torch keeps that count on the CPU whatever the parameter's device;
    nor NAdam's ``mu_product`` and ASGD's ``eta``/``mu``, 0-d scalars each step reads as
    numbers, kept on the CPU here where torch puts them on the parameter's device)."""
    def f(p, g):
        opt = cls([p], **options)
        for _ in range(2):
            p.grad = g
            opt.step()
        state = opt.state[p]
        return (p, *[state[k] for k in sorted(state)
                     if k not in ("step", "mu_product", "eta", "mu")])
    return f


def _steps(cls, *option_sets):
    return [lambda o, kw=kw: (_step(cls, **kw), (_rg(o["x"]), o["y"]), {}) for kw in option_sets]


_OPT = jtorch.optim
SAMPLES["optim:SGD"] = _steps(_OPT.SGD, {"lr": 0.1}, {"lr": 0.1, "momentum": 0.9, "nesterov": True,
                                                   "weight_decay": 0.01})
SAMPLES["optim:Adam"] = _steps(_OPT.Adam, {}, {"amsgrad": True, "weight_decay": 0.1,
                                            "maximize": True})
SAMPLES["optim:AdamW"] = _steps(_OPT.AdamW, {"lr": 0.01})
SAMPLES["optim:Adagrad"] = _steps(_OPT.Adagrad, {}, {"lr_decay": 0.1, "weight_decay": 0.1})
SAMPLES["optim:RMSprop"] = _steps(_OPT.RMSprop, {}, {"momentum": 0.9, "centered": True})
SAMPLES["optim:Adadelta"] = _steps(_OPT.Adadelta, {}, {"weight_decay": 0.1, "maximize": True})
SAMPLES["optim:Adamax"] = _steps(_OPT.Adamax, {}, {"weight_decay": 0.1})
SAMPLES["optim:NAdam"] = _steps(_OPT.NAdam, {}, {"decoupled_weight_decay": True,
                                                 "weight_decay": 0.1})
SAMPLES["optim:RAdam"] = _steps(_OPT.RAdam, {}, {"decoupled_weight_decay": True,
                                                 "weight_decay": 0.1})
SAMPLES["optim:ASGD"] = _steps(_OPT.ASGD, {}, {"t0": 0, "weight_decay": 0.1})
SAMPLES["optim:Rprop"] = _steps(_OPT.Rprop, {}, {"maximize": True})

# ---- samplers of jtorch.distributions (ops/random_dists.py): non-negative rates and counts,
# probabilities in (0, 1), concentrations > 0
SAMPLES.update({
    "torch:poisson": [lambda o: (jtorch.poisson, (o["x"].abs(),), {})],
    "torch:binomial": [lambda o: (jtorch.binomial, ((o["x"].abs() * 3).floor(), o["y"].sigmoid()),
                                  {}),
                       lambda o: (jtorch.binomial, (o["x"].abs().double(), _r(4).double().sigmoid()),
                                  {})],
    "torch:_standard_gamma": [lambda o: (jtorch._standard_gamma, (o["x"].abs(),), {})],
    "torch:_sample_dirichlet": [lambda o: (jtorch._sample_dirichlet, (o["x"].abs() + 0.1,), {})],
    "torch:_standard_gamma_grad": [
        lambda o: (jtorch._standard_gamma_grad, (o["x"].abs() + 0.1, o["y"].abs() + 0.1), {})],
    "torch:_dirichlet_grad": [
        lambda o: (jtorch._dirichlet_grad, (o["x"].sigmoid(), o["y"].abs() + 0.1,
                                            o["y"].abs() + o["z"].abs() + 0.2), {})],
})

# -- FACTORIES ----------------------------------------------------------------------------------
# name -> list of functions ``sample(device)`` calling a factory on ``device`` ("cpu" or "meta").

FACTORIES: dict = {
    "torch:range": [lambda d: jtorch.range(0, 3, device=d), lambda d: jtorch.range(1, 2, 0.5, device=d)],
    "torch:empty_permuted": [lambda d: jtorch.empty_permuted((2, 3, 4), (0, 2, 1), device=d)],
    "torch:hann_window": [lambda d: jtorch.hann_window(5, device=d)],
    "torch:hamming_window": [lambda d: jtorch.hamming_window(5, False, device=d)],
    "torch:blackman_window": [lambda d: jtorch.blackman_window(6, dtype=jtorch.float64, device=d)],
    "torch:bartlett_window": [lambda d: jtorch.bartlett_window(1, device=d)],
    "torch:kaiser_window": [lambda d: jtorch.kaiser_window(4, device=d)],
    "torch:arange": [
        lambda d: jtorch.arange(5, device=d),
        lambda d: jtorch.arange(1, 2.5, 0.5, device=d),
        lambda d: jtorch.arange(0, 10, 3, dtype=jtorch.int32, device=d),
        lambda d: jtorch.arange(5, 0, -1, device=d, requires_grad=False),
        lambda d: jtorch.arange(0.0, 1.0, 0.25, device=d, requires_grad=True),
        lambda d: jtorch.arange(0, 5, 0, device=d),  # step 0: error
        lambda d: jtorch.arange(5, 0, 1, device=d),  # wrong sign: error
    ],
    "torch:linspace": [
        lambda d: jtorch.linspace(0, 1, 5, device=d),
        lambda d: jtorch.linspace(2, -1, 4, dtype=jtorch.float64, device=d),
        lambda d: jtorch.linspace(0, 10, 0, device=d),
        lambda d: jtorch.linspace(0, 10, 3, dtype=jtorch.int64, device=d),
        lambda d: jtorch.linspace(0, 1, -1, device=d),  # negative steps: error
    ],
    "torch:logspace": [
        lambda d: jtorch.logspace(0, 2, 3, device=d),
        lambda d: jtorch.logspace(0, 3, 4, base=2.0, dtype=jtorch.float64, device=d),
        lambda d: jtorch.logspace(0, 1, 1, device=d, requires_grad=True),
    ],
    "torch:eye": [
        lambda d: jtorch.eye(3, device=d),
        lambda d: jtorch.eye(2, 4, dtype=jtorch.int64, device=d),
        lambda d: jtorch.eye(0, device=d),
        lambda d: jtorch.eye(-1, device=d),  # negative n: error
    ],
    "torch:empty": [
        lambda d: jtorch.empty(2, 3, device=d),
        lambda d: jtorch.empty((0, 4), dtype=jtorch.int32, device=d),
        lambda d: jtorch.empty((), device=d, requires_grad=True),
        lambda d: jtorch.empty(2, -1, device=d),  # negative size: error
    ],
    "torch:empty_strided": [
        lambda d: jtorch.empty_strided((2, 3), (1, 2), device=d),
        lambda d: jtorch.empty_strided((2, 3), (3, 1), dtype=jtorch.float64, device=d),
        lambda d: jtorch.empty_strided((2, 0), (1, 1), device=d),
        lambda d: jtorch.empty_strided((3, 4), (0, 1), device=d),  # expanded
    ],
    "torch:zeros": [
        lambda d: jtorch.zeros(2, 3, device=d),
        lambda d: jtorch.zeros((), dtype=jtorch.bool, device=d),
        lambda d: jtorch.zeros([0, 2], device=d, requires_grad=True),
    ],
    "torch:ones": [
        lambda d: jtorch.ones(2, 3, device=d),
        lambda d: jtorch.ones((4,), dtype=jtorch.int64, device=d),
        lambda d: jtorch.ones(0, device=d, requires_grad=True),
    ],
    "torch:full": [
        lambda d: jtorch.full((2, 3), 1.5, device=d),
        lambda d: jtorch.full((2,), 2, device=d),  # int64 from the fill value
        lambda d: jtorch.full((), True, device=d),  # bool
        lambda d: jtorch.full((3, 1), 7, dtype=jtorch.float64, device=d, requires_grad=True),
    ],
    "torch:rand": [
        lambda d: jtorch.rand(2, 3, device=d),
        lambda d: jtorch.rand((4,), dtype=jtorch.float64, device=d),
        lambda d: jtorch.rand(0, device=d, requires_grad=True),
        lambda d: jtorch.rand(2, dtype=jtorch.int64, device=d),  # not floating: error
    ],
    "torch:randn": [
        lambda d: jtorch.randn(2, 3, device=d),
        lambda d: jtorch.randn((), dtype=jtorch.float64, device=d),
        lambda d: jtorch.randn(3, 0, device=d, requires_grad=True),
    ],
    "torch:randint": [
        lambda d: jtorch.randint(0, 5, (2, 3), device=d),
        lambda d: jtorch.randint(5, (3,), device=d),
        lambda d: jtorch.randint(3, 10, (2,), dtype=jtorch.int32, device=d),
        lambda d: jtorch.randint(2, (4,), dtype=jtorch.float32, device=d),
        lambda d: jtorch.randint(5, 5, (2,), device=d),  # empty range: error
    ],
    "torch:randperm": [
        lambda d: jtorch.randperm(5, device=d),
        lambda d: jtorch.randperm(0, device=d),
        lambda d: jtorch.randperm(4, dtype=jtorch.int32, device=d),
        lambda d: jtorch.randperm(-1, device=d),  # negative n: error
    ],
    "torch:scalar_tensor": [
        lambda d: jtorch.scalar_tensor(2.5, device=d),
        lambda d: jtorch.scalar_tensor(1, dtype=jtorch.int64, device=d),
        lambda d: jtorch.scalar_tensor(True, device=d, requires_grad=True),
    ],
    "torch:tril_indices": [
        lambda d: jtorch.tril_indices(3, 3, device=d),
        lambda d: jtorch.tril_indices(4, 3, 1, device=d),
        lambda d: jtorch.tril_indices(3, 5, -1, dtype=jtorch.int32, device=d),
        lambda d: jtorch.tril_indices(0, 0, device=d),
    ],
    "torch:triu_indices": [
        lambda d: jtorch.triu_indices(3, 3, device=d),
        lambda d: jtorch.triu_indices(4, 3, 1, device=d),
        lambda d: jtorch.triu_indices(3, 5, -2, dtype=jtorch.int32, device=d),
        lambda d: jtorch.triu_indices(2, 0, device=d),
    ],
}

# -- NOT_SWEPT ----------------------------------------------------------------------------------
# Callables that are no op on tensors (global state, dtype arithmetic, I/O), each with why.

_GLOBAL = "global setting, no tensor in or out"
_RNG = "global random-generator state, no tensor operand"
NOT_SWEPT: dict = {
    "torch:bincount": "its output length is the largest value plus one (torch has no meta kernel)",
    "method:bincount": "its output length is the largest value plus one (torch has no meta kernel)",
    "torch:compile": "a decorator over functions and modules (tests/compile sweeps every op "
                     "through it)",
    # read values (a Python bool/list/array or a host copy): torch raises on meta tensors too;
    # test_op_path.test_reading_meta_values_raises_torchs_errors checks the errors
    "method:allclose": "returns a Python bool computed from the values",
    "torch:allclose": "returns a Python bool computed from the values",
    "method:equal": "returns a Python bool computed from the values",
    "torch:equal": "returns a Python bool computed from the values",
    "method:cpu": "copies the values to the host",
    "method:numpy": "hands out the values as a NumPy array",
    "method:tolist": "hands out the values as Python numbers",
    # dtype and shape arithmetic
    "torch:broadcast_shapes": "shape arithmetic on Python sizes, no tensor in or out",
    "torch:can_cast": "dtype arithmetic, no tensor in or out",
    "torch:promote_types": "dtype arithmetic, no tensor in or out",
    # global settings
    "torch:get_default_dtype": _GLOBAL,
    "torch:set_default_dtype": _GLOBAL,
    "torch:get_default_device": _GLOBAL,
    "torch:set_default_device": _GLOBAL,
    "torch:get_num_interop_threads": _GLOBAL,
    "torch:get_num_threads": _GLOBAL,
    "torch:set_num_interop_threads": _GLOBAL,
    "torch:set_num_threads": _GLOBAL,
    "torch:get_printoptions": _GLOBAL,
    "torch:set_printoptions": _GLOBAL,
    "torch:is_anomaly_check_nan_enabled": _GLOBAL,
    "torch:is_anomaly_enabled": _GLOBAL,
    "torch:is_grad_enabled": _GLOBAL,
    "torch:is_inference_mode_enabled": _GLOBAL,
    **dict.fromkeys([f"torch:{n}" for n in (
        "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
        "get_float32_matmul_precision", "is_deterministic_algorithms_warn_only_enabled",
        "is_warn_always_enabled", "set_deterministic_debug_mode", "set_float32_matmul_precision",
        "set_warn_always", "use_deterministic_algorithms", "compiled_with_cxx11_abi")],
        _GLOBAL + " (tests/test_settings.py)"),
    "torch:vmap": "a function transform, swept over this surface in tests/func/test_vmap.py",
    "F:gumbel_softmax": "random draws (exponential_) then softmax: tests/nn/test_more_layers.py",
    "torch:set_default_tensor_type": _GLOBAL + " (tests/test_module_surface.py)",
    **dict.fromkeys(["method:cuda", "method:is_pinned", "method:is_shared",
                     "method:share_memory_"],
                    "device and memory queries with no data op (tests/test_module_surface.py)"),
    **dict.fromkeys([f"torch:sym_{n}" for n in ("float", "int", "ite", "max", "min", "not")],
                    "arithmetic on Python numbers and sizes, no tensor in or out "
                    "(tests/test_settings.py)"),
    # random-generator state
    "torch:get_rng_state": _RNG,
    "torch:set_rng_state": _RNG,
    "torch:initial_seed": _RNG,
    "torch:seed": _RNG,
    "torch:manual_seed": _RNG,
    # host data in and out
    "torch:from_numpy": "wraps a host NumPy array's memory: CPU only, no device to sweep",
    "torch:load": "file I/O (deserialises tensor data), not an op",
    "torch:save": "file I/O (serialises tensor data), not an op",
}


# one_hot's default num_classes=-1 reads the largest index (a value): give it explicitly
SAMPLES["F:one_hot"] = [
    lambda o: (F.one_hot, (o["i"],), {"num_classes": 3}),
    lambda o: (F.one_hot, (o["i"], 4), {}),
]

# tuple-of-ints arguments (a bare int is torch's TypeError, which the patterns above check)
SAMPLES["torch:as_strided"] = [
    lambda o: (jtorch.as_strided, (_r(3, 4), (2, 2), (1, 2)), {}),
    lambda o: (jtorch.as_strided, (_r(3, 4), [2], [3], 1), {}),
]
SAMPLES["method:as_strided"] = [
    lambda o: (jtorch.Tensor.as_strided, (_r(3, 4), (2, 2), (4, 1)), {"storage_offset": 2})]
SAMPLES["method:as_strided_"] = [lambda o: (jtorch.Tensor.as_strided_, (_r(3, 4), [6], [2]), {})]
SAMPLES["torch:flip"] = [lambda o: (jtorch.flip, (o["x"], (0,)), {}),
                         lambda o: (jtorch.flip, (o["x"],), {"dims": [-1]})]
SAMPLES["method:flip"] = [lambda o: (jtorch.Tensor.flip, (o["x"], 0), {}),
                          lambda o: (jtorch.Tensor.flip, (_r(2, 3), 0, 1), {}),
                          lambda o: (jtorch.Tensor.flip, (o["x"],), {"dims": (0,)})]
SAMPLES["torch:tile"] = [lambda o: (jtorch.tile, (o["x"], (2,)), {})]
SAMPLES["method:tile"] = [lambda o: (jtorch.Tensor.tile, (o["x"], 2, 1), {}),
                          lambda o: (jtorch.Tensor.tile, (o["x"], (2,)), {})]
SAMPLES["F:embedding_bag"] = [  # a float weight (an integer one is torch's dtype error, above)
    lambda o: (jtorch.nn.functional.embedding_bag, (jtorch.tensor([[0, 1], [1, 0]]), _r(3, 4)), {}),
    lambda o: (jtorch.nn.functional.embedding_bag, (jtorch.tensor([0, 1, 1]), _r(3, 2),
                                                    jtorch.tensor([0, 2])), {"mode": "max"}),
]

# the less common nn.functional forms (tests/nn/test_surface_nn_extras.py checks values)
SAMPLES["F:native_channel_shuffle"] = [
    lambda o: (F.native_channel_shuffle, (_cl(2, 6, 2, 3), 3), {}),
    lambda o: (F.native_channel_shuffle, (_lead(o["x"], 1), 1), {}),
]
SAMPLES["F:conv_tbc"] = [
    lambda o: (F.conv_tbc, (_r(5, 2, 3), _r(2, 3, 4, seed=1), _r(4, seed=2)), {}),
    lambda o: (F.conv_tbc, (_r(5, 2, 3), _r(2, 3, 4, seed=1), _r(4, seed=2), 1), {}),
    lambda o: (F.conv_tbc, (_r(5, 2, 3), _r(2, 3, 4, seed=1), _r(4, seed=2), -1), {}),
    lambda o: (F.conv_tbc, (o["x"], _r(2, 3, 4, seed=1), _r(4, seed=2)), {}),  # 2-D: an error
]


def _fractional_specs(nd):
    return [
        lambda f, o: (f, (_r(2, 3, *(7,) * nd), 2),
                      {"output_size": 3, "_random_samples": _r(2, 3, nd, seed=1).sigmoid()}),
        lambda f, o: (f, (_cl(2, 3, *(8,) * nd), (2,) * nd),
                      {"output_ratio": (0.5,) * nd, "return_indices": True,
                       "_random_samples": _r(2, 3, nd, seed=1).sigmoid()}),
        lambda f, o: (f, (_lead(o["x"], nd - 1), 2), {"output_size": 1}),  # random draws
    ]


for _nd in (2, 3):
    for _suffix in ("", "_with_indices"):
        _name = f"fractional_max_pool{_nd}d{_suffix}"
        SAMPLES[f"F:{_name}"] = _on(getattr(F, _name), _fractional_specs(_nd))
NOT_SWEPT.update({
    "F:assert_int_or_pair": "an argument check on Python values, no tensor in or out",
    "F:handle_torch_function": "the __torch_function__ protocol's dispatcher, no op of its own "
                               "(tests/nn/test_surface_nn_extras.py)",
})


# ---- ATen spellings, buffer constructors and flags (ops/aten.py) ------------------------------

PATTERNS.update({
    "torch:adjoint": "x", "torch:conj_physical_": "x", "torch:norm_except_dim": "x",
    "torch:rrelu": "x", "torch:rrelu_": "x", "torch:dropout": "x 1 1", "torch:dropout_": "x 1 1",
    "torch:alpha_dropout": "x 1 1", "torch:alpha_dropout_": "x 1 1",
    "torch:feature_dropout": "x 1 1", "torch:feature_dropout_": "x 1 1",
    "torch:feature_alpha_dropout": "x 1 1", "torch:feature_alpha_dropout_": "x 1 1",
    "torch:native_dropout": "x 1 1",
})


def _cell(name, gates):
    def spec(o):
        x = o["x"].reshape(-1, 1) if o["x"].ndim != 2 else o["x"]
        n, h = x.shape[0], 2
        hx = jtorch.zeros(n, h)
        w_ih, w_hh = jtorch.ones(gates * h, x.shape[1]), jtorch.ones(gates * h, h)
        return getattr(jtorch, name), (x, (hx, hx) if name == "lstm_cell" else hx, w_ih, w_hh), {}
    return [spec]


SAMPLES.update({
    "torch:dsplit": [lambda o: (jtorch.dsplit, (o["x"].reshape(1, 1, -1), 1), {})],
    "torch:nonzero_static": [lambda o: (jtorch.nonzero_static, (o["x"],), {"size": 3})],
    "torch:put": [lambda o: (jtorch.put, (o["x"], _pick(o["x"].numel(), 2),
                                          _vec(o["y"], len(_pick(o["x"].numel(), 2)))), {})],
    "torch:rms_norm": [lambda o: (jtorch.rms_norm, (o["x"], list(o["x"].shape[-1:])), {})],
    "torch:conv_tbc": [lambda o: (jtorch.conv_tbc, (o["x"].reshape(-1, 1, 1), jtorch.ones(1, 1, 2),
                                                    jtorch.zeros(2)), {})],
    "torch:grid_sampler": [lambda o: (jtorch.grid_sampler, (o["x"].reshape(1, 1, 1, -1),
                                                            jtorch.zeros(1, 2, 2, 2), 0, 0, False),
                                      {})],
    "torch:grid_sampler_2d": [lambda o: (jtorch.grid_sampler_2d, (o["x"].reshape(1, 1, 1, -1),
                                                                  jtorch.zeros(1, 1, 1, 2), 1, 1,
                                                                  True), {})],
    "torch:grid_sampler_3d": [lambda o: (jtorch.grid_sampler_3d, (o["x"].reshape(1, 1, 1, 1, -1),
                                                                  jtorch.zeros(1, 1, 2, 2, 3), 0, 2,
                                                                  False), {})],
    "torch:affine_grid_generator": [lambda o: (jtorch.affine_grid_generator,
                                               (jtorch.zeros(1, 2, 3) + o["x"].sum(),
                                                [1, 1, 2, 3], False), {})],
    "torch:native_batch_norm": [lambda o: (jtorch.native_batch_norm,
                                           (o["x"].reshape(-1, 1), None, None, None, None, True,
                                            0.1, 1e-5), {})],
    "torch:native_group_norm": [lambda o: (jtorch.native_group_norm,
                                           (o["x"].reshape(1, 1, -1), None, None, 1, 1,
                                            o["x"].numel(), 1, 1e-5), {})],
    "torch:rnn_tanh_cell": _cell("rnn_tanh_cell", 1), "torch:rnn_relu_cell": _cell("rnn_relu_cell", 1),
    "torch:lstm_cell": _cell("lstm_cell", 4), "torch:gru_cell": _cell("gru_cell", 3),
})

NOT_SWEPT.update({
    "torch:native_norm": "torch's kernel for sparse tensors: dense inputs raise its error",
    "torch:is_distributed": "returns a Python bool (no distributed tensors here)",
    "torch:from_dlpack": "wraps another library's memory (tests/ops/test_aten_names.py)",
    "torch:frombuffer": "wraps a Python buffer's memory (tests/ops/test_aten_names.py)",
    "torch:from_file": "reads a file (tests/ops/test_aten_names.py)",
    **{f"torch:{n}": "a process-level switch or flag, no tensor (tests/ops/test_aten_names.py)"
       for n in ("init_num_threads", "set_flush_denormal", "sym_sqrt", "sym_sum",
                 "is_autocast_enabled", "set_autocast_enabled", "is_autocast_cpu_enabled",
                 "set_autocast_cpu_enabled", "is_autocast_xla_enabled",
                 "set_autocast_xla_enabled", "is_autocast_cache_enabled",
                 "set_autocast_cache_enabled", "clear_autocast_cache",
                 "autocast_increment_nesting", "autocast_decrement_nesting")},
    "torch:cond": "takes branch functions (tests/ops/test_control_flow.py)",
    "torch:get_device_module": "returns a module (tests/test_cpu_module.py)",
    "torch:thread_safe_generator": "returns a generator or None (tests/test_cpu_module.py)",
    "torch:while_loop": "takes loop functions (tests/ops/test_control_flow.py)",
    **{f"torch:{n}": "autocast's dtype state, no tensor (tests/test_autocast_ops.py)"
       for n in ("get_autocast_dtype", "set_autocast_dtype", "get_autocast_cpu_dtype",
                 "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
                 "get_autocast_xla_dtype", "set_autocast_xla_dtype")},
})


# ---- Tensor methods beside the ATen spellings (ops/aten.py) ----------------------------------

PATTERNS.update({
    "method:adjoint": "x", "method:conj_physical_": "x", "method:swapaxes_": "x 1 1",
    "method:swapdims_": "x 1 1", "method:sum_to_size": "x",
})
SAMPLES.update({
    "torch:addmv_": [lambda o: (jtorch.addmv_, (jtorch.ones(2), jtorch.ones(2, o["x"].numel()),
                                                o["x"].reshape(-1)), {})],
    "torch:as_strided_": [lambda o: (jtorch.as_strided_, (o["x"].clone(), (1,), (1,)), {})],
    "method:dsplit": [lambda o: (_m("dsplit"), (o["x"].reshape(1, 1, -1), 1), {})],
    "method:nonzero_static": [lambda o: (_m("nonzero_static"), (o["x"],), {"size": 2})],
    "method:addmv_": [lambda o: (_m("addmv_"), (jtorch.ones(2), jtorch.ones(2, o["x"].numel()),
                                               o["x"].reshape(-1)), {})],
    "method:addr_": [lambda o: (_m("addr_"), (jtorch.ones(2, o["x"].numel()), jtorch.ones(2),
                                             o["x"].reshape(-1)), {})],
    "method:addbmm_": [lambda o: (_m("addbmm_"), (jtorch.ones(2, 3), jtorch.ones(1, 2, 1) * o["x"].sum(),
                                                 jtorch.ones(1, 1, 3)), {})],
    "method:baddbmm_": [lambda o: (_m("baddbmm_"), (jtorch.ones(1, 2, 3), jtorch.ones(1, 2, 1),
                                                   jtorch.ones(1, 1, 3) * o["x"].sum()), {})],
})
NOT_SWEPT.update({
    "method:is_distributed": "returns a Python bool (no distributed tensors here)",
    "method:const_data_ptr": "returns a memory address",
    "method:dim_order": "returns a tuple of ints from the strides",
    "method:is_set_to": "returns a Python bool comparing two tensors' memory",
    "method:is_nonzero": "returns a Python bool computed from the value",
    "method:apply_": "calls a Python function per element (tests/ops/test_aten_names.py)",
    "method:map_": "calls a Python function per element (tests/ops/test_aten_names.py)",
    "method:map2_": "calls a Python function per element (tests/ops/test_aten_names.py)",
    "method:as_subclass": "a class change, no op (tests/ops/test_aten_names.py)",
    "method:pin_memory": "needs a CUDA driver: raises torch's error here",
    "method:record_stream": "CUDA streams only: raises torch's error here",
    "method:reinforce": "removed from torch: raises its error",
    "method:resize_": "replaces the tensor's memory and shape in place, which traces and vmap "
                      "cannot follow (tests/ops/test_aten_names.py)",
    "method:resize_as_": "resize_ to another tensor's shape (tests/ops/test_aten_names.py)",
    "method:set_": "points the tensor at another storage, which traces and vmap cannot follow "
                   "(tests/ops/test_aten_names.py)",
    "torch:resize_as_": "resize_ to another tensor's shape (tests/ops/test_aten_names.py)",
    "method:resize": "deprecated copy-then-resize_ (tests/ops/test_aten_names.py)",
    "method:resize_as": "deprecated copy-then-resize_ (tests/ops/test_aten_names.py)",
    "method:module_load": "load_state_dict's hook returning its argument, no op",
    "method:new": "the legacy constructor: an empty or a data tensor (tests/ops/test_aten_names.py)",
})


# ---- nn.functional's CTC loss, linear cross entropy and grouped products ---------------------
# (tests/nn/test_surface_nn_rest.py checks values against torch)

def _ctc_lp(t=5, n=2, c=4):
    return _r(t, n, c).log_softmax(2)


def _i32(*v):
    return jtorch.tensor(v, dtype=jtorch.int32)


SAMPLES["F:ctc_loss"] = [
    lambda o: (F.ctc_loss, (_ctc_lp(), _long([[1, 2], [3, 0]]), (5, 4), (2, 1)), {}),
    lambda o: (F.ctc_loss, (_ctc_lp(), _long([1, 2, 3]), [5, 4], [2, 1]),
               {"reduction": "none", "zero_infinity": True}),
    lambda o: (F.ctc_loss, (_ctc_lp(3, 2), _long([[1, 1, 1], [2, 2, 2]]), (2, 3), (3, 3)),
               {"reduction": "sum", "blank": 0}),  # impossible alignments: inf
    lambda o: (F.ctc_loss, (_r(5, 4).log_softmax(1), _long([1, 2]), (5,), (2,)), {}),
    lambda o: (F.ctc_loss, (_ctc_lp(), _long([[1, 2]]), (5, 4), (2, 1)), {}),  # a shape error
    lambda o: (_grads(lambda x, t: F.ctc_loss(x, t, (5, 4), (2, 2))),
               (_ctc_lp().requires_grad_(), _long([[1, 2], [3, 3]])), {}),
]
SAMPLES["torch:ctc_loss"] = [
    lambda o: (jtorch.ctc_loss, (_ctc_lp(), _long([[1, 2], [3, 0]]), (5, 4), (2, 1)), {}),
    lambda o: (jtorch.ctc_loss, (_ctc_lp(), _long([[1, 2], [3, 0]]), (5, 4), (2, 1), 0, 1), {}),
]
SAMPLES["F:linear_cross_entropy"] = [
    lambda o: (F.linear_cross_entropy, (_r(4, 3), _r(5, 3, seed=1), _long([0, 4, 2, 1])), {}),
    lambda o: (F.linear_cross_entropy, (_r(4, 3), _r(5, 3, seed=1), _long([0, 4, -100, 1])),
               {"reduction": "sum",
                "options": jtorch.nn.LinearCrossEntropyOptions(batch_chunk_size=3)}),
    lambda o: (F.linear_cross_entropy, (_r(3), _r(5, 2, 3, seed=1), _long([0, 1])), {}),  # error
]
SAMPLES["F:grouped_mm"] = [
    lambda o: (F.grouped_mm, (_r(2, 3, 4), _r(2, 4, 4, seed=1)), {}),
    lambda o: (F.grouped_mm, (_r(6, 4), _r(2, 4, 4, seed=1)), {"offs": _i32(2, 5)}),
    lambda o: (F.grouped_mm, (_r(2, 3, 4), _r(4, 8, seed=1)), {"offs": _i32(4, 8)}),
    lambda o: (F.grouped_mm, (_r(3, 8), _r(8, 4, seed=1)), {"offs": _i32(3, 8)}),
    lambda o: (F.grouped_mm, (_r(2, 3, 4), _r(2, 4, 5, seed=1)), {}),  # unaligned strides
    lambda o: (_grads(lambda a, b, offs: F.grouped_mm(a, b, offs=offs)),
               (_r(6, 4).requires_grad_(), _r(2, 4, 4, seed=1).requires_grad_(), _i32(2, 6)), {}),
]
SAMPLES["F:scaled_mm"] = [
    lambda o: (F.scaled_mm, (_r(4, 8), _r(8, 4, seed=1), _r(4, 1), F.ScalingType.RowWise,
                             _r(1, 4), F.ScalingType.RowWise), {}),
]
SAMPLES["F:scaled_grouped_mm"] = [
    lambda o: (F.scaled_grouped_mm, (_r(4, 8), _r(2, 8, 4, seed=1), _r(4), F.ScalingType.RowWise,
                                     _r(2, 4), F.ScalingType.RowWise), {"offs": _i32(2, 4)}),
]
SAMPLES.update({
    f"special:{n}": [lambda o, n=n: (getattr(jtorch.special, n), (o["x"],), {})]
    for n in ("i0e", "i1", "i1e", "ndtr", "log_ndtr", "erfcx", "entr")
})
SAMPLES["special:ndtri"] = [lambda o: (jtorch.special.ndtri, (o["x"].sigmoid(),), {})]
SAMPLES["special:xlog1py"] = [lambda o: (jtorch.special.xlog1py, (o["x"], o["y"]), {})]
SAMPLES["special:zeta"] = [lambda o: (jtorch.special.zeta, (o["x"] + 2, o["y"]), {})]
# torch.special's Bessel/Airy functions and orthogonal polynomials (degree a number or a tensor)
SAMPLES.update({
    f"special:{n}": [lambda o, n=n: (getattr(jtorch.special, n), (o["x"],), {})]
    for n in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
              "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
              "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0")
})
SAMPLES.update({
    f"special:{n}": [lambda o, n=n: (getattr(jtorch.special, n), (o["x"], 3), {}),
                     lambda o, n=n: (getattr(jtorch.special, n), (o["x"], o["i"]), {})]
    for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
              "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p")
})

# -- ops/misc_numeric.py: igamma, gradient, histograms, low-rank SVD/PCA, ATen embedding_bag and
# recurrent forms (tests/ops/test_misc_torch_names.py and test_igamma.py compare values) --------
PATTERNS.update({
    "torch:igamma": "x y", "torch:igammac": "x y", "method:igamma": "x y",
    "method:igamma_": "x y", "method:igammac": "x y", "method:igammac_": "x y",
})
SAMPLES["special:gammainc"] = [lambda o: (jtorch.special.gammainc, (o["x"].abs(), o["y"].abs()), {})]
SAMPLES["special:gammaincc"] = [lambda o: (jtorch.special.gammaincc, (o["x"].abs(), o["y"]), {})]
SAMPLES["torch:gradient"] = [
    lambda o: (jtorch.gradient, (o["x"],), {}),
    lambda o: (jtorch.gradient, (o["x"],), {"spacing": 2.0, "dim": -1, "edge_order": 2}),
    lambda o: (jtorch.gradient, (o["x"],), {"spacing": [_r(3).cumsum(0)], "dim": 0}),
    lambda o: (_grads(lambda x: jtorch.gradient(x, spacing=[0.5, 2.0])[1]), (_rg(_r(3, 4)),), {}),
]
# histograms with a range (the default range reads the data's min and max: meta has none)
_HIST = [
    lambda o: (jtorch.histogram, (o["x"], 4), {"range": (-1.0, 1.0)}),
    lambda o: (jtorch.histogram, (o["x"], jtorch.linspace(-2, 2, 5)), {"weight": o["y"]}),
    lambda o: (jtorch.histogram, (o["x"], 3), {"range": (0.0, 2.0), "weight": o["y"],
                                                 "density": True}),
]
SAMPLES["torch:histogram"] = _HIST
SAMPLES["method:histogram"] = [lambda o: (_m("histogram"), (o["x"], 4), {"range": (-1.0, 1.0)})]
SAMPLES["torch:histogramdd"] = [
    lambda o: (jtorch.histogramdd, (o["x"], [2, 3, 2, 2]), {"range": [-1.0, 1.0] * 4}),
    lambda o: (jtorch.histogramdd, (_r(5, 2), [jtorch.linspace(-1, 1, 3), jtorch.linspace(0, 2, 4)]),
               {"weight": _r(5, seed=1), "density": True}),
]
SAMPLES["torch:svd_lowrank"] = [
    lambda o: (jtorch.svd_lowrank, (_r(6, 4),), {"q": 2}),
    lambda o: (jtorch.svd_lowrank, (_r(2, 3, 5),), {"q": 2, "niter": 1, "M": _r(5, seed=1)}),
]
SAMPLES["torch:pca_lowrank"] = [lambda o: (jtorch.pca_lowrank, (_r(6, 4),), {"q": 3})]
_EB = (_r(5, 3), _long([0, 2, 4, 1, 3, 3]), _long([0, 2, 2, 5]))
SAMPLES["torch:embedding_bag"] = [
    lambda o: (jtorch.embedding_bag, (*_EB, False, 0), {}),
    lambda o: (jtorch.embedding_bag, (*_EB, False, 1, False, None, True, 3), {}),
    lambda o: (jtorch.embedding_bag, (*_EB, False, 2), {}),
    lambda o: (jtorch.embedding_bag, (*_EB, False, 0, False, _r(6, seed=1)), {}),
]
SAMPLES["torch:embedding_renorm_"] = [
    lambda o: (jtorch.embedding_renorm_, (_r(5, 3), _long([0, 3, 3]), 0.5, 2.0), {})]


def _rnn_sample(name, gates, biases):
    """torch.<name>'s padded form: 2 layers (input 2, hidden 3), with or without biases."""
    g3 = gates * 3
    params = []
    for layer in range(2):
        params += [_r(g3, 2 if layer == 0 else 3, seed=layer), _r(g3, 3, seed=2 + layer)]
        params += [_r(g3, seed=4 + layer), _r(g3, seed=6 + layer)] if biases else []
    h = _r(2, 2, 3, seed=8)
    hx = [h, _r(2, 2, 3, seed=9)] if name == "lstm" else h
    x = _r(4, 2, 2) if biases else _r(2, 4, 2)  # (T, B, in); without biases batch_first
    return lambda o: (getattr(jtorch, name), (x, hx, params, biases, 2, 0.0, False, False,
                                              not biases), {})


SAMPLES.update({f"torch:{n}": [_rnn_sample(n, g, True), _rnn_sample(n, g, False)]
                for n, g in (("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1))})

# ---- sparse COO tensors (jtorch/sparse; compared with torch in tests/sparse) -------------------
# A sparse tensor has no strided data and no meta twin: one sample builds sparse tensors from
# the dense operand (to_sparse is data-dependent: its meta call raises torch's error) and
# runs every sparse OpDef, gradients included; the sparse-only methods are not swept.


def _sparse_products(x, y):
    """sparse @ dense, dense @ sparse, sparse @ sparse, sparse * sparse, index_select,
    coalescing and their gradients: every OpDef of kernels/defs/sparse.py."""
    a = x.reshape(-1, x.shape[-1] if x.ndim else 1).relu()
    b = y.reshape(a.shape).t().detach().requires_grad_()
    s = a.detach().to_sparse()
    v = s.values().detach().requires_grad_()
    sv = jtorch.sparse_coo_tensor(s.indices(), v, s.shape)
    twice = sv + sv  # coalesced from two copies of every entry
    total = jtorch.spmm(twice, b).sum() + jtorch.mm(b.t(), sv.t()).sum()
    total = total + jtorch.sparse.mm(sv, sv.t()).to_dense().sum() + (sv * sv).to_dense().sum()
    rows = jtorch.zeros(2 if a.shape[0] else 0, dtype=jtorch.int64)
    total = total + sv.index_select(0, rows).to_dense().sum()
    total.backward()
    return v.grad, b.grad


SAMPLES["torch:spmm"] = [lambda o: (_sparse_products, (o["x"], o["y"]), {})]
_SPARSE_ONLY = "builds or reads a sparse COO tensor (no meta twin): tests/sparse checks it"
NOT_SWEPT.update({
    "torch:sparse_coo_tensor": _SPARSE_ONLY,
    "method:to_sparse": _SPARSE_ONLY,
    "method:to_sparse_coo": _SPARSE_ONLY,
    "method:sparse_mask": _SPARSE_ONLY,
    "method:coalesce": _SPARSE_ONLY + " (dense: torch's layout error)",
    "method:is_coalesced": _SPARSE_ONLY + " (dense: torch's layout error)",
    "method:indices": _SPARSE_ONLY + " (dense: torch's layout error)",
    "method:values": _SPARSE_ONLY + " (dense: torch's layout error)",
    "method:sparse_dim": _SPARSE_ONLY + " (dense: 0, a Python int)",
    "method:dense_dim": _SPARSE_ONLY + " (dense: its rank, a Python int)",
    "method:to_dense": _SPARSE_ONLY + " (dense: itself)",
    **dict.fromkeys(["torch:smm", "torch:hspmm", "torch:sspaddmm", "torch:saddmm", "torch:dsmm",
                     "method:smm", "method:sspaddmm"],
                    _SPARSE_ONLY + " (the legacy products: test_sparse_legacy_products.py)"),
})

# ---- jtorch.fft and stft/istft (jtorch/fft; compared with torch in tests/fft) ------------------
# Every transform over the sweep's operands (the 0-d one raises torch's IndexError, the (0, 4)
# one transforms an empty batch), complex ones built with jtorch.complex; the three FFT OpDefs
# and their gradient rules are reached through these calls and one backward.
_FFT = jtorch.fft


def _fft_grads(x, y):
    """Every transform family's forward and backward (c2c, r2c, c2r)."""
    a = x.detach().requires_grad_()
    z = jtorch.complex(a, y)
    total = _FFT.irfft(_FFT.fft(z) * _FFT.rfft(a, n=6), n=5).sum()
    total.backward()
    return a.grad


SAMPLES.update({
    f"fft:{n}": [lambda o, n=n: (getattr(_FFT, n), (o["x"],), {}),
                 lambda o, n=n: (getattr(_FFT, n), (jtorch.complex(o["x"], o["y"]),), {"norm": "ortho"})]
    for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
              "hfftn", "ihfftn", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
              "fftshift", "ifftshift")
})
SAMPLES["fft:fft"].append(lambda o: (_FFT.fft, (o["x"],), {"n": 6, "dim": 0, "norm": "forward"}))
SAMPLES["fft:irfftn"].append(lambda o: (_FFT.irfftn, (o["x"],), {"s": (3, 5), "dim": (-1, 0)}))
FACTORIES["fft:fftfreq"] = [lambda d: _FFT.fftfreq(5, 0.5, device=d),
                            lambda d: _FFT.fftfreq(4, dtype=jtorch.float64, device=d)]
FACTORIES["fft:rfftfreq"] = [lambda d: _FFT.rfftfreq(5, device=d, requires_grad=True)]
SAMPLES["fft:_grads"] = [lambda o: (_fft_grads, (o["x"], o["y"]), {})]
_STFT = [lambda o: (jtorch.stft, (o["x"], 4), {"window": jtorch.hann_window(4), "return_complex": True}),
         lambda o: (jtorch.stft, (o["x"], 2), {"hop_length": 1, "center": False,
                                              "return_complex": True})]
SAMPLES["torch:stft"] = _STFT
SAMPLES["method:stft"] = [lambda o: (jtorch.Tensor.stft, (o["x"], 4),
                                     {"window": jtorch.hann_window(4), "return_complex": True})]
_NOLA = ("istft reads the summed window's minimum (torch's NOLA check calls .item(), which meta "
         "tensors refuse): tests/fft/test_stft.py compares it with torch")
NOT_SWEPT.update({"torch:istft": _NOLA, "method:istft": _NOLA})


# LDL^T (ops/linalg_decomp.py): symmetric indefinite matrices, the (3, 4) ``x`` for the shape
# error; solve from the factors with a broadcast right-hand side
def _sym(*batch, seed=0):
    a = _r(*batch, 3, 3, seed=seed)
    return a + a.mT


SAMPLES["linalg:ldl_factor_ex"] = [
    lambda o: (_LA.ldl_factor_ex, (_sym(2),), {}),
    lambda o: (_LA.ldl_factor_ex, (o["x"],), {}),
    lambda o: (_LA.ldl_factor_ex, (_sym(),), {"hermitian": True, "check_errors": True}),
]
SAMPLES["linalg:ldl_factor"] = [lambda o: (_LA.ldl_factor, (_sym(2),), {})]
SAMPLES["linalg:ldl_solve"] = [
    lambda o: (lambda a, b: _LA.ldl_solve(*_LA.ldl_factor(a), b), (_sym(2), _r(3, 2)), {}),
    lambda o: (_LA.ldl_solve, (_sym(), _long([1, 2, 3]), o["x"]), {}),
]
NOT_SWEPT["torch:lobpcg"] = ("iterates until its residuals converge, reading their norms every step "
                             "(meta tensors have no values): tests/ops/test_lobpcg.py compares it "
                             "with torch.linalg.eigh")
