"""The CUDA kernels of multinomial, randperm, poisson, binomial, _standard_gamma and
_sample_dirichlet, drawn from the Philox stream of ``philox.py`` (its docstring: one key
``(k0, k1)`` and call offset ``c`` per call from ``philox.stream``, block ``b`` the Philox
output for the counter ``(b mod 2**32, b >> 32, c mod 2**32, c >> 32)``). Each value depends
on the key, ``c`` and its index only, not on the launch geometry; not torch's numbers, the
same distributions.

- multinomial: element ``e`` takes a 53-bit uniform from words ``2 (e % 2), 2 (e % 2) + 1`` of
  block ``e // 2`` (``per`` 2); errors are the CPU's, raised before anything is drawn.
  With replacement (and more than one sample) the rows are checked (the CPU's error codes,
  the first bad row's) and their normalised running sums written (float64 for float64 rows,
  float32 for the others, as the CPU's), every sum from the last positive category on set to
  1, in chunks of ``CHUNK`` entries, a thread each, then a pass over each row's chunk totals
  (``_cdf_sources``); sample ``e`` of the (rows, k) result takes ``u = 1 - u53`` in (0, 1]
  and a binary search for the first sum ``>= u``: a zero-probability category repeats its
  predecessor's sum exactly, so it is never found. Without replacement (or one sample: the CPU's
  choice too) every entry is checked at once (an entry < 0, inf or nan, then a row of
  zeros), element ``e`` of the (rows, n) probabilities gets the key ``p / q`` in float64,
  ``q = -log(u53 + 2**-54)`` (Exp(1), never 0 or inf), and the result is the ``k`` largest
  keys of each row, largest first, ties to the smaller index (``rows.arg_reduce`` for one
  sample, ``sort.sorted_rows`` for more): the CPU's algorithm. Zero-probability categories
  come after every positive one.
- randperm(n): index ``i`` gets the high 63 bits of its word pair (``per`` 2) as its key; the
  device merge sort of ``sort.py`` orders (key, index), a strict order, so the result is a
  permutation of 0..n-1 (ties, 2**-63 apart, keep index order).
- poisson, binomial, _standard_gamma: rejection samplers in float64, an element of logical
  index ``i`` (of ``n``) taking block ``j n + i`` for its attempt ``j`` (a counter per
  attempt, whatever the attempts of other elements). The algorithms are the CPU kernels'
  (``cpu/random_dists.py``, torch's): Marsaglia-Tsang for gamma (an attempt: a normal by
  Box-Muller from a 53-bit radius uniform and a 32-bit angle, and a 32-bit acceptance
  uniform in (0, 1]; alpha < 1 boosted by ``(1 - u53) ** (1 / alpha)`` of block 0, the
  attempts then from block 1), PTRS for Poisson rates >= 10 and products of uniforms below
  (two a block), BTRS for binomials with ``n p >= 10`` and sums of geometric waiting times
  below (two a block, ``u53 + 2**-54`` so that no log is of 0). Results clamp and
  special-case as the CPU's (gamma at least the dtype's smallest normal; a negative or nan
  Poisson rate raises torch's error).

- _standard_gamma_grad and _dirichlet_grad (the reparameterised gradients of Gamma, Beta and
  Dirichlet samples): the CPU's function per element, in float64.
- _sample_dirichlet: _standard_gamma's float64 draws (at least the smallest normal double),
  then the CPU kernel's normalisation over the last dim and clamp, by the device's reduction
  and pointwise kernels.

bfloat16 operands and results take the host path (``eager.host_kernel``, counted in
``eager.FALLBACKS``). ``philox.DRAWS`` counts the calls drawn on the device.
"""
# ruff: noqa: FURB136, PLR1730, PLR0124  (builtin min/max of two integers do not compile for
# the CUDA target; x != x is the nan test)

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from ...shape import bcast_elem_strides
from ...tensor import Tensor
from .. import registry
from ..cpu import random as _cpu
from ..cpu import random_dists as _dists
from ..jit import njit
from ..plan import Out, Plan
from . import eager, philox, rows, sort, target
from .target import cuda

THREADS = eager.THREADS
MAX_BLOCKS = eager.MAX_BLOCKS
CHUNK = 256  # multinomial's running sums: entries a thread sums in turn (not the geometry's)

_S32 = np.uint64(32)
_ONE = np.uint64(1)
_TWO_PI = 2.0 * math.pi
_HALF_ULP = 5.551115123125783e-17  # 2**-54: u53 + it is in (0, 1)
_U32 = 2.3283064365386963e-10  # 2**-32
_block, _u53 = philox._block, philox._u53
_stirling_tail = _dists._stirling_tail

_DEVICE_FLOAT = frozenset({"float16", "float32", "float64"})
_FINITE_MAX = 1.7976931348623157e308
_NONFINITE = "probability tensor contains either `inf`, `nan` or element < 0"
_ZERO_SUM = _cpu._MULTINOMIAL_ERRORS[2]


# -- per-element rejection samplers (njit: compiled into the kernels, and for the simulator) ---

@njit(cache=True, nogil=True, inline="always")
def _attempt(i, j, n, k0, k1, c0, c1):
    """The four words of element ``i``'s (of ``n``) attempt ``j``: block ``j n + i``."""
    return _block(np.uint64(j) * np.uint64(n) + np.uint64(i), k0, k1, c0, c1)


@njit(cache=True, nogil=True, inline="always")
def _pair(i, j, n, k0, k1, c0, c1):
    """Attempt ``j``'s two 53-bit uniforms on [0, 1)."""
    x0, x1, x2, x3 = _attempt(i, j, n, k0, k1, c0, c1)
    return _u53(x0, x1), _u53(x2, x3)


@njit(cache=True, nogil=True)
def gamma_one(alpha, i, n, k0, k1, c0, c1):
    """A Gamma(alpha, 1) draw (Marsaglia-Tsang); alpha <= 0 and nan give 0."""
    if not alpha > 0.0:
        return 0.0
    j = 0
    scale = 1.0
    if alpha < 1.0:
        u, _ = _pair(i, 0, n, k0, k1, c0, c1)
        scale = (1.0 - u) ** (1.0 / alpha)
        j = 1
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x0, x1, x2, x3 = _attempt(i, j, n, k0, k1, c0, c1)
        j += 1
        x = math.sqrt(-2.0 * math.log1p(-_u53(x0, x1))) * math.cos(_TWO_PI * (np.float64(x2) * _U32))
        y = 1.0 + c * x
        if y <= 0.0:
            continue
        v = y * y * y
        u = 1.0 - np.float64(x3) * _U32
        xx = x * x
        if u < 1.0 - 0.0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


@njit(cache=True, nogil=True)
def poisson_one(lam, i, n, k0, k1, c0, c1):
    """A Poisson(lam) draw: PTRS for lam >= 10, else the product of uniforms until it falls
    to exp(-lam); lam = inf gives int64's minimum, as the CPU's."""
    if lam >= 10.0:
        if lam == math.inf:
            return -9.223372036854775808e18
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2.0)
        j = 0
        while True:
            u, v = _pair(i, j, n, k0, k1, c0, c1)
            j += 1
            u -= 0.5
            us = 0.5 - abs(u)
            k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0.0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0.0:
        return 0.0
    enlam = math.exp(-lam)
    x = 0.0
    prod = 1.0
    j = 0
    while True:
        u0, u1 = _pair(i, j, n, k0, k1, c0, c1)
        j += 1
        prod *= u0
        if prod <= enlam:
            return x
        x += 1.0
        prod *= u1
        if prod <= enlam:
            return x
        x += 1.0


@njit(cache=True, nogil=True)
def _binomial_inversion(count, prob, i, n, k0, k1, c0, c1):
    """Successes before the geometric waiting times pass ``count`` (small n p)."""
    geom_sum = 0.0
    num = 0.0
    logprob = math.log1p(-prob)
    j = 0
    while True:
        u0, u1 = _pair(i, j, n, k0, k1, c0, c1)
        j += 1
        geom_sum += math.ceil(math.log(u0 + _HALF_ULP) / logprob)
        if geom_sum > count:
            return num
        num += 1.0
        geom_sum += math.ceil(math.log(u1 + _HALF_ULP) / logprob)
        if geom_sum > count:
            return num
        num += 1.0


@njit(cache=True, nogil=True)
def _btrs(count, prob, i, n, k0, k1, c0, c1):
    """Hoermann's BTRS transformed rejection (n p >= 10, p <= 1/2)."""
    stddev = math.sqrt(count * prob * (1.0 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1.0 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1.0) * prob)
    j = 0
    while True:
        u, v = _pair(i, j, n, k0, k1, c0, c1)
        j += 1
        u -= 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0.0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1.0) / (r * (count - m + 1.0)))
                 + (count + 1.0) * math.log((count - m + 1.0) / (count - k + 1.0))
                 + (k + 0.5) * math.log(r * (count - k + 1.0) / (k + 1.0))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


@njit(cache=True, nogil=True)
def binomial_one(count, prob, i, n, k0, k1, c0, c1):
    """A Binomial(count, prob) draw; count <= 0 or prob <= 0 give 0, prob >= 1 gives count,
    a nan parameter gives nan (the CPU's cases)."""
    if count != count:
        return math.nan
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if count * prob >= 10.0:
            return _btrs(count, prob, i, n, k0, k1, c0, c1)
        return _binomial_inversion(count, prob, i, n, k0, k1, c0, c1)
    if prob > 0.5:
        q = 1.0 - prob
        if count * q >= 10.0:
            return count - _btrs(count, q, i, n, k0, k1, c0, c1)
        return count - _binomial_inversion(count, q, i, n, k0, k1, c0, c1)
    return math.nan


# -- kernels ----------------------------------------------------------------------------------
# ``geo`` rows (philox's): the shape, the result's element strides, then the operands'.

def gamma_fill(geo, out, obase, alpha, abase, n, k0, k1, c0, c1, tiny):
    i = cuda.grid(1)
    while i < n:
        s = gamma_one(np.float64(alpha[abase + philox.at(geo, 2, i)]), i, n, k0, k1, c0, c1)
        out[obase + philox.at(geo, 1, i)] = s if s >= tiny else tiny  # nan gives tiny
        i += cuda.gridsize(1)


def poisson_fill(geo, out, obase, rate, rbase, n, k0, k1, c0, c1):
    i = cuda.grid(1)
    while i < n:
        lam = np.float64(rate[rbase + philox.at(geo, 2, i)])
        out[obase + philox.at(geo, 1, i)] = poisson_one(lam, i, n, k0, k1, c0, c1)
        i += cuda.gridsize(1)


def binomial_fill(geo, out, obase, count, cbase, prob, pbase, n, k0, k1, c0, c1):
    i = cuda.grid(1)
    while i < n:
        cnt = np.float64(count[cbase + philox.at(geo, 2, i)])
        p = np.float64(prob[pbase + philox.at(geo, 3, i)])
        out[obase + philox.at(geo, 1, i)] = binomial_one(cnt, p, i, n, k0, k1, c0, c1)
        i += cuda.gridsize(1)


def gamma_grad_fill(geo, out, obase, alpha, abase, x, xbase, n):
    """``_standard_gamma_grad``: the CPU's per-element function of (alpha, sample)."""
    i = cuda.grid(1)
    while i < n:
        a = np.float64(alpha[abase + philox.at(geo, 2, i)])
        s = np.float64(x[xbase + philox.at(geo, 3, i)])
        out[obase + philox.at(geo, 1, i)] = _dists.standard_gamma_grad_one(a, s)
        i += cuda.gridsize(1)


_DIRICHLET_C = _dists._DIRICHLET_C


@njit(cache=True, nogil=True)
def _dirichlet_grad(x, alpha, total):
    """The CPU's function with its coefficient table a global constant (the device's constant
    memory; the simulator's kernels call this on the host)."""
    return _dists.dirichlet_grad_one(x, alpha, total, _DIRICHLET_C)


def dirichlet_grad_fill(geo, out, obase, x, xbase, alpha, abase, total, tbase, n):
    """``_dirichlet_grad``: the CPU's per-element function of (x, alpha, total)."""
    i = cuda.grid(1)
    while i < n:
        v = np.float64(x[xbase + philox.at(geo, 2, i)])
        a = np.float64(alpha[abase + philox.at(geo, 3, i)])
        t = np.float64(total[tbase + philox.at(geo, 4, i)])
        out[obase + philox.at(geo, 1, i)] = _dirichlet_grad(v, a, t)
        i += cuda.gridsize(1)


def _cdf_sources(wide: bool) -> dict:
    """The running sums of rows x n probabilities (float64 if ``wide``, else float32) in
    chunks of ``chunk`` entries (an argument: a fixed length, not the launch's), with the
    CPU's checks: a code per row (0; 1 an entry < 0 or nan; 3 an inf; 2 a sum not > 0: at
    the first bad entry) as its serial loop gives.
    - ``cdf_chunks``, a thread per chunk: its local running sums into ``cum``, its total, its
      code and its last positive entry (-1 if none);
    - ``cdf_rows``, a thread per row: the chunks' offsets (running sums of their totals), the
      row's code, sum and last positive entry;
    - ``cdf_finish``, per entry: (offset + local sum) / row sum, 1 from the last positive
      entry on. A zero entry repeats its predecessor's sum exactly (across chunks too: the
      offset is the same rounded sum), so the search never lands on it."""
    acc = np.float64 if wide else np.float32

    def cdf_chunks(x, sR, sC, n, nchunk, chunk, total, cum, ctot, ccode, clast):
        t = cuda.grid(1)
        while t < total:
            r = t // nchunk
            lo = (t - r * nchunk) * chunk
            hi = lo + chunk if lo + chunk < n else n
            s = acc(0.0)
            code = 0
            last = -1
            for j in range(lo, hi):
                v = x[r * sR + j * sC]
                if not v >= 0:
                    code = 1
                    break
                if v == math.inf:
                    code = 3
                    break
                s += acc(v)
                cum[r * n + j] = s
                if v > 0:
                    last = j
            ctot[t] = s
            ccode[t] = code
            clast[t] = last
            t += cuda.gridsize(1)

    def cdf_rows(nrows, nchunk, ctot, ccode, clast, coff, codes, rsum, rlast):
        r = cuda.grid(1)
        while r < nrows:
            s = acc(0.0)
            code = 0
            last = -1
            for c in range(r * nchunk, (r + 1) * nchunk):
                if ccode[c] != 0:
                    code = ccode[c]
                    break
                coff[c] = s
                s += ctot[c]
                if clast[c] >= 0:
                    last = clast[c]
            if code == 0 and not s > 0:
                code = 2
            codes[r] = code
            rsum[r] = s
            rlast[r] = last
            r += cuda.gridsize(1)

    def cdf_finish(n, nchunk, chunk, total, cum, coff, rsum, rlast):
        e = cuda.grid(1)
        while e < total:
            r = e // n
            j = e - r * n
            if j < rlast[r]:
                cum[e] = (coff[r * nchunk + j // chunk] + cum[e]) / rsum[r]
            else:
                cum[e] = acc(1.0)
            e += cuda.gridsize(1)

    return {"cdf_chunks": cdf_chunks, "cdf_rows": cdf_rows, "cdf_finish": cdf_finish}


def check_rows(x, sR, sC, n, total, rowpos, flag):
    """flag[0] = 1 if an entry is negative, inf or nan; rowpos[r] = 1 if row r has a positive
    entry (its sum is > 0). Every element checked at once (the rows may be long)."""
    e = cuda.grid(1)
    while e < total:
        r = e // n
        v = np.float64(x[r * sR + (e - r * n) * sC])  # (a float16 compared in float64)
        if not (v >= 0.0 and v <= _FINITE_MAX):
            flag[0] = 1
        elif v > 0:
            rowpos[r] = 1
        e += cuda.gridsize(1)


def multinomial_draw(cum, n, k, total, out, k0, k1, c0, c1):
    """Sample ``e`` of row ``e // k``: the first normalised sum >= 1 - u53 (block e // 2)."""
    b = cuda.grid(1)
    nblk = (total + 1) // 2
    while b < nblk:
        u0, u1, _, _ = philox.uniforms(np.uint64(b), k0, k1, c0, c1, True)
        for h in range(2):
            e = 2 * b + h
            if e < total:
                u = 1.0 - (u0 if h == 0 else u1)
                base = (e // k) * n
                lo = 0
                hi = n
                while lo < hi:
                    mid = (lo + hi) // 2
                    if cum[base + mid] < u:
                        lo = mid + 1
                    else:
                        hi = mid
                out[e] = lo
        b += cuda.gridsize(1)


def exponential_keys(x, sR, sC, n, total, keys, k0, k1, c0, c1):
    """keys[e] = p[e] / q[e] (float64), q = -log(u53 + 2**-54) ~ Exp(1) (block e // 2)."""
    b = cuda.grid(1)
    nblk = (total + 1) // 2
    while b < nblk:
        u0, u1, _, _ = philox.uniforms(np.uint64(b), k0, k1, c0, c1, True)
        for h in range(2):
            e = 2 * b + h
            if e < total:
                r = e // n
                j = e - r * n
                q = -math.log((u0 if h == 0 else u1) + _HALF_ULP)
                keys[e] = np.float64(x[r * sR + j * sC]) / q
        b += cuda.gridsize(1)


def randperm_keys(n, ku, ki, k0, k1, c0, c1):
    """ku[i] = the high 63 bits of index i's word pair (block i // 2), ki[i] = i."""
    b = cuda.grid(1)
    nblk = (n + 1) // 2
    while b < nblk:
        x0, x1, x2, x3 = _block(np.uint64(b), k0, k1, c0, c1)
        i = 2 * b
        ku[i] = np.int64(((x0 << _S32) | x1) >> _ONE)
        ki[i] = i
        if i + 1 < n:
            ku[i + 1] = np.int64(((x2 << _S32) | x3) >> _ONE)
            ki[i + 1] = i + 1
        b += cuda.gridsize(1)


def store(src, out, n):
    """out[i] = src[i] in out's dtype (randperm's indices)."""
    i = cuda.grid(1)
    while i < n:
        out[i] = src[i]
        i += cuda.gridsize(1)


KERNELS = {"gamma_fill": gamma_fill, "gamma_grad_fill": gamma_grad_fill,
           "dirichlet_grad_fill": dirichlet_grad_fill,
           "poisson_fill": poisson_fill,
           "binomial_fill": binomial_fill, "check_rows": check_rows,
           "multinomial_draw": multinomial_draw, "exponential_keys": exponential_keys,
           "randperm_keys": randperm_keys, "store": store}
for _wide, _tag in ((False, "f32"), (True, "f64")):
    KERNELS.update({f"{k}_{_tag}": v for k, v in _cdf_sources(_wide).items()})
_jitted: dict = {}


def _grid(n: int) -> int:
    return max(1, min(MAX_BLOCKS, -(-n // THREADS)))


def _launch(name: str, work: int, *args) -> None:
    """Kernel ``name`` over ``work`` items at this module's ``THREADS`` and ``MAX_BLOCKS`` (the
    values do not depend on them)."""
    k = _jitted.get(name)
    if k is None:
        k = _jitted[name] = target.jit(KERNELS[name])
    k[_grid(work), THREADS](*args)


# -- the op kernels ---------------------------------------------------------------------------

def _device(*tensors) -> bool:
    """Every tensor a CUDA one of a dtype these kernels take (not bfloat16 nor complex)."""
    return all(x._a.__class__ is eager._CUDA and x.dtype.name in _DEVICE_FLOAT for x in tensors)


def _rowwise(x: Tensor) -> tuple:
    """(buffer from x's first element, rows, n, row stride, column stride) of a 1-d or 2-d x."""
    buf, st = rows.data(x)
    if x._a.ndim == 1:
        return buf, 1, x._a.shape[0], 0, st[0]
    return buf, x._a.shape[0], x._a.shape[1], st[0], st[1]


def _cdf(x: Tensor, wide: bool):
    """The normalised running sums of every row (a flat device array), or the CPU's error of
    the first bad row."""
    buf, nrows, n, sR, sC = _rowwise(x)
    dev = x.device
    d = _dt.float64 if wide else _dt.float32
    tag = "_f64" if wide else "_f32"
    nchunk = -(-n // CHUNK) if n else 1
    nc = nrows * nchunk
    cum = rows.flat(rows.new((nrows * n,), d, dev))
    ctot, coff = (rows.flat(rows.new((nc,), d, dev)) for _ in range(2))
    ccode, clast = (rows.flat(rows.new((nc,), _dt.int64, dev)) for _ in range(2))
    rsum = rows.flat(rows.new((nrows,), d, dev))
    rlast = rows.flat(rows.new((nrows,), _dt.int64, dev))
    codes = target.to_device(np.zeros(nrows, np.int64))
    _launch("cdf_chunks" + tag, nc, buf, sR, sC, n, nchunk, CHUNK, nc, cum, ctot, ccode, clast)
    _launch("cdf_rows" + tag, nrows, nrows, nchunk, ctot, ccode, clast, coff, codes, rsum, rlast)
    h = codes.copy_to_host()
    bad = h[h != 0]
    if bad.size:
        raise RuntimeError(_cpu._MULTINOMIAL_ERRORS[int(bad[0])])
    _launch("cdf_finish" + tag, nrows * n, n, nchunk, CHUNK, nrows * n, cum, coff, rsum, rlast)
    return cum


def _check_finite(x: Tensor) -> None:
    """The CPU's errors without replacement: an entry < 0, inf or nan anywhere, then a row
    summing to 0."""
    buf, nrows, n, sR, sC = _rowwise(x)
    rowpos = target.to_device(np.zeros(nrows, np.int32))
    flag = target.to_device(np.zeros(1, np.int32))
    _launch("check_rows", nrows * n, buf, sR, sC, n, nrows * n, rowpos, flag)
    if flag.copy_to_host()[0]:
        raise RuntimeError(_NONFINITE)
    if not rowpos.copy_to_host().all():
        raise RuntimeError(_ZERO_SUM)


def multinomial_cuda(plan: Plan, x: Tensor) -> Tensor:
    kw = plan.kw
    k, replacement, gen = kw["num_samples"], kw["replacement"], kw["generator"]
    philox._check_generator(gen)
    if not _device(x):
        return philox._host("multinomial")(plan, x)
    buf, nrows, n, sR, sC = _rowwise(x)
    shape = tuple(plan.out.shape)
    dev = plan.device
    if not nrows:
        return rows.new(shape, _dt.int64, dev)
    wide = x.dtype.name == "float64"
    if replacement and k > 1:
        cum = _cdf(x, wide)
        res = rows.new(shape, _dt.int64, dev)
        total = nrows * k
        key = philox.stream("multinomial", gen, dev)
        _launch("multinomial_draw", (total + 1) // 2, cum, n, k, total, rows.flat(res), *key)
        return res
    _check_finite(x)
    keys = rows.new((nrows, n), _dt.float64, dev)
    total = nrows * n
    key = philox.stream("multinomial", gen, dev)
    _launch("exponential_keys", (total + 1) // 2, buf, sR, sC, n, total, rows.flat(keys), *key)
    if k == 1:
        _, idx = rows.arg_reduce(keys, (1,), True, (nrows,))
    else:
        _, idx = sort.sorted_rows(keys, 1, True, 0, k)
    return rows.reshaped(idx, shape)


def randperm_cuda(plan: Plan) -> Tensor:
    gen = plan.kw["generator"]
    philox._check_generator(gen)
    d = plan.out.dtype
    if d.name not in eager._NATIVE and d.name != "float16":
        return philox._host("randperm")(plan)
    n = plan.out.shape[0]
    dev = plan.device
    res = rows.new((n,), d, dev)
    if not n:
        return res
    ku, ki, ko, io = (rows.flat(rows.new((n,), _dt.int64, dev)) for _ in range(4))
    key = philox.stream("randperm", gen, dev)
    _launch("randperm_keys", (n + 1) // 2, n, ku, ki, *key)
    merge = sort.kernel("merge")
    w = 1
    while w < n:
        merge[_grid(n), THREADS](ku, ki, ko, io, n, n, w)
        ku, ki, ko, io = ko, io, ku, ki
        w *= 2
    _launch("store", n, ki, rows.flat(res), n)
    return res


def _elementwise(name: str, kernel: str, plan: Plan, operands: tuple, *extra) -> Tensor:
    """Kernel ``kernel`` into a fresh result of the plan, the operands broadcast to it."""
    gen = plan.kw["generator"]
    res = eager.empty_cuda(plan)
    o = res._a
    n = o.size
    if not n:
        return res
    shape = tuple(o.shape)
    geo = philox._geometry(shape, [o.element_strides()]
                           + [bcast_elem_strides(x._a, shape) for x in operands])
    key = philox.stream(name, gen, plan.device)
    args = [a for x in operands for a in (x._a.buf, x._a.offset)]
    _launch(kernel, n, geo, o.buf, o.offset, *args, n, *key, *extra)
    return res


def standard_gamma_cuda(plan: Plan, alpha: Tensor) -> Tensor:
    philox._check_generator(plan.kw["generator"])
    if not _device(alpha) or plan.out.dtype.name not in _DEVICE_FLOAT:
        return philox._host("_standard_gamma")(plan, alpha)
    tiny = float(_dt.np_finfo(plan.out.dtype).tiny)
    return _elementwise("_standard_gamma", "gamma_fill", plan, (alpha,), tiny)


def sample_dirichlet_cuda(plan: Plan, alpha: Tensor) -> Tensor:
    """The CPU kernel's steps on the device: gamma draws in float64 (at least the smallest
    normal double), normalised over the last dim, clamped to [the smallest normal, the float
    below 1] of the result's dtype, then rounded to it."""
    gen = plan.kw["generator"]
    philox._check_generator(gen)
    d = plan.out.dtype
    if not _device(alpha) or d.name not in _DEVICE_FLOAT:
        return philox._host("_sample_dirichlet")(plan, alpha)
    wide = Plan(Out(tuple(plan.out.shape), _dt.float64), plan.kw, plan.device)
    g = _elementwise("_sample_dirichlet", "gamma_fill", wide, (alpha,),
                     float(np.finfo(np.float64).tiny))
    if not g._a.size:
        return g.to(d)
    top = float(np.nextafter(d.np.type(1), d.np.type(0)))
    with eager._Unrecorded():
        total = eager._red("sum", g, g._a.ndim - 1) if g._a.ndim else g
        g = eager._apply("clamp", eager._apply("div", g, total), float(_dt.np_finfo(d).tiny), top)
        return g if d is _dt.float64 else g.to(d)


def _function(op: str, kernel: str, plan: Plan, operands: tuple) -> Tensor:
    """A per-element function of the broadcast ``operands`` (no draws) into a fresh result,
    or the host path where an operand or the result has no device dtype."""
    if not _device(*operands) or plan.out.dtype.name not in _DEVICE_FLOAT:
        return eager.host_kernel(registry.REGISTRY[op])(plan, *operands)
    res = eager.empty_cuda(plan)
    o = res._a
    n = o.size
    if n:
        shape = tuple(o.shape)
        geo = philox._geometry(shape, [o.element_strides()]
                               + [bcast_elem_strides(x._a, shape) for x in operands])
        args = [a for x in operands for a in (x._a.buf, x._a.offset)]
        _launch(kernel, n, geo, o.buf, o.offset, *args, n)
    return res


def standard_gamma_grad_cuda(plan: Plan, alpha: Tensor, x: Tensor) -> Tensor:
    """d sample / d alpha per element, in float64 stored in the result's dtype, as the CPU."""
    return _function("_standard_gamma_grad", "gamma_grad_fill", plan, (alpha, x))


def dirichlet_grad_cuda(plan: Plan, x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The Dirichlet (Beta marginal) reparameterised gradient per element, as the CPU."""
    return _function("_dirichlet_grad", "dirichlet_grad_fill", plan, (x, alpha, total))


def poisson_cuda(plan: Plan, rate: Tensor) -> Tensor:
    philox._check_generator(plan.kw["generator"])
    if not _device(rate) or plan.out.dtype.name not in _DEVICE_FLOAT:
        return philox._host("poisson")(plan, rate)
    if not philox._all_in(rate, 0.0, math.inf):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _elementwise("poisson", "poisson_fill", plan, (rate,))


def binomial_cuda(plan: Plan, count: Tensor, prob: Tensor) -> Tensor:
    philox._check_generator(plan.kw["generator"])
    if not _device(count, prob) or plan.out.dtype.name not in _DEVICE_FLOAT:
        return philox._host("binomial")(plan, count, prob)
    return _elementwise("binomial", "binomial_fill", plan, (count, prob))


registry.REGISTRY["multinomial"].kernels["cuda"] = multinomial_cuda
registry.REGISTRY["randperm"].kernels["cuda"] = randperm_cuda
registry.REGISTRY["_standard_gamma"].kernels["cuda"] = standard_gamma_cuda
registry.REGISTRY["_sample_dirichlet"].kernels["cuda"] = sample_dirichlet_cuda
registry.REGISTRY["_standard_gamma_grad"].kernels["cuda"] = standard_gamma_grad_cuda
registry.REGISTRY["_dirichlet_grad"].kernels["cuda"] = dirichlet_grad_cuda
registry.REGISTRY["poisson"].kernels["cuda"] = poisson_cuda
registry.REGISTRY["binomial"].kernels["cuda"] = binomial_cuda
