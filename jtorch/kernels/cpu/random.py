"""Random sampling: the op entries, and the counter-based Philox4x32-10 loops of the samplers
that run in parallel.

Uniform, normal, integer, permutation and bernoulli samples come from the generator's MT19937
engine as torch's CPU kernels draw them (``mt19937.py``), in torch's element order
(``_ordered``), and so do exponential, cauchy, log-normal, geometric and multinomial. Complex
samples take a 64-bit key from the engine (``Generator._take``) and run Philox streams:
block ``b`` of a call is the Philox output for the 128-bit counter ``b`` under that key, four
32-bit words, and each kernel maps output element ``i`` to a fixed block and word
(4 elements per block for 32-bit draws, 2 for 64-bit draws). So their numbers depend only on
the key and the element index: the parallel loops produce the same stream as the serial ones,
whatever the thread count.

Floats are made from the bits as torch does: the low 24 (float32), 11 (float16) or 53
(float64) bits times 2**-bits, uniform on [0, 1). Normals use Box-Muller on pairs (in
float32 arithmetic for float32 outputs, as torch's CPU kernel does).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ... import _threads
from ... import dispatch as _dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from ..jit import njit
from ..registry import REGISTRY as _OPS
from . import mt19937 as _mt
from .fill import alloc as _alloc
from .fill import copy_array as _copy_array

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_TWO_PI = 2.0 * math.pi
_M24 = np.uint64((1 << 24) - 1)
_F32_ONE = np.float32(1.0)
_F32_M2 = np.float32(-2.0)
_F32_2PI = np.float32(2.0 * math.pi)
_F32_2M24 = np.float32(1.0 / (1 << 24))

# Distribution codes of ``sample_float``.
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC, BERNOULLI = range(7)


@njit(cache=True, nogil=True, inline="always")
def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 of counter (c0..c3) under key (k0, k1); 32-bit words held in uint64."""
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _LO, (p0 >> _S32) ^ c3 ^ k1, p0 & _LO
        k0 = (k0 + _W0) & _LO
        k1 = (k1 + _W1) & _LO
    return c0, c1, c2, c3


@njit(cache=True, nogil=True, inline="always")
def _block(seed, ctr):
    z = np.uint64(0)
    return philox(ctr & _LO, ctr >> _S32, z, z, seed & _LO, seed >> _S32)


@njit(cache=True, nogil=True, inline="always")
def _u53(hi, lo):
    """Uniform on [0, 1) from the low 53 bits of the 64-bit word (hi, lo)."""
    return np.float64(((hi << _S32) | lo) >> _S11) * 1.1102230246251565e-16


@njit(cache=True, nogil=True)
def _transform(dist, u, a, b):
    """One sample of a single-draw distribution from ``u`` uniform on [0, 1)."""
    if dist == UNIFORM:
        return u * (b - a) + a
    if dist == EXPONENTIAL:
        return -1.0 / a * math.log1p(-u)
    if dist == CAUCHY:
        return a + b * math.tan(math.pi * (u - 0.5))
    if dist == GEOMETRIC:  # a = p; 1 - u is in (0, 1], so the result is >= 1
        return max(1.0, np.ceil(math.log1p(-u) / math.log1p(-a)))
    return 1.0 if u < a else 0.0  # BERNOULLI, a = p


@njit(cache=True, nogil=True)
def _pair(dist, u0, u1, a, b):
    """Two samples from two uniforms; normals share one Box-Muller transform."""
    if dist == NORMAL or dist == LOG_NORMAL:
        r = math.sqrt(-2.0 * math.log1p(-u1))
        z0 = r * math.cos(_TWO_PI * u0) * b + a
        z1 = r * math.sin(_TWO_PI * u0) * b + a
        if dist == LOG_NORMAL:
            return math.exp(z0), math.exp(z1)
        return z0, z1
    return _transform(dist, u0, a, b), _transform(dist, u1, a, b)


@njit(cache=True, nogil=True)
def _normal_pair32(x0, x1, dist, a, b):
    """Two normals in float32 arithmetic from 24-bit uniforms, as torch's CPU normal_fill."""
    u1 = _F32_ONE - np.float32(x0 & _M24) * _F32_2M24  # (0, 1]
    u2 = np.float32(x1 & _M24) * _F32_2M24
    r = math.sqrt(_F32_M2 * math.log(u1))
    th = _F32_2PI * u2
    z0 = np.float64(r * math.cos(th)) * b + a
    z1 = np.float64(r * math.sin(th)) * b + a
    if dist == LOG_NORMAL:
        return math.exp(z0), math.exp(z1)
    return z0, z1


@njit(cache=True, nogil=True, inline="always")
def _float_block(out, blk, seed, offset, dist, a, b, bits):
    n = out.size
    x0, x1, x2, x3 = _block(seed, offset + np.uint64(blk))
    if bits > 32:
        i = 2 * blk
        v0, v1 = _pair(dist, _u53(x0, x1), _u53(x2, x3), a, b)
        out[i] = v0
        if i + 1 < n:
            out[i + 1] = v1
        return
    i = 4 * blk
    if dist == NORMAL or dist == LOG_NORMAL:  # float32 Box-Muller on 24-bit uniforms (torch's)
        v0, v1 = _normal_pair32(x0, x1, dist, a, b)
        v2, v3 = _normal_pair32(x2, x3, dist, a, b)
    else:
        mask = (_ONE << np.uint64(bits)) - _ONE
        s = 1.0 / (1 << bits)
        v0, v1 = _pair(dist, np.float64(x0 & mask) * s, np.float64(x1 & mask) * s, a, b)
        v2, v3 = _pair(dist, np.float64(x2 & mask) * s, np.float64(x3 & mask) * s, a, b)
    out[i] = v0
    if i + 1 < n:
        out[i + 1] = v1
    if i + 2 < n:
        out[i + 2] = v2
    if i + 3 < n:
        out[i + 3] = v3


@njit(cache=True, nogil=True)
def _float_range(out, seed, offset, dist, a, b, bits, lo, hi):
    for blk in range(lo, hi):
        _float_block(out, blk, seed, offset, dist, a, b, bits)


@njit(cache=True, nogil=True, parallel=True)
def _float_par(out, seed, offset, dist, a, b, bits, nblk, chunk):
    for c in numba.prange((nblk + chunk - 1) // chunk):
        _float_range(out, seed, offset, dist, a, b, bits, c * chunk, min(nblk, (c + 1) * chunk))


def _chunk(nblk: int) -> int:
    """Parallel loops hand each task a run of blocks (a few per thread, for balance)."""
    return max(1, -(-nblk // (4 * _threads.get_num_threads())))


def float_blocks(n: int, bits: int) -> int:
    return -(-n // (2 if bits > 32 else 4))


def sample_float(out: np.ndarray, seed: int, offset: int, dist: int, a: float, b: float,
                 bits: int, parallel: bool) -> None:
    """Fill the contiguous 1-D float32/float64 ``out``; uses ``float_blocks(n, bits)`` blocks."""
    args = (out, np.uint64(seed), np.uint64(offset), dist, float(a), float(b), bits)
    nblk = float_blocks(out.size, bits)
    if parallel:
        _float_par(*args, nblk, _chunk(nblk))
    else:
        _float_range(*args, 0, nblk)


# -- argument checks -------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def all_in_range(flat, lo, hi):
    """True if every element x of the 1-D ``flat`` has lo <= x <= hi (nan fails)."""
    for i in range(flat.size):
        x = flat[i]
        if not (x >= lo and x <= hi):
            return False
    return True


# == op entries: ``kernels["cpu"](plan, *tensors)`` of the random OpDefs (``defs/random``) ==

_BITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}


def _flat(a: np.ndarray) -> np.ndarray | None:
    """A 1-D array over the elements of a dense (possibly permuted) ``a``, else None."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    isz = a.itemsize
    expected = isz
    for s, n in sorted((s, n) for n, s in zip(a.shape, a.strides) if n != 1):
        if s != expected:
            return None
        expected *= n
    lo = min((s for n, s in zip(a.shape, a.strides) if n != 1), default=isz)
    if lo != isz:
        return None
    return np.lib.stride_tricks.as_strided(a, (a.size,), (isz,))


def _draw_float(flat: np.ndarray, gen, dist: int, a: float, b: float, bits: int) -> None:
    n = flat.size
    s, off = gen._take(float_blocks(n, bits))
    sample_float(flat, s, off, dist, a, b, bits, _threads.use_parallel(n))


def _ordered(a: np.ndarray) -> np.ndarray:
    """``a``'s dims reordered as torch's TensorIterator walks them (largest stride outermost,
    ties in dim order): the element order of torch's serial sampling loops."""
    order = sorted(range(a.ndim), key=lambda k: -a.strides[k])
    return a.transpose(order) if order != list(range(a.ndim)) else a


def _store(v: np.ndarray, buf: np.ndarray) -> None:
    """Write the values ``buf`` (in ``v``'s C order) into the view ``v``, cast to its dtype."""
    if v.flags.c_contiguous and v.dtype == buf.dtype:
        v.reshape(-1)[:] = buf
    else:
        v[...] = buf.reshape(v.shape)


# A process's first float32 uniform_ and normal_ calls and its first 32-bit integer draws (a
# model's initialisation, its first inputs and labels) draw through NumPy's MT19937, with the
# same bits (``mt19937.uniform32_numpy``, ``normal_fill32_numpy``, ``from_to_numpy``), while
# the compiled kernel is not loaded, up to a budget of calls and elements per kernel. NumPy's
# uniform costs 0.1-0.2 ms a call and ~10 ns an element, its normal ~1 ms a call and ~180 ns
# an element; the compiled kernels ~1.2 s (uniform32) to ~3.5 s (normal_fill32, uniform32
# inside) to build cold, ~4 ms to load from the disk cache, and 0.3-3 ns an element. Past the
# budget, the compiled kernel.
_NUMPY_START = {"uniform32": {"calls": 64, "elements": 1 << 22},
                "normal_fill32": {"calls": 32, "elements": 1 << 20},
                "from_to": {"calls": 64, "elements": 1 << 22}}


def _numpy_start(n: int, kernel: str) -> bool:
    """Whether ``n`` more draws of ``kernel`` go through NumPy (and spend its budget)."""
    budget = _NUMPY_START[kernel]
    if getattr(_mt, kernel).signatures or budget["calls"] <= 0 or budget["elements"] < n:
        return False
    budget["calls"] -= 1
    budget["elements"] -= n
    return True


def _torch_fill(t: Tensor, gen, dist: int, a: float, b: float) -> None:
    """uniform_, normal_ and bernoulli_(p) as torch's CPU kernels draw them (``mt19937``)."""
    d = t.dtype
    v = _ordered(t._a)
    n = v.size
    flat = v.reshape(-1) if v.flags.c_contiguous and v.dtype == np.float64 or \
        v.flags.c_contiguous and v.dtype == np.float32 else None
    mt, pos = gen._mt, gen._pos
    if dist == BERNOULLI:
        buf = np.empty(n, np.bool_)
        with gen._lock:
            _mt.bernoulli_scalar(mt, pos, buf, float(a))
        _store(v, buf)
        return
    wide = d is _dt.float64
    buf = flat if flat is not None else np.empty(n, np.float64 if wide else np.float32)
    with gen._lock:
        if dist == UNIFORM:
            if wide:
                _mt.uniform64(mt, pos, buf, float(a), float(b))
            elif not (_numpy_start(n, "uniform32") and
                      _mt.uniform32_numpy(mt, pos, buf, float(a), float(b), d is _dt.float32)):
                _mt.uniform32(mt, pos, buf, float(a), float(b), d is _dt.float32)
        elif t._a.flags.c_contiguous and n >= 16:  # normal_fill
            if wide:
                _mt.normal_fill64(mt, pos, buf, float(a), float(b))
            elif d is not _dt.float32:
                _mt.normal_blocks32(mt, pos, buf, float(a), float(b))
            elif _numpy_start(n, "normal_fill32"):
                _mt.normal_fill32_numpy(mt, pos, buf, float(a), float(b))
            else:
                _mt.normal_fill32(mt, pos, buf, float(a), float(b))
        else:  # normal_distribution<double>, element by element
            z = np.empty(n, np.float64)
            _mt.normal_serial(mt, pos, gen._normal, z, float(a), float(b))
            buf = z
    if d in _dt.HALF:
        hd = d.np.type
        buf = buf.astype(hd)
        if dist == UNIFORM:  # torch clamps after rounding to the result's dtype
            buf[buf == hd(b)] = hd(a)
    if buf is not flat:
        _store(v, buf)


def _torch_double_fill(t: Tensor, gen, dist: int, a: float, b: float = 0.0) -> None:
    """exponential_, cauchy_, log_normal_ and geometric_ as torch's CPU kernels draw them:
    one ``*_distribution<double>`` sample per element in torch's element order, cast to the
    dtype (16-bit floats through float32, as c10's conversions go)."""
    v = _ordered(t._a)
    buf = np.empty(v.size, np.float64)
    mt, pos = gen._mt, gen._pos
    with gen._lock:
        if dist == EXPONENTIAL:
            _mt.exponential64(mt, pos, buf, float(a))
        elif dist == CAUCHY:
            _mt.cauchy64(mt, pos, buf, float(a), float(b))
        elif dist == GEOMETRIC:
            _mt.geometric64(mt, pos, buf, float(a))
        else:
            _mt.log_normal64(mt, pos, gen._normal, buf, float(a), float(b))
    if t.dtype is not _dt.float64:
        if t.dtype.is_floating_point:
            buf = buf.astype(np.float32)
        buf = buf.astype(t.dtype.np)
    _store(v, buf)


def fill_dist(t: Tensor, gen, dist: int, a: float = 0.0, b: float = 0.0) -> None:
    """Sample ``dist`` into ``t`` in place: uniform, normal and bernoulli as torch does
    (``_torch_fill``); the others directly into float32/float64 memory, else through a
    float32 (float16) or float64 (integers, bool) buffer cast into ``t``."""
    d = t.dtype
    if t._a.size == 0:
        return
    if dist == BERNOULLI or (dist in (UNIFORM, NORMAL) and d in _BITS):
        _torch_fill(t, gen, dist, a, b)
        return
    if dist in (EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC) and (d in _BITS or (
            dist == GEOMETRIC and not d.is_complex)):
        _torch_double_fill(t, gen, dist, a, b)
        return
    if d.is_complex:  # real and imaginary parts are independent real samples
        rd = d.to_real()
        a_ = t._a if t._a.flags.c_contiguous else np.empty(t._a.shape, d.np)
        _draw_float(a_.reshape(-1).view(rd.np), gen, dist, a, b, _BITS[rd])
        if a_ is not t._a:
            _copy_array(t._a, d, Tensor._make(a_))
        return
    flat = _flat(t._a) if d is _dt.float32 or d is _dt.float64 else None
    if flat is not None:
        _draw_float(flat, gen, dist, a, b, _BITS[d])
        return
    work = np.float32 if d in _dt.HALF else np.float64
    tmp = np.empty(t._a.shape, work)
    _draw_float(tmp.reshape(-1), gen, dist, a, b, _BITS.get(d, 53))
    _copy_array(t._a, d, Tensor._make(tmp))


_WIDE_INTS = (_dt.int64, _dt.float32, _dt.float64)  # dtypes whose wide ranges take 64-bit draws


def draw_int(t: Tensor, gen, low: int, rng: int) -> None:
    """Integers uniform on [low, low + rng) into ``t`` (``rng == 0``: all of int64), as
    torch's ``random_from_to``: ``draw % rng + low``."""
    n = t._a.size
    if n == 0:
        return
    v = _ordered(t._a)
    buf = np.empty(n, np.int64)
    wide = rng == 0 or (rng >= 1 << 32 and t.dtype in _WIDE_INTS)
    with gen._lock:
        if not wide and _numpy_start(n, "from_to"):
            _mt.from_to_numpy(gen._mt, gen._pos, buf, rng, low)
        else:
            _mt.from_to(gen._mt, gen._pos, buf, np.uint64(rng), np.int64(low), wide)
    if t.dtype is _dt.bool:
        buf = buf != 0
    _store(v, buf)


def _values(t: Tensor) -> np.ndarray:
    """A contiguous 1-D array of ``t``'s values that compiled kernels accept (no 16-bit floats)."""
    a = t._a
    if a.flags.c_contiguous and t.dtype not in _dt.HALF:
        return a.reshape(-1)
    d = _dt.float32 if t.dtype in _dt.HALF else t.dtype
    tmp = np.empty(a.shape, d.np)
    _copy_array(tmp, d, t)
    return tmp.reshape(-1)


def all_in(t: Tensor, lo: float, hi: float) -> bool:
    return t._a.size == 0 or bool(all_in_range(_values(t), lo, hi))


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


def sample_cpu(plan, x: Tensor) -> Tensor:
    kw = plan.kw
    fill_dist(x, kw["generator"], kw["dist"], kw["a"], kw["b"])
    return x


def sample_new_cpu(plan) -> Tensor:
    kw = plan.kw
    t = _alloc(plan.out)
    fill_dist(t, kw["generator"], kw["dist"], kw["a"], kw["b"])
    return t


def random_new_cpu(plan) -> Tensor:
    kw = plan.kw
    t = _alloc(plan.out)
    draw_int(t, kw["generator"], kw["low"], kw["rng"])
    return t


def random_cpu(plan, x: Tensor) -> Tensor:
    kw = plan.kw
    draw_int(x, kw["generator"], kw["low"], kw["rng"])
    return x


def _bernoulli_tensor(t: Tensor, p: Tensor, gen) -> None:
    """t[i] = u[i] < p[i], p broadcast to t, as torch: u a float64 uniform for float64 p,
    else a float32 one."""
    if not all_in(p, 0.0, 1.0):
        raise RuntimeError(_P_RANGE)
    if t._a.size == 0:
        return
    order = sorted(range(t._a.ndim), key=lambda k: -t._a.strides[k])
    v = t._a.transpose(order)
    wide = p.dtype is _dt.float64
    pa = p._a if p.dtype not in _dt.HALF else p._a.astype(np.float32)
    pv = np.ascontiguousarray(np.broadcast_to(pa, t._a.shape).transpose(order)).reshape(-1)
    hit = np.empty(v.size, np.bool_)
    with gen._lock:
        _mt.bernoulli_tensor(gen._mt, gen._pos, hit, pv.astype(np.float64), wide)
    _store(v, hit)


def bernoulli_inplace_cpu(plan, x: Tensor, p_t=None) -> Tensor:
    kw = plan.kw
    if p_t is not None:
        _bernoulli_tensor(x, p_t, kw["generator"])
    else:
        fill_dist(x, kw["generator"], BERNOULLI, kw["p"])
    return x


def bernoulli_cpu(plan, x: Tensor) -> Tensor:
    kw = plan.kw
    res = _alloc(plan.out)
    if kw["p"] is None:
        _bernoulli_tensor(res, x, kw["generator"])
    else:
        fill_dist(res, kw["generator"], BERNOULLI, kw["p"])
    return res


def randperm_cpu(plan) -> Tensor:
    n = plan.out.shape[0]
    d = plan.out.dtype
    buf = np.empty(n, np.int64)
    gen = plan.kw["generator"]
    with gen._lock:
        _mt.randperm(gen._mt, gen._pos, buf)
    if d is _dt.int64:
        return Tensor._make(buf)
    res = _alloc(plan.out)
    _copy_array(res._a, d, Tensor._make(buf))
    return res


_MULTINOMIAL_ERRORS = {
    1: "invalid multinomial distribution (encountering probability entry < 0)",
    2: "invalid multinomial distribution (sum of probabilities <= 0)",
    3: "invalid multinomial distribution (encountering probability entry = infinity or NaN)"}


def multinomial_cpu(plan, x: Tensor) -> Tensor:
    """torch's two CPU algorithms, with its draws: without replacement (or one sample) the
    largest k of p / q with q ~ Exp(1) (``exponential_``), else per sample a uniform double
    searched in the normalised running sums (``mt19937.multinomial_replace``)."""
    kw = plan.kw
    k, replacement, gen = kw["num_samples"], kw["replacement"], kw["generator"]
    nd = x._a.ndim
    n = x._a.shape[-1]
    rows = x._a.shape[0] if nd == 2 else 1
    d = x.dtype
    work = np.float64 if d is _dt.float64 else np.float32
    p = np.empty(x._a.shape, work)
    _copy_array(p, _dt.float64 if d is _dt.float64 else _dt.float32, x)
    p = p.reshape(rows, n)
    if not replacement or k == 1:
        if not (np.isfinite(p).all() and (p >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (p.sum(1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = Tensor._make(np.empty(x._a.shape, d.np), None, d)
        _torch_double_fill(q, gen, EXPONENTIAL, 1.0)
        ratio = (x._a / q._a).reshape(rows, n)  # in x's dtype, as torch's div_out
        if k == 1:
            res = np.argmax(ratio, axis=1).reshape(rows, 1)
        else:  # topk: the largest first
            res = np.argsort(-ratio.astype(np.float64), axis=1, kind="stable")[:, :k]
        res = np.ascontiguousarray(res, np.int64)
    else:
        res = np.empty((rows, k), np.int64)
        with gen._lock:
            code = _mt.multinomial_replace(gen._mt, gen._pos, p, res, np.empty(n, work))
        if code:
            raise RuntimeError(_MULTINOMIAL_ERRORS[code])
    return Tensor._make(res if nd == 2 else res.reshape(k))


def normal_tensor_cpu(plan, mean_t, std_t) -> Tensor:
    """mean + std * z with z standard normal (complex: variance 1/2 per part), in the
    result's dtype; stds must be >= 0."""

    kw = plan.kw
    if std_t is not None and not all_in(std_t, 0.0, math.inf):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    d = plan.out.dtype
    z = _alloc(plan.out)
    fill_dist(z, kw["generator"], NORMAL, 0.0,
              1 / math.sqrt(2.0) if d.is_complex else 1.0)
    std = std_t if std_t is not None else kw["std"]
    mean = mean_t if mean_t is not None else kw["mean"]
    if isinstance(std, Tensor) and std.dtype is not d:
        std = _cast(std, d)
    if isinstance(mean, Tensor) and mean.dtype is not d:
        mean = _cast(mean, d)
    if z._a.size:
        _dispatch.run_pointwise(_OPS["mul"], (z, std), z._a, d)
        _dispatch.run_pointwise(_OPS["add"], (z, mean), z._a, d)
    return z


def _cast(t: Tensor, d: _dt.dtype) -> Tensor:
    out = np.empty(t._a.shape, d.np)
    _copy_array(out, d, t)
    return Tensor._make(out, None, d)
