"""Pointwise ops: torch-named functions, Tensor methods, operators and in-place variants.

All of them go through ``dispatch.pointwise`` with an OpDef from ``kernels/defs``.
"""

from __future__ import annotations

import builtins
import math
import numbers

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels import registry
from ..kernels.defs import binary as B
from ..kernels.defs import unary as U
from ..tensor import Tensor
from .conversion import imag, real
from ._util import type_name

_pw = dispatch.pointwise
__all__: list[str] = []

# The Tensor methods the factories below make (``_unary``, ``_binary``, ``_angle_scale``), by
# torch name: ``ops/tensor_methods.py`` lists each name in its table and installs them.
GENERATED_METHODS: dict = {}


def _export(fn, name: str | None = None):
    name = name or fn.__name__
    globals()[name] = fn
    __all__.append(name)
    return fn


def _check_tensor(x, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


_check_inplace = dispatch.check_inplace


def _unary(op: registry.OpDef, name: str, *aliases: str, method: bool = True):
    same_dtype_out = op.dtype_rule == registry.PROMOTE

    def fn(input, *, out=None):
        _check_tensor(input, name)
        if out is not None and same_dtype_out and out.dtype is not input.dtype:
            # torch's non-float unary ops (abs, neg, floor, sign, ...) want out in input's dtype
            raise RuntimeError(f"Found dtype {dispatch.torch_name(out.dtype)} but expected "
                               f"{dispatch.torch_name(input.dtype)}")
        return _pw(op, (input,), out)

    def inplace(self):
        _check_inplace(self)
        return _pw(op, (self,), inplace=True)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise {op.name} (generated kernel from OpDef {op.name!r})."
    for n in (name, *aliases):
        _export(fn, n)
        if method:
            GENERATED_METHODS[n] = lambda self, _f=fn: _f(self)
            GENERATED_METHODS[n + "_"] = inplace
        _export(lambda input, _i=inplace: _i(input), n + "_")
    return fn


for _op, _names in [
    (U.neg_op, ("neg", "negative")), (U.abs_op, ("abs", "absolute")), (U.sign_op, ("sign",)),
    (U.sgn_op, ("sgn",)), (U.sqrt_op, ("sqrt",)),
    (U.rsqrt_op, ("rsqrt",)), (U.reciprocal_op, ("reciprocal",)), (U.exp_op, ("exp",)),
    (U.exp2_op, ("exp2",)), (U.expm1_op, ("expm1",)), (U.log_op, ("log",)),
    (U.log2_op, ("log2",)), (U.log10_op, ("log10",)), (U.log1p_op, ("log1p",)),
    (U.sin_op, ("sin",)), (U.cos_op, ("cos",)), (U.tan_op, ("tan",)),
    (U.asin_op, ("asin", "arcsin")), (U.acos_op, ("acos", "arccos")),
    (U.atan_op, ("atan", "arctan")), (U.sinh_op, ("sinh",)), (U.cosh_op, ("cosh",)),
    (U.tanh_op, ("tanh",)), (U.asinh_op, ("asinh", "arcsinh")),
    (U.acosh_op, ("acosh", "arccosh")), (U.atanh_op, ("atanh", "arctanh")),
    (U.sigmoid_op, ("sigmoid",)), (U.erf_op, ("erf",)), (U.erfc_op, ("erfc",)),
    (U.erfinv_op, ("erfinv",)), (U.floor_op, ("floor",)), (U.ceil_op, ("ceil",)),
    (U.trunc_op, ("trunc", "fix")), (U.frac_op, ("frac",)), (U.relu_op, ("relu",)),
    (U.logical_not_op, ("logical_not",)), (U.bitwise_not_op, ("bitwise_not",)),
    (U.sinc_op, ("sinc",)),
]:
    _unary(_op, *_names)


_real_abs = globals()["abs"]


def _abs(input, *, out=None):
    """torch.abs; complex inputs give their real dtype (|z| = hypot(re, im))."""
    _check_tensor(input, "abs")
    if input.dtype.is_complex:  # the real and imaginary part views (meta ones on meta)
        return _pw(B.hypot_op, (real(input), imag(input)), out)
    return _real_abs(input, out=out)


def _abs_(self):
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    _check_inplace(self)
    return _pw(U.abs_op, (self,), inplace=True)


for _n in ("abs", "absolute"):
    _abs.__name__ = "abs"
    globals()[_n] = _abs
    globals()[_n + "_"] = _abs_


def _abs_method(self):
    """Tensor.abs, Tensor.absolute and ``abs(x)``: complex tensors give their real dtype."""
    return _abs(self)


def square(input, *, out=None):
    """torch.square; bool squares to int64 as in torch (square is pow(input, 2) there)."""
    _check_tensor(input, "square")
    if input.dtype is _dt.bool:
        input = input.to(_dt.int64)
    return _pw(U.square_op, (input,), out)


def square_(self):
    _check_inplace(self)
    if self.dtype is _dt.bool:
        dispatch.check_cast(_dt.int64, self.dtype)
    return _pw(U.square_op, (self,), inplace=True)


_export(square)
_export(square_)

for _op, _name in [(U.isnan_op, "isnan"), (U.isinf_op, "isinf"), (U.isfinite_op, "isfinite"),
                   (U.isposinf_op, "isposinf"), (U.isneginf_op, "isneginf"),
                   (U.signbit_op, "signbit")]:
    def _pred(input, *, out=None, _op=_op, _name=_name):
        _check_tensor(input, _name)
        return _pw(_op, (input,), out)
    _pred.__name__ = _name
    _export(_pred, _name)


def _round_scalar(decimals):
    return float(10.0 ** builtins.abs(decimals))


def round(input, *, decimals: int = 0, out=None):
    """torch.round: half to even; ``decimals`` scales by 10**decimals as torch does."""
    _check_tensor(input, "round")
    if decimals == 0:
        return _pw(U.round_op, (input,), out)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"round_cpu" not implemented for \'{dispatch.torch_name(input.dtype)}\'')
    p = _round_scalar(decimals)
    if decimals > 0:
        r = div(_pw(U.round_op, (_pw(B.mul_op, (input, p)),)), p)
    else:
        r = _pw(B.mul_op, (_pw(U.round_op, (div(input, p),)), p))
    if out is not None:
        return copy_into(out, r)
    return r


_export(round)


def round_(input, *, decimals: int = 0):
    _check_inplace(input)
    if decimals == 0:
        return _pw(U.round_op, (input,), inplace=True)
    return copy_into(input, round(input, decimals=decimals))


_export(round_)


def copy_into(dst: Tensor, src: Tensor) -> Tensor:
    """dst[...] = src (broadcast, version bump) as ``dst.copy_(src)``, with the cast check of
    ``out=`` and in-place results (a float result cannot land in an integer tensor)."""
    if isinstance(src, Tensor):
        dispatch.check_cast(src.dtype, dst.dtype)
    return dst.copy_(src)


_COPY = U.copy_op


# -- binary ----------------------------------------------------------------------------------

def _is_scalar(x) -> bool:
    return isinstance(x, numbers.Number)


def _other_tensor(name: str, other, pos: int) -> None:
    if not isinstance(other, Tensor):
        arg = "values" if name.startswith("heaviside") else "other"
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(other).__name__}")


def _binary(op: registry.OpDef, name: str, *aliases: str, tensors: bool = False,
            inplace_method: bool = True):
    """torch.<name>, Tensor.<name> and Tensor.<name>_ (and the aliases', whose errors name the
    alias); ``tensors``: both operands must be tensors (torch has no Scalar overload:
    logical_and, logaddexp, gcd, maximum, ...)."""
    for alias in aliases:
        _binary(op, alias, tensors=tensors, inplace_method=inplace_method)

    def fn(input, other, *, out=None):
        if tensors:
            _check_tensor(input, name)
            _other_tensor(name, other, 2)
        elif not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return _pw(op, (input, other), out)

    def method(self, other):
        if tensors:
            _other_tensor(name, other, 1)
        return _pw(op, (self, other))

    def inplace(self, other):
        if tensors:
            _other_tensor(name + "_", other, 1)
        _check_inplace(self)
        return _pw(op, (self, other), inplace=True)

    fn.__name__ = fn.__qualname__ = name
    _export(fn, name)
    GENERATED_METHODS[name] = method
    if inplace_method:
        GENERATED_METHODS[name + "_"] = inplace
    return fn


for _op, _names in [
    (B.mul_op, ("mul", "multiply")), (B.copysign_op, ("copysign",)), (B.eq_op, ("eq",)), (B.ne_op, ("ne", "not_equal")), (B.lt_op, ("lt", "less")),
    (B.le_op, ("le", "less_equal")), (B.gt_op, ("gt", "greater")),
    (B.ge_op, ("ge", "greater_equal")), (B.xlogy_op, ("xlogy",)),
    (B.bitwise_and_op, ("bitwise_and",)), (B.bitwise_or_op, ("bitwise_or",)),
    (B.bitwise_xor_op, ("bitwise_xor",)), (B.bitwise_left_shift_op, ("bitwise_left_shift",)),
    (B.bitwise_right_shift_op, ("bitwise_right_shift",)), (B.remainder_op, ("remainder",)),
    (B.fmod_op, ("fmod",)), (B.floor_divide_op, ("floor_divide",)),
]:
    _binary(_op, *_names)
for _op, _names in [
    (B.logical_and_op, ("logical_and",)), (B.logical_or_op, ("logical_or",)),
    (B.logical_xor_op, ("logical_xor",)), (B.heaviside_op, ("heaviside",)), (B.gcd_op, ("gcd",)),
    (B.lcm_op, ("lcm",)), (B.atan2_op, ("atan2", "arctan2")), (B.hypot_op, ("hypot",)),
]:
    _binary(_op, *_names, tensors=True)
for _op, _names in [(B.logaddexp_op, ("logaddexp",)), (B.logaddexp2_op, ("logaddexp2",)),
                    (B.maximum_op, ("maximum",)), (B.minimum_op, ("minimum",)),
                    (B.fmax_op, ("fmax",)), (B.fmin_op, ("fmin",))]:
    _binary(_op, *_names, tensors=True, inplace_method=False)


def _alpha_args(op, input, other, alpha):
    """The call of the one-pass add/sub with ``alpha`` (``add_alpha``/``sub_alpha``) where
    it applies: a tensor ``input``, an int or float alpha other than 1 and a non-bool result
    (after torch's alpha checks, which raise here); else None (``_scaled`` then multiplies;
    sparse operands: jtorch.sparse's add).
    A 16-bit float result takes alpha rounded to its dtype, as torch's kernel does."""
    if type(alpha) is int and alpha == 1 or type(alpha) not in (int, float) or \
            not isinstance(input, Tensor) or input.is_sparse or \
            isinstance(other, Tensor) and other.is_sparse:  # (sparse: jtorch.sparse's add)
        return None
    if isinstance(other, (Tensor, int, float, complex)):  # result_type, memoised
        common = dispatch.resolve_dtypes(B.add_op, (input, other))[0]
        _scaled_check(input, other, alpha, common)
    else:
        common = _scaled_check(input, other, alpha)
    if common is _dt.bool or alpha == 1:
        return None
    if common in _dt.HALF:
        alpha = float(common.np.type(alpha))
    return op, (input, other, alpha)


def _scaled_check(input, other, alpha, common=None):
    """torch's alpha checks against the result dtype (returned)."""
    if common is None:
        common = _dt.result_type(input, other)
    if isinstance(alpha, bool) and common is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and common.category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return common


def _scaled(input, other, alpha):
    """alpha * other for add/sub, with torch's alpha checks against the result dtype."""
    if type(alpha) is int and alpha == 1:
        return other
    common = _scaled_check(input, other, alpha)
    if alpha == 1:
        return other
    if common is _dt.bool:
        return _pw(B.logical_and_op, (other, bool(alpha))) if isinstance(other, Tensor) else bool(
            other and alpha)
    if isinstance(other, Tensor):
        return _pw(B.mul_op, (other, alpha))
    return other * alpha


def _sub_check(a, b) -> None:
    B.sub_op.check(None, (a, b))


def add(input, other, *, alpha=1, out=None):
    """torch.add: input + alpha * other, broadcast and type-promoted.

    >>> jtorch.add(jtorch.tensor([1., 2.]), 1)
    tensor([2., 3.])
    """
    call = _alpha_args(B.add_alpha_op, input, other, alpha)
    if call is not None:
        return _pw(*call, out)
    return _pw(B.add_op, (input, _scaled(input, other, alpha)), out)


def sub(input, other, *, alpha=1, out=None):
    """torch.sub: input - alpha * other (bool operands raise, whatever alpha is)."""
    if type(alpha) is not int or alpha != 1:
        _sub_check(input, other)
    call = _alpha_args(B.sub_alpha_op, input, other, alpha)
    if call is not None:
        return _pw(*call, out)
    return _pw(B.sub_op, (input, _scaled(input, other, alpha)), out)


def rsub(input, other, *, alpha=1):
    _sub_check(other, input)
    return _pw(B.sub_op, (other, _scaled(other, input, alpha)))


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return _pw(B.div_op, (input, other), out)
    if rounding_mode == "trunc":
        return _pw(B.div_trunc_op, (input, other), out)
    if rounding_mode == "floor":
        return _pw(B.floor_divide_op, (input, other), out)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def pow(input, exponent, *, out=None):
    """torch.pow; integer bases with negative integer scalar exponents raise as in torch.

    A scalar exponent of 0 or 1 fills ones or copies (as torch does, whatever the dtype), and
    2, 3 and 0.5 use the square, cube and sqrt kernels when they keep the input's dtype.
    """
    if _amp.on and out is None:  # (CUDA autocast runs it in float32)
        input, exponent = _amp.fp32_cuda(input, exponent)
    if isinstance(input, Tensor) and isinstance(exponent, numbers.Number):
        if isinstance(exponent, numbers.Integral) and not isinstance(exponent, bool) \
                and exponent < 0 and input.dtype.category < 2:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        d = _dt.result_type(input, exponent)
        if exponent == 0 or exponent == 1:
            if input.is_sparse:  # the values' power (torch refuses 0: a dense result)
                return _pw(B.pow_op, (input, exponent), out)
            with _no_grad():
                res = input.to(d, copy=True) if exponent == 1 else \
                    input.new_ones(input._a.shape, dtype=d)
            dispatch.record(B.pow_op, (input, exponent), res)
            return res if out is None else copy_into(out, res)
        if d is input.dtype and exponent == 2:
            return _pw(U.square_op, (input,), out)
        if d is input.dtype and exponent == 3 and d.category >= 2:
            return _pw(U.cube_op, (input,), out)
        if d is input.dtype and d.category >= 2 and exponent in (0.5, -0.5) \
                and not input.is_sparse:  # sparse: the values' power (rsqrt is dense-only)
            # torch's sqrt/rsqrt specialisation (so pow(-0.0, -0.5) is -inf, pow(-inf, 0.5) nan)
            return _pw(U.sqrt_op if exponent == 0.5 else U.rsqrt_op, (input,), out)
        if d is input.dtype and d.is_complex and exponent in (-1, -2) and not input.is_sparse:
            # torch's complex kernels: reciprocal, and 1 / (x * x)
            return _pw(U.reciprocal_op, (input if exponent == -1 else input * input,), out)
    return _pw(B.pow_op, (input, exponent), out)


def float_power(input, exponent, *, out=None):
    def f64(x):
        if isinstance(x, Tensor):
            return x.to(_dt.complex128 if x.dtype.is_complex else _dt.float64)
        return float(x) if not isinstance(x, complex) else x
    return _pw(B.pow_op, (f64(input), f64(exponent)), out)


for _fn in (add, sub, div, pow, rsub, float_power):
    _export(_fn)
_export(div, "divide")
_export(div, "true_divide")
_export(sub, "subtract")


def add_(self, other, *, alpha=1):
    _check_inplace(self)
    call = _alpha_args(B.add_alpha_op, self, other, alpha)
    if call is not None:
        return _pw(*call, inplace=True)
    return _pw(B.add_op, (self, _scaled(self, other, alpha)), inplace=True)


def sub_(self, other, *, alpha=1):
    _check_inplace(self)
    if type(alpha) is not int or alpha != 1:
        _sub_check(self, other)
    call = _alpha_args(B.sub_alpha_op, self, other, alpha)
    if call is not None:
        return _pw(*call, inplace=True)
    return _pw(B.sub_op, (self, _scaled(self, other, alpha)), inplace=True)


def div_(self, other, *, rounding_mode=None):
    _check_inplace(self)
    op = {None: B.div_op, "trunc": B.div_trunc_op, "floor": B.floor_divide_op}.get(rounding_mode)
    if op is None:
        return div(self, other, rounding_mode=rounding_mode)  # raises torch's error
    return _pw(op, (self, other), inplace=True)


def pow_(self, exponent):
    _check_inplace(self)
    return copy_into(self, pow(self, exponent)) if self.dtype.category < 2 else _pw(
        B.pow_op, (self, exponent), inplace=True)


# the methods take no ``out=``, as torch's
def _add_method(self, other, *, alpha=1):
    return add(self, other, alpha=alpha)


def _sub_method(self, other, *, alpha=1):
    return sub(self, other, alpha=alpha)


def _div_method(self, other, *, rounding_mode=None):
    return div(self, other, rounding_mode=rounding_mode)


def _true_divide_method(self, other):
    return div(self, other)


def _pow_method(self, exponent):
    return pow(self, exponent)


def _float_power_method(self, exponent):
    return float_power(self, exponent)


# -- operators -------------------------------------------------------------------------------

def _operand(x) -> bool:
    return isinstance(x, (Tensor, numbers.Number))


_DIRECT = (Tensor, int, float)  # operands the OpDef takes as they are (bool is an int)


def _op2(fn, reverse: bool = False, op: registry.OpDef | None = None):
    """An operator method over ``fn``; with ``op`` (``fn`` is then exactly ``op`` on its two
    operands), tensor and Python-number operands go to dispatch directly: ``a + b`` is the
    hottest call of all and the wrapper frames were a tenth of its cost."""
    if op is not None:
        if reverse:
            def r(self, other):
                if isinstance(other, _DIRECT):
                    return _pw(op, (other, self))
                return fn(other, self) if _operand(other) else NotImplemented
        else:
            def r(self, other):
                if isinstance(other, _DIRECT):
                    return _pw(op, (self, other))
                return fn(self, other) if _operand(other) else NotImplemented
    elif reverse:
        def r(self, other):
            return fn(other, self) if _operand(other) else NotImplemented
    else:
        def r(self, other):
            return fn(self, other) if _operand(other) else NotImplemented
    return r


def _rdiv_method(self, other):
    """``other / self`` as torch's ``Tensor.__rdiv__``: ``self.reciprocal() * other``, so
    ``3 / x`` rounds as torch's does (not as ``div(3, x)``) and records torch's nodes."""
    if not _operand(other):
        return NotImplemented
    return mul(_pw(U.reciprocal_op, (self,)), other)


def _iop(fn):
    def r(self, other):
        _check_inplace(self)
        return fn(self, other)
    return r


def _neg_method(self):
    return _pw(U.neg_op, (self,))


def _pos_method(self):
    return self


def _invert(self):
    if self.dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _pw(U.bitwise_not_op, (self,))


# -- ternary and parameterised ---------------------------------------------------------------

def _clamp_overloads(name: str, min, max, method: bool, out=None) -> None:
    """torch binds min and max as two Tensors or two Numbers: a Tensor with a Number matches
    neither overload (its TypeError, with the arguments as passed positionally)."""
    if min is None or max is None or isinstance(min, Tensor) == isinstance(max, Tensor):
        return
    got = [type_name(min), type_name(max)]
    head = f"{name}() received an invalid combination of arguments - got "
    if method:
        why = ("\n      didn't match because some of the arguments have invalid types: "
               f"(!{got[0]}!, !{got[1]}!)")
        raise TypeError(f"{head}({', '.join(got)}), but expected one of:\n"
                        f" * (Tensor min = None, Tensor max = None){why}\n"
                        f" * (Number min = None, Number max = None){why}\n")
    got = ["Tensor", *got] + (["out=Tensor"] if out is not None else [])
    raise TypeError(f"{head}({', '.join(got)}), but expected one of:\n"
                    f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                    f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")


def clamp(input, min=None, max=None, *, out=None):
    """torch.clamp / clip: min and max may be numbers or tensors (broadcast), not one of each.

    >>> jtorch.clamp(jtorch.tensor([-2.0, 0.5, 3.0]), -1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    _clamp_overloads("clamp", min, max, False, out)
    return _clamp(input, min, max, out)


def clip(input, min=None, max=None, *, out=None):
    """Alias of ``clamp``."""
    _clamp_overloads("clip", min, max, False, out)
    return _clamp(input, min, max, out)


def _clamp(input, min, max, out):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if max is None:
        return _pw(B.clamp_min_op, (input, min), out)
    if min is None:
        return _pw(B.clamp_max_op, (input, max), out)
    return _pw(B.clamp_op, (input, min, max), out)


def clamp_min(input, min, *, out=None):
    return _pw(B.clamp_min_op, (input, min), out)


def clamp_max(input, max, *, out=None):
    return _pw(B.clamp_max_op, (input, max), out)


def _clamp_method(name: str, inplace: bool):
    def method(self, min=None, max=None):
        _clamp_overloads(name, min, max, True)
        if inplace:
            _check_inplace(self)
        return _clamp(self, min, max, self if inplace else None)

    method.__name__ = name
    return method


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2 in one pass (value is cast to the result dtype)."""
    _check_tensor(input, "addcmul")
    return _pw(B.addcmul_op, (input, tensor1, tensor2, value), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 in one pass; integer tensor1 and tensor2 raise."""
    _check_tensor(input, "addcdiv")
    return _pw(B.addcdiv_op, (input, tensor1, tensor2, value), out)


def _addc_inplace(op):
    def inplace(self, tensor1, tensor2, *, value=1):
        _check_inplace(self)
        return _pw(op, (self, tensor1, tensor2, value), inplace=True)
    return inplace


def _angle_scale(name: str, factor: float):
    """deg2rad/rad2deg: a multiplication by a constant; integers give the default float dtype."""
    def fn(input, *, out=None):
        _check_tensor(input, name)
        if input.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return _pw(B.mul_op, (input, factor), out)

    def inplace(self):
        _check_inplace(self)
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return _pw(B.mul_op, (self, factor), inplace=True)

    fn.__name__ = fn.__qualname__ = name
    _export(fn, name)
    _export(inplace, name + "_")
    GENERATED_METHODS[name] = lambda self: fn(self)
    GENERATED_METHODS[name + "_"] = inplace


_angle_scale("deg2rad", math.pi / 180)
_angle_scale("rad2deg", 180 / math.pi)


def positive(input):
    """torch.positive: the input itself (bool raises as unary + does)."""
    _check_tensor(input, "positive")
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def lerp(input, end, weight, *, out=None):
    return _pw(B.lerp_op, (input, end, weight), out)


def where(condition, input=None, other=None, *, out=None):
    """torch.where: 3-argument select, or 1-argument ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor) or condition.dtype is not _dt.bool:
        d = getattr(condition, "dtype", None)
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{dispatch.torch_name(d) if d is not None else type(condition).__name__}"
        )
    return _pw(B.where_op, (input, other, condition), out)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """torch.isclose: |input - other| <= atol + rtol * |other| (finite), or equal.

    Integer and bool inputs are compared in the default float dtype, as torch does (so
    integers beyond its precision can compare close); zero tolerances compare exactly.
    """
    _check_tensor(input, "isclose")
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"{dispatch.torch_name(input.dtype)} did not match {dispatch.torch_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        if rtol == 0 and atol == 0:
            return _pw(B.eq_op, (input, other))
        d = _dt.get_default_dtype()
        input, other = input.to(d), other.to(d)
    return _pw(B.isclose_op, (input, other, rtol, atol, equal_nan))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> bool:
    if input.shape != other.shape:
        return False
    return bool(eq(input, other).all())  # noqa: F821


def nan_to_num(input, nan: float = 0.0, posinf=None, neginf=None, *, out=None):
    if input.dtype.category < 2:
        return _pw(_COPY, (input,), out)
    info = _dt.finfo(input.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    return _pw(U.nan_to_num_op, (input, nan, posinf, neginf), out)


def logit(input, eps=None, *, out=None):
    """torch.logit: log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    _check_tensor(input, "logit")
    if eps is None:
        return _pw(U.logit_op, (input,), out)
    d = input.dtype if input.dtype.is_floating_point else _dt.get_default_dtype()
    lo = d.np.type(eps)  # torch rounds eps, then computes 1 - eps, in the compute dtype
    return _pw(U.logit_eps_op, (input, float(lo), float(d.np.type(1) - lo)), out)


for _fn in (addcmul, addcdiv, positive, clamp, clamp_min, clamp_max, lerp, where, isclose, allclose, equal, nan_to_num, logit):
    _export(_fn)
_export(clip)


# -- Tensor methods that adapt the functions above (no ``out=``; the self-first forms) ------

def _clamp_min_method(self, min):
    return clamp_min(self, min)


def _clamp_max_method(self, max):
    return clamp_max(self, max)


def _clamp_min_inplace(self, min):
    return _pw(B.clamp_min_op, (self, min), inplace=True)


def _clamp_max_inplace(self, max):
    return _pw(B.clamp_max_op, (self, max), inplace=True)


def _addcmul_method(self, tensor1, tensor2, *, value=1):
    return addcmul(self, tensor1, tensor2, value=value)


def _addcdiv_method(self, tensor1, tensor2, *, value=1):
    return addcdiv(self, tensor1, tensor2, value=value)


def _lerp_method(self, end, weight):
    return lerp(self, end, weight)


def _lerp_inplace(self, end, weight):
    return _pw(B.lerp_op, (self, end, weight), inplace=True)


def _where_method(self, condition, other):
    return where(condition, self, other)


def _nan_to_num_inplace(self, nan=0.0, posinf=None, neginf=None):
    return nan_to_num(self, nan, posinf, neginf, out=self)


def _logit_inplace(self, eps=None):
    return logit(self, eps, out=self)


_ = math
