"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, the
``*_like`` variants and the in-place ``Tensor.uniform_``/``normal_``/``random_``/... methods.

Every sample comes from the Philox kernels of ``kernels/cpu/random.py`` driven by a
``jtorch.Generator`` (``jtorch/random.py``); argument checks and error messages follow
torch's ``DistributionTemplates.h``. Numbers differ from torch's (its CPU generator is an
mt19937) but the same seed gives the same numbers in every run, process and thread count.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from .. import random as _random
from .._threads import use_parallel
from ..device import to_device
from ..kernels import registry
from ..kernels.cpu import random as _K
from ..kernels.defs import binary as B
from ..shape import as_shape, broadcast_shapes
from ..tensor import Tensor
from ._util import tensor_method
from .creation import _dense_strides, _fmt, _sizes, copy_array, deliver, factory_dtype, like
from .creation import require_grad as _require_grad
from .pointwise import _check_inplace

Generator = _random.Generator
default_generator = _random.default_generator
manual_seed = _random.manual_seed
seed = _random.seed
initial_seed = _random.initial_seed
get_rng_state = _random.get_rng_state
set_rng_state = _random.set_rng_state

__all__ = [
    "Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed",
    "manual_seed", "multinomial", "normal", "rand", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "randperm", "seed", "set_rng_state",
]

uniform_op = registry.extern("uniform_", differentiable=False)
normal_op = registry.extern("normal_", differentiable=False)
random_op = registry.extern("random_", differentiable=False)
bernoulli_op = registry.extern("bernoulli_", differentiable=False)
exponential_op = registry.extern("exponential_", differentiable=False)
cauchy_op = registry.extern("cauchy_", differentiable=False)
log_normal_op = registry.extern("log_normal_", differentiable=False)
geometric_op = registry.extern("geometric_", differentiable=False)
randperm_op = registry.extern("randperm", differentiable=False)
multinomial_op = registry.extern("multinomial", differentiable=False)

_BITS = {_dt.float16: 11, _dt.float32: 24, _dt.float64: 53}
_DIGITS = _BITS
_SQRT2 = math.sqrt(2.0)

# C++ type names torch prints in bounds errors (c10's TypeMeta names).
_CNAME = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _tn(d: _dt.dtype) -> str:
    return dispatch.torch_name(d)


def _not_impl(kernel: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_tn(d)}\'')


# -- sampling into tensors -------------------------------------------------------------------

def _flat(a: np.ndarray) -> np.ndarray | None:
    """A 1-D array over the elements of a dense (possibly permuted) ``a``, else None."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    if _dense_strides(a) is None:
        return None
    return np.lib.stride_tricks.as_strided(a, (a.size,), (a.itemsize,))


def _parallel(n: int) -> bool:
    return use_parallel(n)


def _draw_float(flat: np.ndarray, gen, dist: int, a: float, b: float, bits: int) -> None:
    n = flat.size
    s, off = gen._take(_K.float_blocks(n, bits))
    _K.sample_float(flat, s, off, dist, a, b, bits, _parallel(n))


def _fill_dist(t: Tensor, gen, dist: int, a: float = 0.0, b: float = 0.0) -> None:
    """Sample ``dist`` into ``t`` in place: directly into float32/float64 memory, else through
    a float32 (float16) or float64 (integers, bool) buffer cast into ``t``."""
    d = t.dtype
    if t._a.size == 0:
        return
    if d.is_complex:  # real and imaginary parts are independent real samples
        rd = d.to_real()
        a_ = t._a if t._a.flags.c_contiguous else np.empty(t._a.shape, d.np)
        _draw_float(a_.reshape(-1).view(rd.np), gen, dist, a, b, _BITS[rd])
        if a_ is not t._a:
            copy_array(t._a, d, Tensor._make(a_))
    else:
        flat = _flat(t._a) if d is _dt.float32 or d is _dt.float64 else None
        if flat is not None:
            _draw_float(flat, gen, dist, a, b, _BITS[d])
        else:
            work = np.float32 if d is _dt.float16 else np.float64
            tmp = np.empty(t._a.shape, work)
            _draw_float(tmp.reshape(-1), gen, dist, a, b, _BITS.get(d, 53))
            copy_array(t._a, d, Tensor._make(tmp))
    dispatch.bump_version(t)


def _draw_int(t: Tensor, gen, low: int, rng: int) -> None:
    """Integers uniform on [low, low + rng) into ``t`` (``rng == 0``: all of int64)."""
    n = t._a.size
    if n == 0:
        return
    flat = _flat(t._a) if t.dtype is _dt.int64 else None
    buf = flat if flat is not None else np.empty(n, np.int64)
    s, off = gen._take(_K.int_blocks(n, rng))
    _K.sample_int(buf, s, off, low, rng, _parallel(n))
    if flat is None:
        copy_array(t._a, t.dtype, Tensor._make(buf.reshape(t._a.shape)))
    dispatch.bump_version(t)


def _values(t: Tensor) -> np.ndarray:
    """A contiguous 1-D array of ``t``'s values that compiled kernels accept (no float16)."""
    a = t._a
    if a.flags.c_contiguous and t.dtype is not _dt.float16:
        return a.reshape(-1)
    d = _dt.float32 if t.dtype is _dt.float16 else t.dtype
    tmp = np.empty(a.shape, d.np)
    copy_array(tmp, d, t)
    return tmp.reshape(-1)


def _all_in(t: Tensor, lo: float, hi: float) -> bool:
    return t._a.size == 0 or bool(_K.all_in_range(_values(t), lo, hi))


# -- random_ bounds (torch's random_from_to_impl) --------------------------------------------

def _int_arg(x, fn: str, name: str, pos: int) -> int:
    if isinstance(x, (bool, float)) or not hasattr(x, "__index__"):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(x).__name__}")
    v = x.__index__()
    if not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _as_float_int(v: int, d: _dt.dtype):
    """static_cast<int64_t>(static_cast<scalar_t>(v)), or None if it is not finite."""
    with np.errstate(over="ignore"):
        f = d.np.type(v)
    return int(f) if np.isfinite(f) else None


def _update_from(frm: int, d: _dt.dtype) -> int:
    """Move ``from`` right to the next value that stays >= from after casting to ``d``."""
    fp1 = _as_float_int(frm + 1, d)
    if fp1 is not None and fp1 < frm:
        n = max(abs(frm + 1).bit_length() - 1, 0)
        frm = fp1 + (1 << (n - _DIGITS[d] + 1))
    return frm


def _update_to(to: int, d: _dt.dtype) -> int:
    """Move ``to`` left to the previous value that stays < to after casting to ``d``."""
    tm1 = _as_float_int(to - 1, d)
    if tm1 is not None and tm1 >= to:
        n = max(abs(to - 1).bit_length() - 1, 0)
        to = tm1 - (1 << (n - _DIGITS[d] + 1))
    return to


def _check_in_range(frm: int, to_inc: int, d: _dt.dtype) -> None:
    name = _CNAME[d.name]
    if d.is_floating_point:
        info = np.finfo(d.np)
        lo, hi = float(info.min), float(info.max)
    elif d is _dt.bool:
        lo, hi = 0, 1
    else:
        info = np.iinfo(d.np)
        lo, hi = int(info.min), int(info.max)
    for v, what in ((frm, "from"), (to_inc, "to - 1")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if d.is_floating_point:
        digits = _DIGITS[d]
        for v, what in ((frm, "from"), (to_inc, "to - 1")):
            if v < -(1 << digits) or v > 1 << digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    f"this range. This warning will become an error in version 1.7 release, "
                    f"please fix the code in advance", UserWarning, stacklevel=4)


def _random_from_to(t: Tensor, frm: int, to: int | None, gen) -> None:
    d = t.dtype
    if d.is_complex:
        raise RuntimeError(
            "check_random_bounds handles only integral, floating-point and boolean types")
    if to is not None:
        if not frm < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={frm} >= to={to}")
        if d.is_floating_point:
            frm, to = _update_from(frm, d), _update_to(to, d)
            if not frm < to:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than "
                                   f"'to' casted to dtype, but got from={frm} >= to={to}")
        _check_in_range(frm, to - 1, d)
        rng = to - frm
    elif frm != -(1 << 63):
        if d.is_floating_point:
            to_inc = 1 << _DIGITS[d]
            frm = _update_from(frm, d)
            if not frm < to_inc:
                raise RuntimeError(
                    f"random_ expects 'from' casted to dtype to be less than or equal to "
                    f"'to_inc' casted to dtype, but got from={frm} > to_inc={to_inc}")
        else:
            to_inc = 1 if d is _dt.bool else int(np.iinfo(d.np).max)
        _check_in_range(frm, to_inc, d)
        rng = to_inc - frm + 1
    else:
        rng = 0  # all 2**64 values
    _draw_int(t, gen, frm, rng % (1 << 64))


# -- factories -------------------------------------------------------------------------------

def _check_uniform_dtype(d: _dt.dtype) -> None:
    if not (d.is_floating_point or d.is_complex):
        raise _not_impl("check_uniform_bounds", d)


def _check_normal_dtype(d: _dt.dtype) -> None:
    if not (d.is_floating_point or d.is_complex):
        raise _not_impl("normal_kernel_cpu", d)


def _normal_std(d: _dt.dtype, std: float) -> float:
    """Complex normals split the variance between the real and imaginary parts."""
    return std / _SQRT2 if d.is_complex else std


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False, **kwargs) -> Tensor:
    """Uniform samples on [0, 1).

    >>> jtorch.manual_seed(0); jtorch.rand(2).shape
    torch.Size([2])
    """
    to_device(device)
    shape = _sizes(size, kwargs, "rand")
    gen = _random.resolve(generator, "rand")
    d = factory_dtype(dtype, out)
    _check_uniform_dtype(d)
    res = dispatch.empty_tensor(shape, d)
    _fill_dist(res, gen, _K.UNIFORM, 0.0, 1.0)
    return deliver(res, out, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False, pin_memory: bool = False, **kwargs) -> Tensor:
    """Standard normal samples (complex dtypes: variance 1/2 per part)."""
    to_device(device)
    shape = _sizes(size, kwargs, "randn")
    gen = _random.resolve(generator, "randn")
    d = factory_dtype(dtype, out)
    _check_normal_dtype(d)
    res = dispatch.empty_tensor(shape, d)
    _fill_dist(res, gen, _K.NORMAL, 0.0, _normal_std(d, 1.0))
    return deliver(res, out, requires_grad)


def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> jtorch.randint(3, 5, (4,)).dtype
    torch.int64
    """
    to_device(device)
    pos = list(args)
    if size is None:
        if not pos:
            raise TypeError("randint() missing required argument 'size' (pos 2)")
        size = pos.pop()
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple "
                            f"of ints, not {type(size).__name__}")
    if len(pos) == 2:
        low, high = pos
    elif len(pos) == 1:
        if high is None:
            high = pos[0]
        else:
            low = pos[0]
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    low = 0 if low is None else _int_arg(low, "randint", "low", 1)
    high = _int_arg(high, "randint", "high", 2 if len(pos) == 2 else 1)
    shape = as_shape(tuple(size))
    gen = _random.resolve(generator, "randint")
    d = factory_dtype(dtype, out, _dt.int64)
    res = dispatch.empty_tensor(shape, d)
    _random_from_to(res, low, high, gen)
    return deliver(res, out, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A uniformly random permutation of ``0 .. n-1`` (Fisher-Yates).

    >>> sorted(jtorch.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    to_device(device)
    n = _int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    gen = _random.resolve(generator, "randperm")
    d = factory_dtype(dtype, out, _dt.int64)
    _check_randperm(n, d)
    buf = np.empty(n, np.int64)
    s, off = gen._take(_K.randperm_blocks(n))
    _K.randperm(buf, s, off)
    res = Tensor._make(buf)
    if d is not _dt.int64:
        res = dispatch.empty_tensor((n,), d)
        copy_array(res._a, d, Tensor._make(buf))
    return dispatch.record(randperm_op, (), deliver(res, out, requires_grad))


def _check_randperm(n: int, d: _dt.dtype) -> None:
    if d is _dt.bool or d.is_complex:
        raise _not_impl("randperm", d)
    if d.is_floating_point:
        limit = {_dt.float16: ("2049", 2049), _dt.float32: ("2^24+1", (1 << 24) + 1),
                 _dt.float64: ("2^53+1", (1 << 53) + 1)}[d]
        if n > limit[1]:
            raise RuntimeError(f"n cannot be greater than {limit[0]} for {_tn(d)} type.")
    elif n > 0 and n - 1 > np.iinfo(d.np).max:
        cname = "int" if d is _dt.int32 else f"{d.name}_t"
        raise RuntimeError(f"value cannot be converted to type {cname} without overflow")


def _tensor_like(input, fn: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def rand_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    to_device(device)
    _tensor_like(input, "rand_like")
    gen = _random.resolve(generator, "rand_like")
    t = like(input, dtype, memory_format)
    _check_uniform_dtype(t.dtype)
    _fill_dist(t, gen, _K.UNIFORM, 0.0, 1.0)
    return _require_grad(t, requires_grad)


def randn_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    to_device(device)
    _tensor_like(input, "randn_like")
    gen = _random.resolve(generator, "randn_like")
    t = like(input, dtype, memory_format)
    _check_normal_dtype(t.dtype)
    _fill_dist(t, gen, _K.NORMAL, 0.0, _normal_std(t.dtype, 1.0))
    return _require_grad(t, requires_grad)


def randint_like(input: Tensor, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Integers on [low, high) shaped like ``input`` (``randint_like(x, high)`` too)."""
    to_device(device)
    _tensor_like(input, "randint_like")
    if high is None:
        low, high = 0, low
    low = _int_arg(low, "randint_like", "low", 2)
    high = _int_arg(high, "randint_like", "high", 3)
    gen = _random.resolve(generator, "randint_like")
    t = like(input, dtype, memory_format)
    _random_from_to(t, low, high, gen)
    return _require_grad(t, requires_grad)


# -- normal ----------------------------------------------------------------------------------

def _check_std(std: float, what: str = "normal expects std >= 0.0, but found std ") -> None:
    if not std >= 0.0:
        raise RuntimeError(f"{what}{_fmt(std)}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples: ``normal(mean_tensor, std_tensor)`` (broadcast), ``normal(mean_tensor,
    std=1.0)``, ``normal(mean, std_tensor)`` or ``normal(mean, std, size)``. Tensor means and
    stds enter through ``mean + std * z`` pointwise ops, so gradients flow to them.

    >>> jtorch.normal(0.0, 1.0, (3,)).shape
    torch.Size([3])
    """
    gen = _random.resolve(generator, "normal")
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None or not (mt or st):
        if mt or st or size is None:
            got = ", ".join(type(x).__name__ for x in (mean, std) + ((size,) if size else ()))
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({got}), but expected one of: (Tensor mean, Tensor std), (Tensor "
                            f"mean, float std), (float mean, Tensor std), (float mean, float "
                            f"std, tuple of ints size)")
        to_device(device)
        mean, std = float(mean), float(std)
        d = factory_dtype(dtype, out)
        _check_std(std)
        _check_normal_dtype(d)
        res = dispatch.empty_tensor(as_shape(tuple(size)), d)
        _fill_dist(res, gen, _K.NORMAL, mean, _normal_std(d, std))
        return deliver(res, out, requires_grad)
    if st:
        if std.dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if not _all_in(std, 0.0, math.inf):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        std = float(std)
        _check_std(std)
    if mt and st:
        shape, d = broadcast_shapes(mean._a.shape, std._a.shape), mean.dtype
    elif mt:
        shape, d = mean._a.shape, mean.dtype
    else:
        mean = float(mean)
        shape, d = std._a.shape, std.dtype
    _check_normal_dtype(d)
    z = dispatch.empty_tensor(shape, d)
    _fill_dist(z, gen, _K.NORMAL, 0.0, _normal_std(d, 1.0))
    res = dispatch.pointwise(B.add_op, (dispatch.pointwise(B.mul_op, (z, _as(std, d))),
                                        _as(mean, d)))
    if out is not None and out._a.shape != res._a.shape and out._a.size:
        dispatch.resize_out(out, res._a.shape)  # torch warns here (resize_output)
    return deliver(res, out)


def _as(x, d: _dt.dtype):
    """A tensor operand in dtype ``d`` (so ``mean + std * z`` keeps the output dtype)."""
    if isinstance(x, Tensor) and x.dtype is not d:
        from .conversion import cast

        return cast(x, d)
    return x


# -- bernoulli / multinomial -----------------------------------------------------------------

_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_expandable(shape: tuple, target: tuple) -> None:
    """torch's ``expand`` errors for a tensor of ``shape`` expanded to ``target``."""
    if len(shape) > len(target):
        raise RuntimeError(f"The number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(shape)})")
    off = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and shape[i] != target[off + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[off + i]}) must match the existing "
                f"size ({shape[i]}) at non-singleton dimension {off + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}")


def _bernoulli_tensor(t: Tensor, p: Tensor, gen) -> None:
    """t[i] = u[i] < p[i] with u uniform on [0, 1) (53 bits), p broadcast to t."""
    if not p.dtype.is_floating_point:
        raise _not_impl("bernoulli_tensor_cpu_p_", p.dtype)
    _check_expandable(p._a.shape, t._a.shape)
    if not _all_in(p, 0.0, 1.0):
        raise RuntimeError(_P_RANGE)
    if t._a.size == 0:
        return
    u = dispatch.empty_tensor(t._a.shape, _dt.float64)
    _draw_float(u._a.reshape(-1), gen, _K.UNIFORM, 0.0, 1.0, 53)
    copy_array(t._a, t.dtype, dispatch.pointwise(B.lt_op, (u, p)))
    dispatch.bump_version(t)


def _bernoulli_scalar(t: Tensor, p: float, gen) -> None:
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    if t.dtype.is_complex:
        raise _not_impl("bernoulli_scalar_cpu_", t.dtype)
    _fill_dist(t, gen, _K.BERNOULLI, p)


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """Draw 0/1 with probabilities ``input`` (or the float ``p``), in ``input``'s dtype.

    >>> jtorch.bernoulli(jtorch.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    _tensor_like(input, "bernoulli")
    gen = _random.resolve(generator, "bernoulli")
    res = dispatch.empty_tensor(input._a.shape, input.dtype)
    if p is None:
        if input.dtype.is_complex:
            raise _not_impl("bernoulli_tensor_cpu_self_", input.dtype)
        _bernoulli_tensor(res, input, gen)
    else:
        _bernoulli_scalar(res, p, gen)
    return dispatch.record(bernoulli_op, (input,), deliver(res, out))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None,
                out=None) -> Tensor:
    """Sample category indices from the rows of ``input`` (weights, need not sum to one);
    without replacement each draw is proportional to the weights not yet drawn.

    >>> jtorch.multinomial(jtorch.tensor([0., 1., 0.]), 1).tolist()
    [1]
    """
    _tensor_like(input, "multinomial")
    k = _int_arg(num_samples, "multinomial", "num_samples", 2)
    gen = _random.resolve(generator, "multinomial")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_tn(input.dtype)}")
    nd = input._a.ndim
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if k <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input._a.shape[-1]
    if not replacement and k > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = input._a.shape[0] if nd == 2 else 1
    p = _float64_rows(input, rows, n)
    res = np.empty((rows, k), np.int64)
    s, off = gen._take(_K.multinomial_blocks(rows, n, k, replacement))
    code = _K.multinomial(p, res, k, replacement, s, off, _parallel(rows * max(n, k)))
    if code == 1:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if code == 2:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    r = Tensor._make(res if nd == 2 else res.reshape(k))
    return dispatch.record(multinomial_op, (input,), deliver(r, out))


def _float64_rows(t: Tensor, rows: int, n: int) -> np.ndarray:
    """``t``'s values as a C-contiguous float64 (rows, n) array (copied only if needed)."""
    a = t._a
    if t.dtype is _dt.float64 and a.flags.c_contiguous:
        return a.reshape(rows, n)
    p = np.empty(a.shape, np.float64)
    copy_array(p, _dt.float64, t)
    return p.reshape(rows, n)


tensor_method("multinomial")(multinomial)


# -- in-place Tensor methods -----------------------------------------------------------------

@tensor_method()
def uniform_(self, a: float = 0.0, to: float = 1.0, *, generator=None, **kwargs) -> Tensor:
    """Fill with samples uniform on [from, to) (``from`` is accepted as a keyword too)."""
    frm = float(kwargs.pop("from", a))
    to = float(to)
    _check_inplace(self)
    gen = _random.resolve(generator, "uniform_")
    d = self.dtype
    if not d.is_complex:
        _check_uniform_dtype(d)
        info = np.finfo(d.np)
        lo, hi = float(info.min), float(info.max)
        for v, what in ((frm, "from"), (to, "to")):
            if not lo <= v <= hi:
                raise RuntimeError(f"{what} is out of bounds for {_CNAME[d.name]}")
        if not frm <= to:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={_fmt(frm)} > to={_fmt(to)}")
        if not to - frm <= hi:
            raise RuntimeError(
                f"uniform_ expects to-from <= std::numeric_limits<{_tn(d)}>::max(), but found "
                f"to={_fmt(to)} and from={_fmt(frm)} which result in to-from to exceed the "
                f"limit")
    _fill_dist(self, gen, _K.UNIFORM, frm, to)
    return dispatch.record(uniform_op, (self,), self)


@tensor_method()
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    mean, std = float(mean), float(std)
    _check_inplace(self)
    gen = _random.resolve(generator, "normal_")
    _check_std(std)
    _check_normal_dtype(self.dtype)
    _fill_dist(self, gen, _K.NORMAL, mean, _normal_std(self.dtype, std))
    return dispatch.record(normal_op, (self,), self)


@tensor_method()
def random_(self, *args, generator=None, **kwargs) -> Tensor:
    """``random_()``: the dtype's whole range; ``random_(to)``: [0, to);
    ``random_(from, to)``: [from, to) (``to=None``: up to the dtype's maximum)."""
    _check_inplace(self)
    gen = _random.resolve(generator, "random_")
    if len(args) > 2:
        raise TypeError(f"random_() takes from 0 to 2 positional arguments but {len(args)} "
                        f"were given")
    if len(args) == 1 and "to" not in kwargs:
        frm, to = kwargs.pop("from", 0), args[0]
    else:
        args = args + (None,) * (2 - len(args))
        frm = kwargs.pop("from", args[0])
        to = kwargs.pop("to", args[1])
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if frm is None and to is None and self.dtype.is_complex:
        raise _not_impl("random_kernel_cpu", self.dtype)
    frm = 0 if frm is None else _int_arg(frm, "random_", "from", 1)
    to = None if to is None else _int_arg(to, "random_", "to", 2)
    _random_from_to(self, frm, to, gen)
    return dispatch.record(random_op, (self,), self)


@tensor_method()
def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 draws of probability ``p`` (a float or a tensor broadcast to self)."""
    _check_inplace(self)
    gen = _random.resolve(generator, "bernoulli_")
    if isinstance(p, Tensor):
        _bernoulli_tensor(self, p, gen)
    else:
        _bernoulli_scalar(self, p, gen)
    return dispatch.record(bernoulli_op, (self,), self)


Tensor.bernoulli = lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator)


def _continuous(self: Tensor, what: str) -> None:
    d = self.dtype
    if not d.is_floating_point:
        name = _tn(d) if what == "Exponential" else _CNAME[d.name]
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


@tensor_method()
def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    lambd = float(lambd)
    _check_inplace(self)
    gen = _random.resolve(generator, "exponential_")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    _continuous(self, "Exponential")
    _fill_dist(self, gen, _K.EXPONENTIAL, lambd)
    return dispatch.record(exponential_op, (self,), self)


@tensor_method()
def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    median, sigma = float(median), float(sigma)
    _check_inplace(self)
    gen = _random.resolve(generator, "cauchy_")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    _continuous(self, "Cauchy")
    _fill_dist(self, gen, _K.CAUCHY, median, sigma)
    return dispatch.record(cauchy_op, (self,), self)


@tensor_method()
def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    mean, std = float(mean), float(std)
    _check_inplace(self)
    gen = _random.resolve(generator, "log_normal_")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    if not self.dtype.is_floating_point:
        raise _not_impl("log_normal_cpu", self.dtype)
    _fill_dist(self, gen, _K.LOG_NORMAL, mean, std)
    return dispatch.record(log_normal_op, (self,), self)


@tensor_method()
def geometric_(self, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    p = float(p)
    _check_inplace(self)
    gen = _random.resolve(generator, "geometric_")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    if self.dtype is _dt.bool or self.dtype.is_complex:
        raise _not_impl("geometric_cpu", self.dtype)
    _fill_dist(self, gen, _K.GEOMETRIC, p)
    return dispatch.record(geometric_op, (self,), self)
