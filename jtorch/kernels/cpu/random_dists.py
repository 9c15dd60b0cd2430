"""Samplers of the gamma family, Poisson and binomial draws, and the reparameterised
gradients of gamma and Dirichlet samples (the kernels of ``defs/random_dists.py``).

These samplers are rejection methods: an element takes as many uniforms as its proposals
need. So each element has a Philox stream of its own, under the call's 64-bit key from the
generator (``Generator._take``): its ``j``-th uniform is half of the Philox block for the
128-bit counter ``(element index, j // 2)``. The numbers depend only on the key and the
element index, whatever the thread count, and the loops run in parallel. They are not
torch's numbers (torch draws these from its mt19937 serially); their distributions are the
same, drawn by torch's algorithms (``ATen/native/Distributions.h``): Marsaglia and Tsang's
gamma sampler with the alpha < 1 boost, Hoermann's transformed rejection (PTRS) for Poisson
rates >= 10 and products of uniforms below, BTRS for binomials with ``n p >= 10`` and
inversion (sums of geometrics) below. Everything computes in float64, as torch's CPU kernels
do, and the result is cast to the tensor's dtype.

The gradients are torch's approximations of ``-(d/dalpha cdf(x; alpha)) / pdf(x; alpha)``:
a Taylor series for small ``x``, Rice's saddle-point expansion for large ``alpha`` and a
fitted rational function between (gamma); series near 0 and 1, a saddle-point expansion
when both concentrations are large and a rational correction to an analytic approximation
elsewhere (Beta, and so Dirichlet).
"""
# ruff: noqa: PLR0124  (x != x is the nan test)

from __future__ import annotations

import math

import numba
import numpy as np

from ... import _threads
from ... import dtypes as _dt
from ...tensor import Tensor
from .. import special_math as _sp
from ..jit import njit
from .fill import alloc as _alloc
from .random import _u53, philox

_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_TWO_PI = 2.0 * math.pi
POISSON_NEGATIVE = 1  # error code of a negative (or nan) Poisson rate


# -- one stream per element ------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _uniform(seed, i, j):
    """The ``j``-th uniform on [0, 1) of element ``i``'s stream (both uint64)."""
    b = j >> _ONE
    x0, x1, x2, x3 = philox(i & _LO, i >> _S32, b & _LO, b >> _S32, seed & _LO, seed >> _S32)
    if j & _ONE:
        return _u53(x2, x3)
    return _u53(x0, x1)


@njit(cache=True, nogil=True, inline="always")
def _normal(seed, i, j):
    """A standard normal from draws ``j`` and ``j + 1`` (Box-Muller, one of the pair)."""
    r = math.sqrt(-2.0 * math.log1p(-_uniform(seed, i, j)))
    return r * math.cos(_TWO_PI * _uniform(seed, i, j + _ONE))


# -- gamma -----------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def sample_gamma(alpha, seed, i):
    """A Gamma(alpha, 1) draw (Marsaglia-Tsang; alpha < 1 boosted by a uniform power).
    alpha <= 0 and nan give 0 (torch's kernel then clamps to the smallest normal)."""
    if not alpha > 0.0:
        return 0.0
    j = np.uint64(0)
    scale = 1.0
    if alpha < 1.0:
        scale = (1.0 - _uniform(seed, i, j)) ** (1.0 / alpha)
        j += _ONE
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(seed, i, j)
        j += np.uint64(2)
        y = 1.0 + c * x
        if y <= 0.0:
            continue
        v = y * y * y
        u = 1.0 - _uniform(seed, i, j)
        j += _ONE
        xx = x * x
        if u < 1.0 - 0.0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


@njit(cache=True, nogil=True)
def _gamma_range(alpha, out, seed, tiny, lo, hi):
    for k in range(lo, hi):
        s = sample_gamma(alpha[k], seed, np.uint64(k))
        out[k] = s if s >= tiny else tiny  # noqa: FURB136  (torch's max(min, s): nan gives min)


@njit(cache=True, nogil=True, parallel=True)
def _gamma_par(alpha, out, seed, tiny, chunk):
    n = alpha.size
    for c in numba.prange((n + chunk - 1) // chunk):
        _gamma_range(alpha, out, seed, tiny, c * chunk, min(n, (c + 1) * chunk))


# -- Poisson ---------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def sample_poisson(lam, seed, i):
    """A Poisson(lam) draw: PTRS (Hoermann 1993) for lam >= 10, else the product of uniforms
    until it falls below exp(-lam). lam = inf gives int64's minimum, as torch's cast does."""
    if lam >= 10.0:
        if lam == math.inf:
            return -9.223372036854775808e18
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2.0)
        j = np.uint64(0)
        while True:
            u = _uniform(seed, i, j) - 0.5
            v = _uniform(seed, i, j + _ONE)
            j += np.uint64(2)
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
    j = np.uint64(0)
    while True:
        prod *= _uniform(seed, i, j)
        j += _ONE
        if prod > enlam:
            x += 1.0
        else:
            return x


@njit(cache=True, nogil=True)
def _poisson_range(rate, out, seed, lo, hi):
    """Elements lo..hi-1; returns POISSON_NEGATIVE on a rate that is not >= 0, else 0."""
    for k in range(lo, hi):
        lam = rate[k]
        if not lam >= 0.0:
            return POISSON_NEGATIVE
        out[k] = sample_poisson(lam, seed, np.uint64(k))
    return 0


@njit(cache=True, nogil=True, parallel=True)
def _poisson_par(rate, out, seed, chunk):
    n = rate.size
    nchunk = (n + chunk - 1) // chunk
    err = np.zeros(nchunk, np.int64)
    for c in numba.prange(nchunk):
        err[c] = _poisson_range(rate, out, seed, c * chunk, min(n, (c + 1) * chunk))
    return err.max()


# -- binomial --------------------------------------------------------------------------------

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


@njit(cache=True, nogil=True, inline="always")
def _stirling_tail(k):
    """log(k!) minus its Stirling approximation."""
    if k <= 9.0:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1.0) * (k + 1.0)
    return (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)


@njit(cache=True, nogil=True)
def _binomial_inversion(count, prob, seed, i):
    """Successes before the geometric waiting times pass ``count`` (small n p)."""
    geom_sum = 0.0
    num = 0.0
    logprob = math.log1p(-prob)
    j = np.uint64(0)
    while True:
        # a float ceiling (as ATen's double): a uniform of 0 waits forever (inf) and ends the
        # loop, where math.ceil's int of inf wrapped to -2**63 and the loop never ended
        geom = np.ceil(math.log(_uniform(seed, i, j)) / logprob)
        j += _ONE
        geom_sum += geom
        if geom_sum > count:
            return num
        num += 1.0


@njit(cache=True, nogil=True)
def _btrs(count, prob, seed, i):
    """Hoermann's BTRS transformed rejection (n p >= 10, p <= 1/2)."""
    stddev = math.sqrt(count * prob * (1.0 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1.0 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1.0) * prob)
    j = np.uint64(0)
    while True:
        u = _uniform(seed, i, j) - 0.5
        v = _uniform(seed, i, j + _ONE)
        j += np.uint64(2)
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
def sample_binomial(count, prob, seed, i):
    """A Binomial(count, prob) draw; count <= 0 or prob <= 0 give 0, prob >= 1 gives count,
    a nan parameter gives nan."""
    if count != count:
        return math.nan  # torch loops forever here
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if count * prob >= 10.0:
            return _btrs(count, prob, seed, i)
        return _binomial_inversion(count, prob, seed, i)
    if prob > 0.5:
        q = 1.0 - prob
        if count * q >= 10.0:
            return count - _btrs(count, q, seed, i)
        return count - _binomial_inversion(count, q, seed, i)
    return math.nan


@njit(cache=True, nogil=True)
def _binomial_range(count, prob, out, seed, lo, hi):
    for k in range(lo, hi):
        out[k] = sample_binomial(count[k], prob[k], seed, np.uint64(k))


@njit(cache=True, nogil=True, parallel=True)
def _binomial_par(count, prob, out, seed, chunk):
    n = out.size
    for c in numba.prange((n + chunk - 1) // chunk):
        _binomial_range(count, prob, out, seed, c * chunk, min(n, (c + 1) * chunk))


# -- reparameterised gradients ---------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _digamma(x):
    """torch's digamma_one: +inf at 0 and at the negative integers."""
    if x == 0.0:
        return math.inf
    if x < 0.0:
        if x == math.floor(x):
            return math.inf
        return _sp._digamma_pos(1.0 - x) - math.pi / math.tan(math.pi * x)
    return _sp._digamma_pos(x)


# Rows: the coefficients' constant, linear and quadratic terms in u; columns 0-3 the
# numerator's powers of v, 4-7 the denominator's.
_GAMMA_UV = np.array([[0.16009398, -0.094634809, 0.025146376, -0.0030648343,
                       1.0, 0.32668115, 0.10406089, 0.0014179084],
                      [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
                       0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
                      [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
                       0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


@njit(cache=True, nogil=True)
def standard_gamma_grad_one(alpha, x):
    """d x / d alpha of a Gamma(alpha, 1) sample x at fixed CDF value."""
    if x < 0.8:  # Taylor series of the CDF for small x
        numer = 1.0
        denom = alpha
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1.0
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = x ** alpha
        gamma_pdf = x ** (alpha - 1.0) * math.exp(-x)
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (math.log(x) - _digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
        result = -gamma_cdf_alpha / gamma_pdf
        return 0.0 if result != result else result
    if alpha > 8.0:  # Rice saddle-point expansion for large alpha
        if 0.9 * alpha <= x <= 1.1 * alpha:
            numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha)
            numer_2 = (1440.0 * (alpha * alpha) + 6.0 * x * (53.0 - 120.0 * x)
                       - 65.0 * x * x / alpha + alpha * (107.0 + 3600.0 * x))
            denom = 1244160.0 * (alpha * alpha) * (alpha * alpha)
            return numer_1 * numer_2 / denom
        denom = math.sqrt(8.0 * alpha)
        term2 = denom / (alpha - x)
        term3 = (x - alpha - alpha * math.log(x / alpha)) ** -1.5
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = (math.log(x / alpha) * term23
                 - math.sqrt(2.0 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
        stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha))
        return -stirling * x * term1 / denom
    u = math.log(x / alpha)  # a bivariate rational approximation between
    v = math.log(alpha)
    c = _GAMMA_UV
    p = 0.0
    q = 0.0
    for k in range(3, -1, -1):  # Horner in v, each coefficient quadratic in u
        p = p * v + (c[0, k] + u * (c[1, k] + u * c[2, k]))
        q = q * v + (c[0, k + 4] + u * (c[1, k + 4] + u * c[2, k + 4]))
    return math.exp(p / q)


@njit(cache=True, nogil=True)
def _beta_grad_alpha_small(x, alpha, beta):
    """d x / d alpha of a Beta(alpha, beta) sample near 0 (Taylor series)."""
    factor = _digamma(alpha) - _digamma(alpha + beta) - math.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1.0 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1.0 / denom)
    result = x * (1.0 - x) ** -beta * series
    return 0.0 if result != result else result


@njit(cache=True, nogil=True)
def _beta_grad_beta_small(x, alpha, beta):
    """d x / d beta of a Beta(alpha, beta) sample near 0 (Taylor series)."""
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer = 1.0
    betas = 1.0
    dbetas = 0.0
    series = factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1.0 - x) ** (1.0 - beta) * series
    return 0.0 if result != result else result


@njit(cache=True, nogil=True)
def _beta_grad_alpha_mid(x, alpha, beta):
    """d x / d alpha of a Beta sample when both concentrations are large (saddle point)."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1.0)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # avoid the singularity at the mean
        b2 = beta * beta
        poly = 47.0 * x * b2 * b2 + alpha * (
            (43.0 + 20.0 * (16.0 + 27.0 * beta) * x) * b2 * beta + alpha * (
                3.0 * (59.0 + 180.0 * beta - 90.0 * x) * b2 + alpha * (
                    (453.0 + 1620.0 * beta * (1.0 - x) - 455.0 * x) * beta + alpha * (
                        8.0 * (1.0 - x) * (135.0 * beta - 11.0)))))
        prefactor_num = (1.0 + 12.0 * alpha) * (1.0 + 12.0 * beta) / (total * total)
        prefactor_den = 12960.0 * alpha * alpha * alpha * b2 * (1.0 + 12.0 * total)
        return prefactor_num / (1.0 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2.0 * alpha * beta / total)
    stirling = ((1.0 + 1.0 / (12.0 * alpha) + 1.0 / (288.0 * alpha * alpha))
                * (1.0 + 1.0 / (12.0 * beta) + 1.0 / (288.0 * beta * beta))
                / (1.0 + 1.0 / (12.0 * total) + 1.0 / (288.0 * total * total)))
    term1_num = 2.0 * (alpha * alpha) * (x - 1.0) + alpha * beta * (x - 1.0) - x * (beta * beta)
    axbx = alpha * (x - 1.0) + beta * x
    term1_den = math.sqrt(2.0 * alpha / beta) * total ** 1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8.0 * alpha * beta / total) / (beta * x + alpha * (x - 1.0))
    term4 = (beta * math.log(beta / (total * (1.0 - x)))
             + alpha * math.log(alpha / (total * x))) ** -1.5
    return stirling * prefactor * (term1 + term2 * (term3 + (term4 if x < mean else -term4)))


_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1.0, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


@njit(cache=True, nogil=True)
def dirichlet_grad_one(x, alpha, total, coef):
    """-(d/dalpha cdf(x; alpha, total - alpha)) / pdf(x; ...) / (1 - x): the Beta marginal's
    reparameterised gradient, in the form Dirichlet's backward uses."""
    beta = total - alpha
    boundary = total * x * (1.0 - x)
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(x, alpha, beta)
    if x >= 0.5 and boundary < 0.75:
        return -_beta_grad_beta_small(1.0 - x, beta, alpha)
    if alpha > 6.0 and beta > 6.0:
        return _beta_grad_alpha_mid(x, alpha, beta)
    u = math.log(x)  # a rational correction to an analytic approximation
    a = math.log(alpha) - u
    b = math.log(total) - a
    pu = (1.0, u, u * u)
    pa = (1.0, a, a * a)
    p = 0.0
    q = 0.0
    for i in range(3):
        for k in range(3):
            ua = pu[i] * pa[k]
            p += ua * (coef[0, i, k, 0] + b * (coef[0, i, k, 1] + b * (
                coef[0, i, k, 2] + b * coef[0, i, k, 3])))
            q += ua * (coef[1, i, k, 0] + b * (coef[1, i, k, 1] + b * (
                coef[1, i, k, 2] + b * coef[1, i, k, 3])))
    approx = x * (_digamma(total) - _digamma(alpha)) / beta
    return p / q * approx


@njit(cache=True, nogil=True)
def _gamma_grad_loop(alpha, x, out):
    for k in range(out.size):
        out[k] = standard_gamma_grad_one(alpha[k], x[k])


@njit(cache=True, nogil=True, parallel=True)
def _gamma_grad_par(alpha, x, out):
    for k in numba.prange(out.size):
        out[k] = standard_gamma_grad_one(alpha[k], x[k])


@njit(cache=True, nogil=True)
def _dirichlet_grad_loop(x, alpha, total, out, coef):
    for k in range(out.size):
        out[k] = dirichlet_grad_one(x[k], alpha[k], total[k], coef)


@njit(cache=True, nogil=True, parallel=True)
def _dirichlet_grad_par(x, alpha, total, out, coef):
    for k in numba.prange(out.size):
        out[k] = dirichlet_grad_one(x[k], alpha[k], total[k], coef)


# == op entries: ``kernels["cpu"](plan, *tensors)`` of the OpDefs in ``defs/random_dists`` ===

def _f64(t: Tensor, shape: tuple) -> np.ndarray:
    """``t``'s values broadcast to ``shape``, as a contiguous 1-D float64 array."""
    return np.ascontiguousarray(np.broadcast_to(t._a, shape), np.float64).reshape(-1)


def _chunk(n: int) -> int:
    return max(1, -(-n // (4 * _threads.get_num_threads())))


def _deliver(plan, buf: np.ndarray) -> Tensor:
    """A fresh tensor of the plan's result holding the float64 values ``buf``."""
    res = _alloc(plan.out)
    res._a[...] = buf.reshape(plan.out.shape)
    return res


def standard_gamma_cpu(plan, alpha: Tensor) -> Tensor:
    shape = plan.out.shape
    a = _f64(alpha, shape)
    out = np.empty(a.size, np.float64)
    if a.size:
        seed, _ = plan.kw["generator"]._take(0)
        args = (a, out, np.uint64(seed), float(_dt.np_finfo(plan.out.dtype).tiny))
        if _threads.use_parallel(a.size):
            _gamma_par(*args, _chunk(a.size))
        else:
            _gamma_range(*args, 0, a.size)
    return _deliver(plan, out)


def sample_dirichlet_cpu(plan, alpha: Tensor) -> Tensor:
    """Gamma draws in float64 (at least the smallest normal double), normalised over the last
    dim and clamped to [smallest normal, the float below 1] of the result's dtype."""
    shape = plan.out.shape
    a = _f64(alpha, shape)
    g = np.empty(a.size, np.float64)
    if a.size:
        seed, _ = plan.kw["generator"]._take(0)
        args = (a, g, np.uint64(seed), float(np.finfo(np.float64).tiny))
        if _threads.use_parallel(a.size):
            _gamma_par(*args, _chunk(a.size))
        else:
            _gamma_range(*args, 0, a.size)
    g = g.reshape(shape)
    if len(shape):
        g = g / g.sum(-1, keepdims=True)
    else:
        g = g / g
    info = _dt.np_finfo(plan.out.dtype)
    top = float(np.nextafter(plan.out.dtype.np.type(1), plan.out.dtype.np.type(0)))
    return _deliver(plan, np.clip(g, float(info.tiny), top))


def poisson_cpu(plan, rate: Tensor) -> Tensor:
    shape = plan.out.shape
    r = _f64(rate, shape)
    out = np.empty(r.size, np.float64)
    if r.size:
        seed, _ = plan.kw["generator"]._take(0)
        if _threads.use_parallel(r.size):
            err = _poisson_par(r, out, np.uint64(seed), _chunk(r.size))
        else:
            err = _poisson_range(r, out, np.uint64(seed), 0, r.size)
        if err == POISSON_NEGATIVE:
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _deliver(plan, out)


def binomial_cpu(plan, count: Tensor, prob: Tensor) -> Tensor:
    shape = plan.out.shape
    n, p = _f64(count, shape), _f64(prob, shape)
    out = np.empty(n.size, np.float64)
    if n.size:
        seed, _ = plan.kw["generator"]._take(0)
        if _threads.use_parallel(n.size):
            _binomial_par(n, p, out, np.uint64(seed), _chunk(n.size))
        else:
            _binomial_range(n, p, out, np.uint64(seed), 0, n.size)
    return _deliver(plan, out)


def standard_gamma_grad_cpu(plan, alpha: Tensor, x: Tensor) -> Tensor:
    shape = plan.out.shape
    a, s = _f64(alpha, shape), _f64(x, shape)
    out = np.empty(a.size, np.float64)
    (_gamma_grad_par if _threads.use_parallel(a.size) else _gamma_grad_loop)(a, s, out)
    return _deliver(plan, out)


def dirichlet_grad_cpu(plan, x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    shape = plan.out.shape
    xs, a, t = _f64(x, shape), _f64(alpha, shape), _f64(total, shape)
    out = np.empty(xs.size, np.float64)
    loop = _dirichlet_grad_par if _threads.use_parallel(xs.size) else _dirichlet_grad_loop
    loop(xs, a, t, out, _DIRICHLET_C)
    return _deliver(plan, out)
