"""Counter-based random numbers on CUDA (Philox4x32-10): the device kernels of the sampling ops.

The stream. A call draws from one Philox4x32-10 key ``(k0, k1)`` and one 64-bit call offset
``c``; the element of logical (row-major) index ``i`` of the result takes words of block
``b = i // per``, the Philox output for the counter ``(b mod 2**32, b >> 32, c mod 2**32,
c >> 32)`` under that key (four 32-bit words):
- the default generator of device ``d``: key = its seed (low word, high word), ``c`` = the
  offset ``jtorch.cuda.random.philox_state(d, 4)`` reserves, so calls advance it by 4 and
  never reuse a counter; ``manual_seed`` and ``set_rng_state`` set both numbers;
- a ``Generator(device="cuda")`` passed as ``generator=``: the same with its own seed and
  offset (``Generator.philox_take``); ``manual_seed``, ``set_offset`` and ``set_state`` set
  them as torch's CUDA generator does.
``per`` is 4 where an element takes one word (float32 results, bernoulli with float32
probabilities, integer ranges under 2**32) and 2 where it takes two, words ``2j, 2j + 1``
(float64, integer and bool results of the float samplers, bernoulli with float64
probabilities, wider integer ranges in int64, float32 and float64, as the CPU's). So a value
depends on the key, ``c`` and ``i`` only, not on the launch geometry: each thread computes
whole blocks in a grid-stride loop. Not torch's numbers (torch runs curand's Philox per
thread); the same distributions:
- uniform on [0, 1): the low 24 bits of a word times 2**-24 (float32), 53 bits of a word pair
  times 2**-53 (the others); ``uniform_(from, to)`` is ``from + u (to - from)`` in float64,
  stored, and a stored value that rounded to ``to`` becomes ``from`` (torch's CUDA rule);
- normal: Box-Muller on two uniforms (elements ``2m`` and ``2m + 1`` of a block share one
  pair: cosine and sine); log-normal: its exp; exponential ``-log1p(-u) / lambda``; cauchy
  ``median + sigma tan(pi (u - 1/2))``; geometric ``max(1, ceil(log1p(-u) / log1p(-p)))``;
  bernoulli ``u < p`` (a float64 uniform for float64 probabilities, else a float32 one);
- integers (``random_``, ``randint``): ``word % range + low`` (all 64 bits where the range is
  2**64), as torch.
Everything computes in float64 and is stored in the result's dtype. The per-block arithmetic
is ``numba.njit`` code (CPU's ``philox``: 32-bit words in uint64, so no product or sum
overflows and the simulator's NumPy integers agree with the device's); CUDA compiles it into
the kernels, the simulator runs it compiled for the CPU.

bfloat16 and complex results run the CPU kernel over host copies (``eager.host_kernel``,
counted in ``FALLBACKS``, drawing from the CPU generator), as does ``_sample_dirichlet``.
``randperm``, ``multinomial``, ``poisson``, ``binomial`` and ``_standard_gamma`` draw from this
stream in ``sampling.py`` (registered there; bfloat16 on the host path too). A CPU generator
with CUDA operands raises torch's error. ``DRAWS`` counts the calls drawn on the device, per op.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from ... import random as _random
from ...cuda import random as _cuda_random
from ...shape import bcast_elem_strides
from ...tensor import Tensor
from .. import registry
from ..cpu import random as _cpu
from ..jit import njit
from ..plan import Plan
from . import eager, target
from . import pointwise as _pw
from .scalars import TWINS, maximum

cuda = target.cuda
philox, _u53 = _cpu.philox, _cpu._u53
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY = _cpu.UNIFORM, _cpu.NORMAL, _cpu.EXPONENTIAL, _cpu.CAUCHY
LOG_NORMAL, GEOMETRIC, BERNOULLI = _cpu.LOG_NORMAL, _cpu.GEOMETRIC, _cpu.BERNOULLI

THREADS = eager.THREADS
MAX_BLOCKS = eager.MAX_BLOCKS

DRAWS: collections.Counter = collections.Counter()

_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ZERO = np.uint64(0)
_HALF = np.uint64(1 << 63)
_M24 = np.uint64((1 << 24) - 1)
_TWO_PI = 2.0 * math.pi
_ceil = TWINS[np.ceil]

_FLOAT = frozenset({"float16", "float32", "float64"})
# the dtypes the kernels store (float16 rounded from the float64 sample by the store; bfloat16
# and complex numbers take the host path)
_NATIVE = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                     "float64"})
_WIDE_INTS = frozenset({"int64", "float32", "float64"})  # dtypes whose wide ranges take 64 bits
_CPU_GENERATOR = "Expected a 'cuda' device type for generator but found 'cpu'"


# -- per-block arithmetic (njit: compiled into the CUDA kernels, and for the simulator) ---------

@njit(cache=True, nogil=True, inline="always")
def _block(blk, k0, k1, c0, c1):
    """The four words of block ``blk`` (uint64) at call offset (c0, c1) under key (k0, k1)."""
    return philox(blk & _LO, blk >> _S32, c0, c1, k0, k1)


@njit(cache=True, nogil=True, inline="always")
def _u24(x):
    return np.float64(x & _M24) * 5.9604644775390625e-08


@njit(cache=True, nogil=True)
def uniforms(blk, k0, k1, c0, c1, wide):
    """Block ``blk``'s uniforms on [0, 1): four of 24 bits, or two of 53 (then 0.0, 0.0)."""
    x0, x1, x2, x3 = _block(blk, k0, k1, c0, c1)
    if wide:
        return _u53(x0, x1), _u53(x2, x3), 0.0, 0.0
    return _u24(x0), _u24(x1), _u24(x2), _u24(x3)


@njit(cache=True, nogil=True, inline="always")
def _box_muller(u0, u1, dist, a, b):
    r = math.sqrt(-2.0 * math.log1p(-u1))
    z0 = r * math.cos(_TWO_PI * u0) * b + a
    z1 = r * math.sin(_TWO_PI * u0) * b + a
    if dist == LOG_NORMAL:
        return math.exp(z0), math.exp(z1)
    return z0, z1


@njit(cache=True, nogil=True, inline="always")
def _one(dist, u, a, b):
    """A sample of a one-uniform distribution (``dist`` as the CPU's codes)."""
    if dist == UNIFORM:
        return u * (b - a) + a
    if dist == EXPONENTIAL:
        return -math.log1p(-u) / a
    if dist == CAUCHY:
        return a + b * math.tan(math.pi * (u - 0.5))
    if dist == GEOMETRIC:  # 1 - u is in (0, 1]: the result is >= 1
        return maximum(1.0, _ceil(math.log1p(-u) / math.log1p(-a)))
    return 1.0 if u < a else 0.0  # BERNOULLI


@njit(cache=True, nogil=True)
def samples(blk, k0, k1, c0, c1, dist, a, b, wide):
    """Block ``blk``'s four samples (two, then 0.0, 0.0, where ``wide``)."""
    u0, u1, u2, u3 = uniforms(blk, k0, k1, c0, c1, wide)
    if dist == NORMAL or dist == LOG_NORMAL:
        v0, v1 = _box_muller(u0, u1, dist, a, b)
        if wide:
            return v0, v1, 0.0, 0.0
        v2, v3 = _box_muller(u2, u3, dist, a, b)
        return v0, v1, v2, v3
    if wide:
        return _one(dist, u0, a, b), _one(dist, u1, a, b), 0.0, 0.0
    return _one(dist, u0, a, b), _one(dist, u1, a, b), _one(dist, u2, a, b), _one(dist, u3, a, b)


@njit(cache=True, nogil=True, inline="always")
def _ranged(w, rng, low, lowp):
    """``w % rng + low`` as int64 without overflow (rng 0: all 2**64; ``lowp`` = low + 2**63,
    needed only where the remainder reaches 2**63, which needs low < 0)."""
    r = w % rng if rng != _ZERO else w
    if r >= _HALF:
        return np.int64(r - _HALF) + lowp
    return np.int64(r) + low


@njit(cache=True, nogil=True)
def integers(blk, k0, k1, c0, c1, rng, low, lowp, wide):
    """Block ``blk``'s four integers in [low, low + rng) (two of 64-bit words where ``wide``)."""
    x0, x1, x2, x3 = _block(blk, k0, k1, c0, c1)
    if wide:
        return (_ranged((x0 << _S32) | x1, rng, low, lowp),
                _ranged((x2 << _S32) | x3, rng, low, lowp), np.int64(0), np.int64(0))
    return (_ranged(x0, rng, low, lowp), _ranged(x1, rng, low, lowp),
            _ranged(x2, rng, low, lowp), _ranged(x3, rng, low, lowp))


# -- kernels ------------------------------------------------------------------------------------
# ``geo`` rows: the shape, then the result's element strides (then the probabilities'): the
# element of logical index i sits at ``base + at(geo, 1, i)``.

@cuda.jit(device=True)
def at(geo, row, i):
    """The storage offset of logical element ``i`` along ``geo`` row ``row``."""
    if geo.shape[1] == 1:  # (one dim: a dense result's, merged) no division
        return i * geo[row, 0]
    off = 0
    rem = i
    for d in range(geo.shape[1] - 1, -1, -1):
        m = geo[0, d]
        off += (rem % m) * geo[row, d]
        rem //= m
    return off


@cuda.jit(device=True)
def _put(geo, out, base, n, i, v, top, low):
    """out[i] = v; a value stored as ``top`` becomes ``low`` (uniform's [from, to))."""
    if i < n:
        p = base + at(geo, 1, i)
        out[p] = v
        if out[p] == top:
            out[p] = low


def fill_float(geo, out, base, n, k0, k1, c0, c1, dist, a, b, top, wide):
    """The float samplers (uniform, normal, exponential, cauchy, log-normal, geometric,
    bernoulli with a scalar p) into ``n`` elements of ``out``."""
    per = 2 if wide else 4
    nblk = (n + per - 1) // per
    blk = cuda.grid(1)
    step = cuda.gridsize(1)
    while blk < nblk:
        v0, v1, v2, v3 = samples(np.uint64(blk), k0, k1, c0, c1, dist, a, b, wide)
        i = blk * per
        _put(geo, out, base, n, i, v0, top, a)
        _put(geo, out, base, n, i + 1, v1, top, a)
        if not wide:
            _put(geo, out, base, n, i + 2, v2, top, a)
            _put(geo, out, base, n, i + 3, v3, top, a)
        blk += step


@cuda.jit(device=True)
def _put_int(geo, out, base, n, i, v):
    if i < n:
        out[base + at(geo, 1, i)] = v


def fill_int(geo, out, base, n, k0, k1, c0, c1, rng, low, lowp, wide):
    """Integers uniform on [low, low + rng) (``random_``, ``randint``) into ``out``."""
    per = 2 if wide else 4
    nblk = (n + per - 1) // per
    blk = cuda.grid(1)
    step = cuda.gridsize(1)
    while blk < nblk:
        v0, v1, v2, v3 = integers(np.uint64(blk), k0, k1, c0, c1, rng, low, lowp, wide)
        i = blk * per
        _put_int(geo, out, base, n, i, v0)
        _put_int(geo, out, base, n, i + 1, v1)
        if not wide:
            _put_int(geo, out, base, n, i + 2, v2)
            _put_int(geo, out, base, n, i + 3, v3)
        blk += step


@cuda.jit(device=True)
def _put_hit(geo, out, base, n, i, u, p, pbase):
    if i < n:
        out[base + at(geo, 1, i)] = 1 if u < p[pbase + at(geo, 2, i)] else 0


def fill_bernoulli(geo, out, base, n, p, pbase, k0, k1, c0, c1, wide):
    """out[i] = u[i] < p[i], the probabilities ``p`` at geo row 2 (broadcast: stride 0)."""
    per = 2 if wide else 4
    nblk = (n + per - 1) // per
    blk = cuda.grid(1)
    step = cuda.gridsize(1)
    while blk < nblk:
        u0, u1, u2, u3 = uniforms(np.uint64(blk), k0, k1, c0, c1, wide)
        i = blk * per
        _put_hit(geo, out, base, n, i, u0, p, pbase)
        _put_hit(geo, out, base, n, i + 1, u1, p, pbase)
        if not wide:
            _put_hit(geo, out, base, n, i + 2, u2, p, pbase)
            _put_hit(geo, out, base, n, i + 3, u3, p, pbase)
        blk += step


def outside(geo, x, base, n, lo, hi, flag):
    """flag[0] = 1 if an element of ``x`` is not in [lo, hi] (nan is not)."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        v = x[base + at(geo, 1, i)]
        if not (v >= lo and v <= hi):
            flag[0] = 1
        i += step


KERNELS = {"fill_float": fill_float, "fill_int": fill_int, "fill_bernoulli": fill_bernoulli,
           "outside": outside}
_jitted: dict = {}


def _launch(name: str, n: int, per: int, *args) -> None:
    """Kernel ``name`` over ``n`` elements (``per`` to a thread's step) at this module's
    ``THREADS`` and ``MAX_BLOCKS`` (the values do not depend on them)."""
    k = _jitted.get(name)
    if k is None:
        k = _jitted[name] = target.jit(KERNELS[name])
    work = -(-n // per)
    blocks = max(1, min(MAX_BLOCKS, -(-work // THREADS)))
    k[blocks, THREADS](*args)


def _collapse(shape: tuple, rows: list) -> tuple:
    """(shape, rows) with size-1 dims dropped and dims merged where every row's strides are
    row-major across them: the same logical order, a cheaper decode (one dim when dense)."""
    dims: list = []
    for d, size in enumerate(shape):
        if size == 1:
            continue
        st = [r[d] for r in rows]
        if dims and all(ps == s * size for ps, s in zip(dims[-1][1], st)):
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    if not dims:
        return (1,), [[0] for _ in rows]
    return tuple(n for n, _ in dims), [[s[k] for _, s in dims] for k in range(len(rows))]


def _geometry(shape: tuple, rows: list):
    shape, rows = _collapse(tuple(shape), [list(r) for r in rows])
    return _pw._geometry(shape, rows)


# -- the stream ---------------------------------------------------------------------------------

def _device_index(dev) -> int:
    return target.current_device_index() if dev.index is None else dev.index


def stream(name: str, gen, dev) -> tuple:
    """(k0, k1, c0, c1) of one call of op ``name`` with generator ``gen`` (see the docstring)."""
    if gen is _random.default_generator:
        seed, offset = _cuda_random.philox_state(_device_index(dev), 4)
    elif gen.device.type == "cuda":
        seed, offset = gen.philox_take(4)
    else:
        raise RuntimeError(_CPU_GENERATOR)
    DRAWS[name] += 1
    return (np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32),
            np.uint64(offset & 0xFFFFFFFF), np.uint64(offset >> 32))


def _check_generator(gen) -> None:
    if gen is not _random.default_generator and gen.device.type != "cuda":
        raise RuntimeError(_CPU_GENERATOR)


# -- drawing into a CUDA tensor ------------------------------------------------------------------

def draw_float(name: str, t: Tensor, gen, dist: int, a: float, b: float) -> None:
    """``dist`` into every element of ``t`` (a native dtype), in place."""
    o = t._a
    n = o.size
    if not n:
        return
    wide = o.dtype != np.float32
    top = math.nan
    if dist == UNIFORM:  # ``to`` as the result's dtype rounds it
        top = float(o.dtype.type(b))
    geo = _geometry(o.shape, [o.element_strides()])
    key = stream(name, gen, t.device)
    _launch("fill_float", n, 2 if wide else 4, geo, o.buf, o.offset, n, *key, int(dist),
            float(a), float(b), top, wide)


def draw_int(name: str, t: Tensor, gen, low: int, rng: int) -> None:
    """Integers on [low, low + rng) into every element of ``t`` (rng 0: all of uint64)."""
    o = t._a
    n = o.size
    if not n:
        return
    wide = rng == 0 or (rng >= 1 << 32 and t.dtype.name in _WIDE_INTS)
    lowp = low + (1 << 63) if low < 0 else 0
    geo = _geometry(o.shape, [o.element_strides()])
    key = stream(name, gen, t.device)
    _launch("fill_int", n, 2 if wide else 4, geo, o.buf, o.offset, n, *key, np.uint64(rng),
            int(low), int(lowp), wide)


def _all_in(x: Tensor, lo: float, hi: float) -> bool:
    """Whether every element of CUDA tensor ``x`` is in [lo, hi] (one flag read back)."""
    a = x._a
    if not a.size:
        return True
    flag = target.to_device(np.zeros(1, np.int32))
    geo = _geometry(a.shape, [a.element_strides()])
    _launch("outside", a.size, 1, geo, a.buf, a.offset, a.size, float(lo), float(hi), flag)
    return not flag.copy_to_host()[0]


def draw_bernoulli(name: str, t: Tensor, p: Tensor, gen) -> None:
    """t[i] = u[i] < p[i], ``p`` (a CUDA float32/float64 tensor) broadcast to ``t``."""
    if not _all_in(p, 0.0, 1.0):
        raise RuntimeError(_cpu._P_RANGE)
    o = t._a
    n = o.size
    if not n:
        return
    wide = p.dtype.name == "float64"
    shape = tuple(o.shape)
    geo = _geometry(shape, [o.element_strides(), bcast_elem_strides(p._a, shape)])
    key = stream(name, gen, t.device)
    _launch("fill_bernoulli", n, 2 if wide else 4, geo, o.buf, o.offset, n, p._a.buf,
            p._a.offset, *key, wide)


# -- the op kernels ---------------------------------------------------------------------------------

_HOST: dict = {}


def _host(name: str):
    h = _HOST.get(name)
    if h is None:
        h = _HOST[name] = eager.host_kernel(registry.REGISTRY[name])
    return h


def _cuda_native(*tensors) -> bool:
    """Every tensor a CUDA one of a dtype the device kernels take."""
    return all(x is None or (x._a.__class__ is eager._CUDA and x.dtype.name in _NATIVE)
               for x in tensors)


def _float_sampler(name: str):
    def run(plan: Plan, x: Tensor) -> Tensor:
        kw = plan.kw
        gen = kw["generator"]
        _check_generator(gen)
        if not _cuda_native(x) or (name != "geometric_" and x.dtype.name not in _FLOAT):
            return _host(name)(plan, x)
        draw_float(name, x, gen, kw["dist"], kw["a"], kw["b"])
        return x

    return run


def _float_factory(name: str):
    def run(plan: Plan) -> Tensor:
        kw = plan.kw
        gen = kw["generator"]
        _check_generator(gen)
        if plan.out.dtype.name not in _FLOAT:
            return _host(name)(plan)
        t = eager.empty_cuda(plan)
        draw_float(name, t, gen, kw["dist"], kw["a"], kw["b"])
        return t

    return run


def random_cuda(plan: Plan, x: Tensor) -> Tensor:
    kw = plan.kw
    _check_generator(kw["generator"])
    if not _cuda_native(x):
        return _host("random_")(plan, x)
    draw_int("random_", x, kw["generator"], kw["low"], kw["rng"])
    return x


def randint_cuda(plan: Plan) -> Tensor:
    kw = plan.kw
    _check_generator(kw["generator"])
    if plan.out.dtype.name not in _NATIVE:
        return _host("randint")(plan)
    t = eager.empty_cuda(plan)
    draw_int("randint", t, kw["generator"], kw["low"], kw["rng"])
    return t


def _probabilities(p: Tensor | None) -> bool:
    return p is None or (p._a.__class__ is eager._CUDA and p.dtype.name in _FLOAT)


def bernoulli_inplace_cuda(plan: Plan, x: Tensor, p_t=None) -> Tensor:
    kw = plan.kw
    gen = kw["generator"]
    _check_generator(gen)
    if not _cuda_native(x) or not _probabilities(p_t):
        return _host("bernoulli_")(plan, x, p_t)
    if p_t is not None:
        draw_bernoulli("bernoulli_", x, p_t, gen)
    else:
        draw_float("bernoulli_", x, gen, BERNOULLI, kw["p"], 0.0)
    return x


def bernoulli_cuda(plan: Plan, x: Tensor) -> Tensor:
    kw = plan.kw
    gen = kw["generator"]
    _check_generator(gen)
    scalar = kw["p"] is not None
    if plan.out.dtype.name not in _NATIVE or not (scalar or _probabilities(x)):
        return _host("bernoulli")(plan, x)
    t = eager.empty_cuda(plan)
    if scalar:
        draw_float("bernoulli", t, gen, BERNOULLI, kw["p"], 0.0)
    else:
        draw_bernoulli("bernoulli", t, x, gen)
    return t


def normal_tensor_cuda(plan: Plan, mean_t, std_t) -> Tensor:
    """mean + std * z, z drawn on the device, the product and sum by the device's pointwise
    kernels in the result's dtype (as the CPU kernel computes them)."""
    kw = plan.kw
    gen = kw["generator"]
    _check_generator(gen)
    d = plan.out.dtype
    if d.name not in _FLOAT or not _cuda_native(mean_t, std_t):
        return _host("normal")(plan, mean_t, std_t)
    if std_t is not None and not _all_in(std_t, 0.0, math.inf):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = eager.empty_cuda(plan)
    draw_float("normal", z, gen, NORMAL, 0.0, 1.0)
    shape = tuple(z._a.shape)
    std = std_t if std_t is not None else kw["std"]
    mean = mean_t if mean_t is not None else kw["mean"]
    if z._a.size:
        c = "float32" if d.name == "float16" else d.name  # (float16 computed in float32)
        eager.launch(registry.REGISTRY["mul"], c, d.name, shape, z._a, (z, std))
        eager.launch(registry.REGISTRY["add"], c, d.name, shape, z._a, (z, mean))
    return z


for _name in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_", "geometric_"):
    registry.REGISTRY[_name].kernels["cuda"] = _float_sampler(_name)
for _name in ("rand", "randn"):
    registry.REGISTRY[_name].kernels["cuda"] = _float_factory(_name)
registry.REGISTRY["random_"].kernels["cuda"] = random_cuda
registry.REGISTRY["randint"].kernels["cuda"] = randint_cuda
registry.REGISTRY["bernoulli_"].kernels["cuda"] = bernoulli_inplace_cuda
registry.REGISTRY["bernoulli"].kernels["cuda"] = bernoulli_cuda
registry.REGISTRY["normal"].kernels["cuda"] = normal_tensor_cuda
