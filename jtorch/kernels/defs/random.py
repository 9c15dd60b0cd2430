"""Random sampling ops: the in-place samplers (``uniform_``, ``normal_``, ``random_``,
``bernoulli_``, ``exponential_``, ``cauchy_``, ``log_normal_``, ``geometric_``), and
``randperm``, ``multinomial``, ``bernoulli`` and ``normal`` with tensor parameters.

The meta rules hold torch's argument checks (``DistributionTemplates.h`` wording) and resolve
the generator; the CPU kernels (``kernels/cpu/random``) draw from its Philox stream. On meta
tensors nothing is drawn (the generator does not advance); the factories ``rand``, ``randn``,
``randint`` and the ``*_like`` forms are ``empty`` followed by an in-place sampler.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import dispatch as _dispatch
from ... import dtypes as _dt
from ... import random as _random
from ...device import to_device
from ...shape import broadcast_shapes
from ..cpu import random as _k
from ..plan import Inplace, Out, Plan, common_device, device_of
from ..registry import defvjp, op

_BITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}
_DIGITS = _BITS

# C++ type names torch prints in bounds errors (c10's TypeMeta names).
_CNAME = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _tn(d: _dt.dtype) -> str:
    return _dispatch.torch_name(d)


def fmt(x: float) -> str:
    """A double as C++ streams print it (torch's error messages)."""
    return f"{x:g}"


def not_impl(kernel: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_tn(d)}\'')


def _inplace(x) -> None:
    if x._requires_grad or x._base is not None:  # (the common case, without a call)
        _dispatch.check_inplace(x)


def check_uniform_dtype(d: _dt.dtype) -> None:
    if not (d.is_floating_point or d.is_complex):
        raise not_impl("check_uniform_bounds", d)


def check_normal_dtype(d: _dt.dtype) -> None:
    if not (d.is_floating_point or d.is_complex):
        raise not_impl("normal_kernel_cpu", d)


def check_std(std: float, what: str = "normal expects std >= 0.0, but found std ") -> None:
    if not std >= 0.0:
        raise RuntimeError(f"{what}{fmt(std)}")


def normal_std(d: _dt.dtype, std: float) -> float:
    """Complex normals split the variance between the real and imaginary parts."""
    return std / 1.4142135623730951 if d.is_complex else std


# -- random_ bounds (torch's random_from_to_impl) --------------------------------------------

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


_BOUNDS: dict = {}


def _bounds(d: _dt.dtype) -> tuple:
    """(lowest, largest) value of dtype ``d`` (memoised)."""
    r = _BOUNDS.get(d)
    if r is None:
        if d.is_floating_point:
            info = _dt.np_finfo(d)
            r = (float(info.min), float(info.max))
        elif d is _dt.bool:
            r = (0, 1)
        else:
            info = np.iinfo(d.np)
            r = (int(info.min), int(info.max))
        _BOUNDS[d] = r
    return r


def _check_in_range(frm: int, to_inc: int, d: _dt.dtype) -> None:
    name = _CNAME[d.name]
    lo, hi = _bounds(d)
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
                    f"please fix the code in advance", UserWarning, stacklevel=6)


def random_range(d: _dt.dtype, frm: int, to: int | None) -> tuple:
    """(low, range) of integers ``random_`` draws into dtype ``d`` (range 0: all 2**64)."""
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
        return frm, (to - frm) % (1 << 64)
    if frm != -(1 << 63):
        if d.is_floating_point:
            to_inc = 1 << _DIGITS[d]
            frm = _update_from(frm, d)
            if not frm < to_inc:
                raise RuntimeError(
                    f"random_ expects 'from' casted to dtype to be less than or equal to "
                    f"'to_inc' casted to dtype, but got from={frm} > to_inc={to_inc}")
        else:
            to_inc = _bounds(d)[1]
        _check_in_range(frm, to_inc, d)
        return frm, (to_inc - frm + 1) % (1 << 64)
    return frm, 0


# -- in-place samplers ----------------------------------------------------------------------

def _plan(x, kw: dict) -> Plan:
    return Plan(Inplace(0), kw, device_of(x))


def _uniform_meta(x, *, frm: float = 0.0, to: float = 1.0, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "uniform_")
    d = x.dtype
    if not d.is_complex:
        check_uniform_dtype(d)
        lo, hi = _bounds(d)
        for v, what in ((frm, "from"), (to, "to")):
            if not lo <= v <= hi:
                raise RuntimeError(f"{what} is out of bounds for {_CNAME[d.name]}")
        if not frm <= to:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={fmt(frm)} > to={fmt(to)}")
        if not to - frm <= hi:
            raise RuntimeError(
                f"uniform_ expects to-from <= std::numeric_limits<{_tn(d)}>::max(), but found "
                f"to={fmt(to)} and from={fmt(frm)} which result in to-from to exceed the "
                f"limit")
    return _plan(x, {"dist": _k.UNIFORM, "a": frm, "b": to, "generator": gen})


def _normal_meta(x, *, mean: float = 0.0, std: float = 1.0, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "normal_")
    check_std(std)
    check_normal_dtype(x.dtype)
    return _plan(x, {"dist": _k.NORMAL, "a": mean, "b": normal_std(x.dtype, std),
                     "generator": gen})


def _random_meta(x, *, frm=None, to=None, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "random_")
    if frm is None and to is None and x.dtype.is_complex:
        raise not_impl("random_kernel_cpu", x.dtype)
    low, rng = random_range(x.dtype, 0 if frm is None else frm, to)
    return _plan(x, {"low": low, "rng": rng, "generator": gen})


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


def _bernoulli_checks(x, p_t, p) -> dict:
    """The checks of drawing into ``x`` with probabilities ``p_t`` (a tensor broadcast to x)
    or the float ``p``; the kernel's parameters."""
    if p_t is not None:
        if not p_t.dtype.is_floating_point:
            raise not_impl("bernoulli_tensor_cpu_p_", p_t.dtype)
        _check_expandable(p_t._a.shape, x._a.shape)
        return {"p": None}
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt(p)}")
    if x.dtype.is_complex:
        raise not_impl("bernoulli_scalar_cpu_", x.dtype)
    return {"p": p}


def _bernoulli_inplace_meta(x, p_t=None, *, p=0.5, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "bernoulli_")
    kw = _bernoulli_checks(x, p_t, p)
    kw["generator"] = gen
    return Plan(Inplace(0), kw, common_device(x, p_t))


def _continuous(x, what: str) -> None:
    d = x.dtype
    if not d.is_floating_point:
        name = _tn(d) if what == "Exponential" else _CNAME[d.name]
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


def _exponential_meta(x, *, lambd: float = 1.0, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "exponential_")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={fmt(lambd)}")
    _continuous(x, "Exponential")
    return _plan(x, {"dist": _k.EXPONENTIAL, "a": lambd, "b": 0.0, "generator": gen})


def _cauchy_meta(x, *, median: float = 0.0, sigma: float = 1.0, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "cauchy_")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt(sigma)}")
    _continuous(x, "Cauchy")
    return _plan(x, {"dist": _k.CAUCHY, "a": median, "b": sigma, "generator": gen})


def _log_normal_meta(x, *, mean: float = 1.0, std: float = 2.0, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "log_normal_")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt(std)}")
    if not x.dtype.is_floating_point:
        raise not_impl("log_normal_cpu", x.dtype)
    return _plan(x, {"dist": _k.LOG_NORMAL, "a": mean, "b": std, "generator": gen})


def _geometric_meta(x, *, p: float, generator=None) -> Plan:
    _inplace(x)
    gen = _random.resolve(generator, "geometric_")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt(p)}")
    if x.dtype is _dt.bool or x.dtype.is_complex:
        raise not_impl("geometric_cpu", x.dtype)
    return _plan(x, {"dist": _k.GEOMETRIC, "a": p, "b": 0.0, "generator": gen})


# -- fresh results --------------------------------------------------------------------------

def _rand_meta(*, size: tuple, dtype, device, generator=None) -> Plan:
    """rand: uniform on [0, 1) into a fresh tensor (the plan of ``empty`` + ``uniform_``)."""
    check_uniform_dtype(dtype)
    return Plan(Out(size, dtype), {"dist": _k.UNIFORM, "a": 0.0, "b": 1.0,
                                   "generator": _random.resolve(generator, "rand")}, device)


def _randn_meta(*, size: tuple, dtype, device, mean: float = 0.0, std: float = 1.0,
                generator=None) -> Plan:
    """randn and normal(mean, std, size): normal samples into a fresh tensor."""
    check_std(std)
    check_normal_dtype(dtype)
    return Plan(Out(size, dtype), {"dist": _k.NORMAL, "a": mean, "b": normal_std(dtype, std),
                                   "generator": _random.resolve(generator, "randn")}, device)


def _randint_meta(*, size: tuple, low: int, high: int, dtype, device, generator=None) -> Plan:
    low, rng = random_range(dtype, low, high)
    return Plan(Out(size, dtype), {"low": low, "rng": rng,
                                   "generator": _random.resolve(generator, "randint")}, device)


def _randperm_meta(*, n: int, dtype, device, generator=None) -> Plan:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    gen = _random.resolve(generator, "randperm")
    d = dtype
    if d is _dt.bool or d.is_complex:
        raise not_impl("randperm", d)
    if d.is_floating_point:
        limit = {_dt.float16: ("2049", 2049), _dt.float32: ("2^24+1", (1 << 24) + 1),
                 _dt.float64: ("2^53+1", (1 << 53) + 1)}.get(d)  # torch: no bfloat16 limit
        if limit is not None and n > limit[1]:
            raise RuntimeError(f"n cannot be greater than {limit[0]} for {_tn(d)} type.")
    elif n > 0 and n - 1 > np.iinfo(d.np).max:
        cname = "int" if d is _dt.int32 else f"{d.name}_t"
        raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    return Plan(Out((n,), d), {"generator": gen}, to_device(device))


def _multinomial_meta(x, *, num_samples: int, replacement: bool = False,
                      generator=None) -> Plan:
    k = num_samples
    gen = _random.resolve(generator, "multinomial")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_tn(x.dtype)}")
    nd = x._a.ndim
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if k <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = x._a.shape[-1]
    if not replacement and k > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (x._a.shape[0], k) if nd == 2 else (k,)
    return Plan(Out(shape, _dt.int64), {"num_samples": k, "replacement": bool(replacement),
                                        "generator": gen}, device_of(x))


def _bernoulli_meta(x, *, p=None, generator=None) -> Plan:
    """bernoulli(input): 0/1 draws with probabilities ``input`` (or the float ``p``), in
    ``input``'s dtype."""
    gen = _random.resolve(generator, "bernoulli")
    if p is None:
        if x.dtype.is_complex:
            raise not_impl("bernoulli_tensor_cpu_self_", x.dtype)
        kw = _bernoulli_checks(x, x, None)
    else:
        kw = _bernoulli_checks(x, None, p)
    kw["generator"] = gen
    return Plan(Out(x._a.shape, x.dtype), kw, device_of(x))


def _normal_tensor_meta(mean_t, std_t, *, mean: float = 0.0, std: float = 1.0,
                        generator=None) -> Plan:
    """normal(Tensor mean, Tensor std), normal(Tensor mean, float std), normal(float mean,
    Tensor std): the result has the broadcast shape and the tensor operands' dtype."""
    gen = _random.resolve(generator, "normal")
    if std_t is not None:
        if std_t.dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
    else:
        check_std(std)
    if mean_t is not None and std_t is not None:
        shape, d = broadcast_shapes(mean_t._a.shape, std_t._a.shape), mean_t.dtype
    elif mean_t is not None:
        shape, d = mean_t._a.shape, mean_t.dtype
    else:
        shape, d = std_t._a.shape, std_t.dtype
    check_normal_dtype(d)
    return Plan(Out(tuple(shape), d), {"mean": mean, "std": std, "generator": gen},
                common_device(mean_t, std_t))


# -- the records ----------------------------------------------------------------------------

uniform_op = op("uniform_", "random", _uniform_meta, _k.sample_cpu, differentiable=False)
normal_op = op("normal_", "random", _normal_meta, _k.sample_cpu, differentiable=False)
random_op = op("random_", "random", _random_meta, _k.random_cpu, differentiable=False)
bernoulli_op = op("bernoulli_", "random", _bernoulli_inplace_meta, _k.bernoulli_inplace_cpu,
                  differentiable=False)
exponential_op = op("exponential_", "random", _exponential_meta, _k.sample_cpu,
                    differentiable=False)
cauchy_op = op("cauchy_", "random", _cauchy_meta, _k.sample_cpu, differentiable=False)
log_normal_op = op("log_normal_", "random", _log_normal_meta, _k.sample_cpu,
                   differentiable=False)
geometric_op = op("geometric_", "random", _geometric_meta, _k.sample_cpu, differentiable=False)
rand_op = op("rand", "random", _rand_meta, _k.sample_new_cpu, differentiable=False)
randn_op = op("randn", "random", _randn_meta, _k.sample_new_cpu, differentiable=False)
randint_op = op("randint", "random", _randint_meta, _k.random_new_cpu, differentiable=False)
randperm_op = op("randperm", "random", _randperm_meta, _k.randperm_cpu, differentiable=False)
multinomial_op = op("multinomial", "random", _multinomial_meta, _k.multinomial_cpu,
                    differentiable=False)
bernoulli_tensor_op = op("bernoulli", "random", _bernoulli_meta, _k.bernoulli_cpu,
                         differentiable=False)
normal_tensor_op = op("normal", "random", _normal_tensor_meta, _k.normal_tensor_cpu)


def _normal_vjp(c, g):
    """torch's derivative of normal: zero for the mean and std tensors (the samples are not
    reparameterised)."""
    return tuple(g.new_zeros(m[0]) if need else None for need, m in zip(c.needs, c._meta))


def _normal_name(inputs: tuple, kw) -> str:
    mean_t, std_t = inputs
    return "NormalBackward3" if mean_t is not None and std_t is not None else \
        "NormalBackward1" if mean_t is not None else "NormalBackward2"


defvjp(normal_tensor_op, _normal_vjp, "", _normal_name)
