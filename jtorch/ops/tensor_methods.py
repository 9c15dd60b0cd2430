"""Every op method of ``Tensor``, in one table: torch's method name -> the function that
implements it, in its op family's module.

``jtorch/tensor.py`` holds what every tensor has (metadata, autograd fields, storage access)
and cannot import the op modules (they import it), so the table lives here, in the op layer
beside the modules it maps to. ``install()`` attaches it to the class, once, when
``jtorch/__init__.py`` imports this module (after the op modules and ``jtorch.autograd``,
before ``jtorch.nn``). An adapter that gives a method torch's method signature
(``x.reshape(2, 3)``, no ``out=``) is a named function beside its op
(``views._reshape_method``); the pointwise families made by a factory (``pointwise._unary``,
``_binary``, ``_angle_scale``) are listed here by name and looked up in what the factory made
(``pointwise.GENERATED_METHODS``). To add a method, add its line here.

>>> import jtorch as torch
>>> METHODS["exp"] is torch.Tensor.exp
True
"""

from __future__ import annotations

from .. import autograd
from .. import dtypes as _dt
from ..fft import _stft
from ..kernels.defs import binary as B
from ..sparse._coo import DENSE_METHODS as _SPARSE_METHODS
from ..tensor import Tensor
from . import (
    conversion,
    creation,
    extras,
    indexing,
    linalg,
    numeric,
    pointwise,
    random,
    reduction,
    softmax,
    sort,
    views,
)
from .aten import TENSOR_METHODS as _ATEN_METHODS
from .linalg_decomp import METHODS as _LINALG_METHODS
from .misc_numeric import METHODS as _MISC_NUMERIC_METHODS
from .special import METHODS as _SPECIAL_METHODS

_gen = pointwise.GENERATED_METHODS  # methods made by the pointwise factories, by torch name
_op, _iop = pointwise._op2, pointwise._iop


def _rop(fn, op=None):
    """The reflected operator: ``2 - x`` calls ``x.__rsub__(2)``, which is ``fn(2, x)``."""
    return _op(fn, True, op)


METHODS: dict = {
    # -- operators: a + b (with the OpDef, tensors and numbers go straight to dispatch), the
    #    reflected b + a, the in-place a += b; indexing; comparisons ----------------------------
    "__add__": _op(pointwise.add, op=B.add_op),
    "__radd__": _rop(pointwise.add, B.add_op),
    "__iadd__": _iop(pointwise.add_),
    "__sub__": _op(pointwise.sub, op=B.sub_op),
    "__rsub__": _rop(pointwise.sub, B.sub_op),
    "__isub__": _iop(pointwise.sub_),
    "__mul__": _op(pointwise.mul, op=B.mul_op),
    "__rmul__": _rop(pointwise.mul, B.mul_op),
    "__imul__": _iop(_gen["mul_"]),
    "__truediv__": _op(pointwise.div, op=B.div_op),
    "__rtruediv__": pointwise._rdiv_method,
    "__rdiv__": pointwise._rdiv_method,
    "__itruediv__": _iop(pointwise.div_),
    "__floordiv__": _op(pointwise.floor_divide),
    "__rfloordiv__": _rop(pointwise.floor_divide),
    "__ifloordiv__": _iop(_gen["floor_divide_"]),
    "__mod__": _op(pointwise.remainder),
    "__rmod__": _rop(pointwise.remainder),
    "__imod__": _iop(_gen["remainder_"]),
    "__pow__": _op(pointwise.pow),
    "__rpow__": _rop(pointwise.pow),
    "__ipow__": _iop(pointwise.pow_),
    "__matmul__": linalg.matmul,
    "__rmatmul__": linalg._rmatmul_method,
    "__neg__": pointwise._neg_method,
    "__pos__": pointwise._pos_method,
    "__abs__": pointwise._abs_method,
    "__invert__": pointwise._invert,
    "__and__": _op(pointwise.bitwise_and),
    "__rand__": _rop(pointwise.bitwise_and),
    "__iand__": _iop(_gen["bitwise_and_"]),
    "__or__": _op(pointwise.bitwise_or),
    "__ror__": _rop(pointwise.bitwise_or),
    "__ior__": _iop(_gen["bitwise_or_"]),
    "__xor__": _op(pointwise.bitwise_xor),
    "__rxor__": _rop(pointwise.bitwise_xor),
    "__ixor__": _iop(_gen["bitwise_xor_"]),
    "__lshift__": _op(pointwise.bitwise_left_shift),
    "__rlshift__": _rop(pointwise.bitwise_left_shift),
    "__ilshift__": _iop(_gen["bitwise_left_shift_"]),
    "__rshift__": _op(pointwise.bitwise_right_shift),
    "__rrshift__": _rop(pointwise.bitwise_right_shift),
    "__irshift__": _iop(_gen["bitwise_right_shift_"]),
    "__eq__": _op(pointwise.eq),
    "__ne__": _op(pointwise.ne),
    "__lt__": _op(pointwise.lt),
    "__le__": _op(pointwise.le),
    "__gt__": _op(pointwise.gt),
    "__ge__": _op(pointwise.ge),
    "__getitem__": indexing.getitem,
    "__setitem__": indexing.setitem,

    # -- pointwise unary (pointwise._unary; name_ is the in-place form) -------------------------
    "neg": _gen["neg"], "neg_": _gen["neg_"],
    "negative": _gen["negative"], "negative_": _gen["negative_"],
    "abs": pointwise._abs_method, "abs_": pointwise._abs_,  # complex input: a real result
    "absolute": pointwise._abs_method, "absolute_": pointwise._abs_,
    "sign": _gen["sign"], "sign_": _gen["sign_"],
    "sgn": _gen["sgn"], "sgn_": _gen["sgn_"],
    "sqrt": _gen["sqrt"], "sqrt_": _gen["sqrt_"],
    "rsqrt": _gen["rsqrt"], "rsqrt_": _gen["rsqrt_"],
    "reciprocal": _gen["reciprocal"], "reciprocal_": _gen["reciprocal_"],
    "exp": _gen["exp"], "exp_": _gen["exp_"],
    "exp2": _gen["exp2"], "exp2_": _gen["exp2_"],
    "expm1": _gen["expm1"], "expm1_": _gen["expm1_"],
    "log": _gen["log"], "log_": _gen["log_"],
    "log2": _gen["log2"], "log2_": _gen["log2_"],
    "log10": _gen["log10"], "log10_": _gen["log10_"],
    "log1p": _gen["log1p"], "log1p_": _gen["log1p_"],
    "sin": _gen["sin"], "sin_": _gen["sin_"],
    "cos": _gen["cos"], "cos_": _gen["cos_"],
    "tan": _gen["tan"], "tan_": _gen["tan_"],
    "asin": _gen["asin"], "asin_": _gen["asin_"],
    "arcsin": _gen["arcsin"], "arcsin_": _gen["arcsin_"],
    "acos": _gen["acos"], "acos_": _gen["acos_"],
    "arccos": _gen["arccos"], "arccos_": _gen["arccos_"],
    "atan": _gen["atan"], "atan_": _gen["atan_"],
    "arctan": _gen["arctan"], "arctan_": _gen["arctan_"],
    "sinh": _gen["sinh"], "sinh_": _gen["sinh_"],
    "cosh": _gen["cosh"], "cosh_": _gen["cosh_"],
    "tanh": _gen["tanh"], "tanh_": _gen["tanh_"],
    "asinh": _gen["asinh"], "asinh_": _gen["asinh_"],
    "arcsinh": _gen["arcsinh"], "arcsinh_": _gen["arcsinh_"],
    "acosh": _gen["acosh"], "acosh_": _gen["acosh_"],
    "arccosh": _gen["arccosh"], "arccosh_": _gen["arccosh_"],
    "atanh": _gen["atanh"], "atanh_": _gen["atanh_"],
    "arctanh": _gen["arctanh"], "arctanh_": _gen["arctanh_"],
    "sigmoid": _gen["sigmoid"], "sigmoid_": _gen["sigmoid_"],
    "erf": _gen["erf"], "erf_": _gen["erf_"],
    "erfc": _gen["erfc"], "erfc_": _gen["erfc_"],
    "erfinv": _gen["erfinv"], "erfinv_": _gen["erfinv_"],
    "floor": _gen["floor"], "floor_": _gen["floor_"],
    "ceil": _gen["ceil"], "ceil_": _gen["ceil_"],
    "trunc": _gen["trunc"], "trunc_": _gen["trunc_"],
    "fix": _gen["fix"], "fix_": _gen["fix_"],
    "frac": _gen["frac"], "frac_": _gen["frac_"],
    "relu": _gen["relu"], "relu_": _gen["relu_"],
    "logical_not": _gen["logical_not"], "logical_not_": _gen["logical_not_"],
    "bitwise_not": _gen["bitwise_not"], "bitwise_not_": _gen["bitwise_not_"],
    "sinc": _gen["sinc"], "sinc_": _gen["sinc_"],
    "deg2rad": _gen["deg2rad"], "deg2rad_": _gen["deg2rad_"],  # pointwise._angle_scale
    "rad2deg": _gen["rad2deg"], "rad2deg_": _gen["rad2deg_"],
    "square": pointwise.square, "square_": pointwise.square_,
    "round": pointwise.round, "round_": pointwise.round_,
    "positive": pointwise.positive,
    # predicates (no in-place form)
    "isnan": pointwise.isnan, "isinf": pointwise.isinf, "isfinite": pointwise.isfinite,
    "isposinf": pointwise.isposinf, "isneginf": pointwise.isneginf,
    "signbit": pointwise.signbit,

    # -- pointwise binary (pointwise._binary; aliases' errors name the alias) -------------------
    "add": pointwise._add_method, "add_": pointwise.add_,
    "sub": pointwise._sub_method, "sub_": pointwise.sub_,
    "subtract": pointwise._sub_method, "subtract_": pointwise.sub_,
    "mul": _gen["mul"], "mul_": _gen["mul_"],
    "multiply": _gen["multiply"], "multiply_": _gen["multiply_"],
    "div": pointwise._div_method, "div_": pointwise.div_,
    "divide": pointwise._div_method, "divide_": pointwise.div_,
    "true_divide": pointwise._true_divide_method, "true_divide_": pointwise.div_,
    "floor_divide": _gen["floor_divide"], "floor_divide_": _gen["floor_divide_"],
    "remainder": _gen["remainder"], "remainder_": _gen["remainder_"],
    "fmod": _gen["fmod"], "fmod_": _gen["fmod_"],
    "pow": pointwise._pow_method, "pow_": pointwise.pow_,
    "float_power": pointwise._float_power_method,
    "copysign": _gen["copysign"], "copysign_": _gen["copysign_"],
    "xlogy": _gen["xlogy"], "xlogy_": _gen["xlogy_"],
    "eq": _gen["eq"], "eq_": _gen["eq_"],
    "ne": _gen["ne"], "ne_": _gen["ne_"],
    "not_equal": _gen["not_equal"], "not_equal_": _gen["not_equal_"],
    "lt": _gen["lt"], "lt_": _gen["lt_"],
    "less": _gen["less"], "less_": _gen["less_"],
    "le": _gen["le"], "le_": _gen["le_"],
    "less_equal": _gen["less_equal"], "less_equal_": _gen["less_equal_"],
    "gt": _gen["gt"], "gt_": _gen["gt_"],
    "greater": _gen["greater"], "greater_": _gen["greater_"],
    "ge": _gen["ge"], "ge_": _gen["ge_"],
    "greater_equal": _gen["greater_equal"], "greater_equal_": _gen["greater_equal_"],
    "bitwise_and": _gen["bitwise_and"], "bitwise_and_": _gen["bitwise_and_"],
    "bitwise_or": _gen["bitwise_or"], "bitwise_or_": _gen["bitwise_or_"],
    "bitwise_xor": _gen["bitwise_xor"], "bitwise_xor_": _gen["bitwise_xor_"],
    "bitwise_left_shift": _gen["bitwise_left_shift"],
    "bitwise_left_shift_": _gen["bitwise_left_shift_"],
    "bitwise_right_shift": _gen["bitwise_right_shift"],
    "bitwise_right_shift_": _gen["bitwise_right_shift_"],
    # tensor operands only (torch has no Scalar overload)
    "logical_and": _gen["logical_and"], "logical_and_": _gen["logical_and_"],
    "logical_or": _gen["logical_or"], "logical_or_": _gen["logical_or_"],
    "logical_xor": _gen["logical_xor"], "logical_xor_": _gen["logical_xor_"],
    "heaviside": _gen["heaviside"], "heaviside_": _gen["heaviside_"],
    "gcd": _gen["gcd"], "gcd_": _gen["gcd_"],
    "lcm": _gen["lcm"], "lcm_": _gen["lcm_"],
    "atan2": _gen["atan2"], "atan2_": _gen["atan2_"],
    "arctan2": _gen["arctan2"], "arctan2_": _gen["arctan2_"],
    "hypot": _gen["hypot"], "hypot_": _gen["hypot_"],
    # tensor operands only, and no in-place form in torch
    "logaddexp": _gen["logaddexp"], "logaddexp2": _gen["logaddexp2"],
    "maximum": _gen["maximum"], "minimum": _gen["minimum"],
    "fmax": _gen["fmax"], "fmin": _gen["fmin"],

    # -- pointwise ternary and parameterised -----------------------------------------------------
    "clamp": pointwise._clamp_method("clamp", False),
    "clamp_": pointwise._clamp_method("clamp_", True),
    "clip": pointwise._clamp_method("clip", False),
    "clip_": pointwise._clamp_method("clip_", True),
    "clamp_min": pointwise._clamp_min_method, "clamp_min_": pointwise._clamp_min_inplace,
    "clamp_max": pointwise._clamp_max_method, "clamp_max_": pointwise._clamp_max_inplace,
    "addcmul": pointwise._addcmul_method, "addcmul_": pointwise._addc_inplace(B.addcmul_op),
    "addcdiv": pointwise._addcdiv_method, "addcdiv_": pointwise._addc_inplace(B.addcdiv_op),
    "lerp": pointwise._lerp_method, "lerp_": pointwise._lerp_inplace,
    "where": pointwise._where_method,
    "nan_to_num": pointwise.nan_to_num, "nan_to_num_": pointwise._nan_to_num_inplace,
    "logit": pointwise.logit, "logit_": pointwise._logit_inplace,
    "isclose": pointwise.isclose, "allclose": pointwise.allclose, "equal": pointwise.equal,

    # -- dtype and device conversion, copies, fills, complex parts (ops/conversion.py) ---------
    "to": conversion.to,
    "float": conversion._converter(_dt.float32),
    "double": conversion._converter(_dt.float64),
    "half": conversion._converter(_dt.float16),
    "bfloat16": conversion._converter(_dt.bfloat16),
    "long": conversion._converter(_dt.int64),
    "int": conversion._converter(_dt.int32),
    "short": conversion._converter(_dt.int16),
    "char": conversion._converter(_dt.int8),
    "byte": conversion._converter(_dt.uint8),
    "bool": conversion._converter(_dt.bool),
    "cfloat": conversion._converter(_dt.complex64),
    "cdouble": conversion._converter(_dt.complex128),
    "type_as": conversion.type_as,
    "get_device": conversion.get_device,
    "clone": conversion.clone,
    "contiguous": conversion.contiguous,
    "copy_": conversion.copy_,
    "fill_": conversion.fill_,
    "zero_": conversion.zero_,
    "real": property(conversion.real),
    "imag": property(conversion.imag),
    "conj": conversion.conj,
    "conj_physical": conversion.conj,
    "resolve_conj": conversion.resolve_conj,
    "is_conj": conversion._is_conj_method,

    # -- factories in self's dtype and device (ops/creation.py, ops/conversion.py) -------------
    "new_tensor": conversion._new_tensor,
    "new_empty": creation._new_factory(creation.empty),
    "new_zeros": creation._new_factory(creation.zeros),
    "new_ones": creation._new_factory(creation.ones),
    "new_full": creation.new_full,
    "new_empty_strided": creation.new_empty_strided,

    # -- views and shape changes (ops/views.py) ------------------------------------------------
    "view": views.view, "view_as": views.view_as,
    "reshape": views._reshape_method, "reshape_as": views._reshape_as_method,
    "permute": views._permute_method,
    "transpose": views.transpose, "transpose_": views.transpose_,
    "swapaxes": views.transpose, "swapdims": views.transpose,
    "t": views.t, "t_": views.t_,
    "squeeze": views.squeeze, "squeeze_": views.squeeze_,
    "unsqueeze": views.unsqueeze, "unsqueeze_": views.unsqueeze_,
    "expand": views.expand, "expand_as": views._expand_as_method,
    "broadcast_to": views.broadcast_to,
    "flatten": views._flatten_method, "unflatten": views._unflatten_method,
    "ravel": views.ravel,
    "narrow": views.narrow, "select": views.select, "unbind": views.unbind,
    "split": views._split_method, "split_with_sizes": views._split_with_sizes_method,
    "chunk": views._chunk_method, "tensor_split": views._tensor_split_method,
    "hsplit": views.hsplit, "vsplit": views.vsplit,
    "movedim": views.movedim, "moveaxis": views.movedim,
    "as_strided": views._as_strided_method, "as_strided_": views.as_strided_,
    "diagonal": views._diagonal_method,
    "unfold": views.unfold,
    # copies of a new layout
    "flip": views._flip_method, "fliplr": views.fliplr, "flipud": views.flipud,
    "roll": views._roll_method, "rot90": views.rot90,
    "repeat": views.repeat, "tile": views._tile_method,
    "repeat_interleave": views.repeat_interleave,
    "tril": views._tril_method, "tril_": views._tril_inplace,
    "triu": views._triu_method, "triu_": views._triu_inplace,
    "diag": views.diag, "diag_embed": views.diag_embed, "diagflat": views.diagflat,

    # -- indexing, gather and scatter (ops/indexing.py) ----------------------------------------
    "index_put": indexing.index_put, "index_put_": indexing.index_put_,
    "gather": indexing._gather_method,
    "scatter": indexing.scatter, "scatter_": indexing.scatter_,
    "scatter_add": indexing.scatter_add, "scatter_add_": indexing.scatter_add_,
    "scatter_reduce": indexing.scatter_reduce, "scatter_reduce_": indexing.scatter_reduce_,
    "index_select": indexing._index_select_method,
    "index_add": indexing.index_add, "index_add_": indexing.index_add_,
    "index_copy": indexing.index_copy, "index_copy_": indexing.index_copy_,
    "index_fill": indexing.index_fill, "index_fill_": indexing.index_fill_,
    "masked_fill": indexing.masked_fill, "masked_fill_": indexing.masked_fill_,
    "masked_select": indexing._masked_select_method,
    "masked_scatter": indexing.masked_scatter, "masked_scatter_": indexing.masked_scatter_,
    "take": indexing.take, "take_along_dim": indexing._take_along_dim_method,
    "put": indexing._put, "put_": indexing.put_,
    "nonzero": indexing._nonzero_method, "argwhere": indexing.argwhere,

    # -- reductions (ops/reduction.py) ---------------------------------------------------------
    "sum": reduction.sum, "nansum": reduction.nansum,
    "mean": reduction.mean, "nanmean": reduction.nanmean,
    "prod": reduction.prod,
    "amax": reduction.amax, "amin": reduction.amin, "aminmax": reduction.aminmax,
    "max": reduction.max, "min": reduction.min,
    "argmax": reduction.argmax, "argmin": reduction.argmin,
    "all": reduction.all, "any": reduction.any, "count_nonzero": reduction.count_nonzero,
    "var": reduction.var, "std": reduction.std,
    "norm": reduction.norm, "logsumexp": reduction.logsumexp,
    # scans
    "cumsum": reduction.cumsum, "cumsum_": reduction._scan_inplace(reduction.cumsum),
    "cumprod": reduction.cumprod, "cumprod_": reduction._scan_inplace(reduction.cumprod),
    "logcumsumexp": reduction.logcumsumexp,
    "cummax": reduction.cummax, "cummin": reduction.cummin,

    # -- softmax (ops/softmax.py) --------------------------------------------------------------
    "softmax": softmax.softmax, "log_softmax": softmax.log_softmax,

    # -- sorting and selection (ops/sort.py) ---------------------------------------------------
    "sort": sort.sort, "argsort": sort.argsort, "msort": sort.msort,
    "topk": sort.topk, "kthvalue": sort.kthvalue,
    "median": sort.median, "nanmedian": sort.nanmedian, "mode": sort.mode,
    "unique": sort.unique, "unique_consecutive": sort.unique_consecutive,

    # -- matrix products (ops/linalg.py) -------------------------------------------------------
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv,
    "dot": linalg.dot, "vdot": linalg.vdot, "inner": linalg.inner,
    "outer": linalg.outer, "ger": linalg.outer,
    "addmm": linalg.addmm, "addmm_": linalg._addmm_inplace,
    "addmv": linalg.addmv, "baddbmm": linalg.baddbmm, "addbmm": linalg.addbmm,
    "addr": linalg.addr,
    "kron": linalg.kron, "trace": linalg.trace,

    # -- random sampling (ops/random.py; name_ fills self) -------------------------------------
    "bernoulli": random._bernoulli_method, "bernoulli_": random.bernoulli_,
    "multinomial": random.multinomial,
    "uniform_": random.uniform_, "normal_": random.normal_, "random_": random.random_,
    "exponential_": random.exponential_, "cauchy_": random.cauchy_,
    "log_normal_": random.log_normal_, "geometric_": random.geometric_,

    # -- torch's other methods (ops/extras.py, ops/numeric.py) ----------------------------------
    "hardshrink": extras.hardshrink, "prelu": extras.prelu,
    "is_neg": extras.is_neg, "resolve_neg": extras.resolve_neg,
    "is_same_size": extras.is_same_size, "is_inference": extras.is_inference,
    "unsafe_chunk": extras.unsafe_chunk, "unsafe_split": extras.unsafe_split,
    "unsafe_split_with_sizes": extras.unsafe_split_with_sizes,
    "narrow_copy": extras.narrow_copy,  # made by extras._copy_variant
    "quantile": numeric.quantile, "nanquantile": numeric.nanquantile,
    "diff": numeric.diff, "cross": numeric.cross, "cov": numeric.cov, "corrcoef": numeric.corrcoef,
    "dist": numeric.dist, "renorm": numeric.renorm, "renorm_": numeric._renorm_,
    "isreal": numeric.isreal, "angle": numeric.angle, "bincount": numeric.bincount,
    "histc": numeric.histc, "ldexp": numeric.ldexp, "ldexp_": numeric.ldexp_,
    **_LINALG_METHODS,  # det, inverse, cholesky, qr, svd, lu_solve, ... (ops/linalg_decomp.py)
    **_SPECIAL_METHODS,  # lgamma, digamma, polygamma, mvlgamma, i0, frexp, nextafter
    **_MISC_NUMERIC_METHODS,  # igamma(c)(_), histogram (ops/misc_numeric.py)
    **_ATEN_METHODS,  # adjoint, dsplit, resize_, new, sum_to_size, apply_, ... (ops/aten.py)
    **_SPARSE_METHODS,  # to_sparse, to_dense, coalesce, values, ... (sparse/_coo.py)
    "float_power_": numeric._float_power_, "fill_diagonal_": numeric._fill_diagonal_,
    "diagonal_scatter": numeric.diagonal_scatter, "select_scatter": numeric.select_scatter,
    "slice_scatter": numeric.slice_scatter, "as_strided_scatter": numeric.as_strided_scatter,
    "index_reduce": numeric.index_reduce, "index_reduce_": numeric._index_reduce_,
    "stft": _stft.stft, "istft": _stft.istft,  # jtorch/fft/_stft.py

    # -- legacy sparse products (jtorch/sparse/__init__.py) --------------------------------------
    "smm": lambda self, mat: _sparse().smm(self, mat),
    "sspaddmm": lambda self, mat1, mat2, *, beta=1, alpha=1: _sparse().sspaddmm(
        self, mat1, mat2, beta=beta, alpha=alpha),

    # -- autograd (jtorch/autograd/__init__.py) ------------------------------------------------
    "backward": autograd._tensor_backward,
    "register_hook": autograd._register_hook,
    "register_post_accumulate_grad_hook": autograd._register_post_accumulate_grad_hook,
    "retain_grad": autograd._retain_grad,
}


def _sparse():
    from .. import sparse

    return sparse


def install() -> None:
    """Attach every method of the table to ``Tensor``."""
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)


# once, when ``jtorch/__init__.py`` imports this module: after the op modules and
# ``jtorch.autograd``, before ``jtorch.nn`` and ``jtorch.compile``, which are written on them
install()
