"""Vectorisable elementary functions for Numba kernels (float32 and float64).

Why: this Numba build has no SVML, so ``math.exp`` or ``np.sin`` inside an ``njit`` loop is a
scalar libm call that blocks loop vectorisation. The functions here are branch-free (selects,
no early returns in the main path), built from arithmetic, ``llvm.fma`` / ``llvm.fmuladd`` /
``llvm.sqrt``, float<->int bitcasts and small constant tables, so a loop such as::

    import numba
    from jtorch.kernels import fastmath

    @numba.njit
    def kernel(a, out):
        for i in range(a.size):
            out[i] = fastmath.exp(a[i])

compiles to ``<8 x float>`` (or wider) vector code on AVX2 without ``fastmath=True``; nan, inf,
-0.0 and subnormal semantics are kept. Each public name is a plain Python function (a NumPy
fallback, so plain calls and ``NUMBA_DISABLE_JIT=1`` work) with a ``numba.extending.overload``
for the generic target (CPU and CUDA) that picks the float32 or float64 implementation by
argument type. float32 arguments are computed in float32 arithmetic and return float32 (three
exceptions: the huge-|x| Payne-Hanek fallback of float32 sin/cos/tan uses 64-bit integer
arithmetic and one float64 conversion, float32 hypot sums the squares in float64, float32 mish
forms its quotient in float64).

Inlining: the overloads and helpers are compiled once per type with ``forceinline`` (LLVM
``alwaysinline``), so LLVM inlines them into the caller's loop before vectorising. This is much
cheaper to compile than Numba IR inlining (``inline='always'``) and the vectorisation test in
``tests/kernels/test_fastmath.py`` checks that it happens for every function. For CPU callers
with all-float32 or all-float64 arguments a second overload (target ``cpu``) hands Numba the
float32 / float64 implementation with ``cache=True``: it is compiled once into the on-disk
cache (keyed by this package's sources, ``kernels/cache_locator.py``), later processes load it
and link it into the caller, where LLVM inlines it as before (a new compiled sin/cos/exp chain
in a process with warm caches: first call 4.5-5.2 -> 2.6-3.3 s).

Accuracy: max error in ulp of the result type against the exact value (float32: exhaustive
over all 2^32 inputs where marked *, else dense sweeps of several million points; float64:
sweeps of ~0.5M points against 80-bit long double / mpmath).

    function  float32   float64     function  float32   float64
    exp       0.95*     0.94        tanh      0.78*     0.82
    exp2      1.05      1.03        sigmoid   1.01*     0.96
    expm1     1.06      1.04        sinh      0.97      0.94
    log       0.83*     0.83        cosh      0.93      0.95
    log2      0.80      0.82        atan      0.85      0.75
    log10     0.74      0.68        atan2     0.84      0.84
    log1p     0.83      0.82        asin      0.63      0.75
    sin       0.91*     0.77        acos      0.62      0.72
    cos       0.91*     0.76        asinh     0.83      0.82
    tan       0.99*     0.98        acosh     0.81      0.78
    pow       1.15      1.10        atanh     0.82      0.84
    erf       0.79      0.82        erfc      1.16      1.17

``gelu`` (x * Phi(x), an activation rather than an elementary function) trades the last ulps
for speed: float32 4.1 ulp for |x| < 2, 11.5 ulp down to -13 (see its section); float64 goes
through erfc and loses ~x^2/2 ulp for negative x to the rounding of x / sqrt 2. ``gelu_grad``
(Phi(x) + x phi(x)) reuses float32 gelu's one exponential for both terms: within 2.2 eps of
the terms' size (the sum cancels near x = -0.75), exact to rtol 2e-5 over the negative tail.

Every function has its own float32 and float64 implementation (``SCALAR_FLOAT64`` lists any
that fall back to a scalar ``math.*`` call; currently none).

Notes
- Polynomial coefficients are minimax fits (Remez exchange in mpmath, coefficients rounded to
  the working precision one at a time and the rest refitted).
- ``_mla(a, b, c)`` is ``llvm.fmuladd`` (fused when the target has FMA, used for polynomials);
  ``_fma`` is ``llvm.fma``, used where an exact product or residual is needed (double-word
  arithmetic, argument reduction). On a CPU without FMA it is a (correct, slow) libm call.
- sin/cos/tan: Cody-Waite reduction for moderate |x| (float32 < 1024, float64 < 2^40) and a
  Payne-Hanek reduction for larger |x|; both are evaluated and selected, so the loop stays
  branch-free (the vectoriser cannot skip work per vector, so the large-|x| path is paid for
  every element and must be cheap). float32: the 24-bit mantissa times a 128-bit window of
  2/pi, taken from four constant 64-bit words with funnel shifts (no table, no gathers: the
  earlier per-exponent table cost four 16-lane gathers per vector, ~3/4 of the time of sin);
  float64: exact products of the mantissa with per-exponent table chunks of 2/pi, summed modulo
  4. Checked on the hardest float64 case (x = 6381956970095103 * 2^797).
- float32 sin/cos stay in float32 lanes (8 per AVX2 vector): below 2^10 a Cody-Waite
  reduction with pi/2 in three float32 parts whose products and first difference are exact
  (one FMA, an exact product, Fast2Sum: r as a float32 pair, 8 operations), then both the sin
  and the cos polynomial and a select, with no double-word kernel (see
  ``trig._make_sincos32``). 1.8x faster than reducing and evaluating in float64 (4 lanes and
  the conversions), which had in turn replaced a float32 form laid out like float64's (the
  normalised double-word reduction, fdlibm-style kernels with tail terms).
- Exponent arithmetic in vectorised code: Numba types int32 arithmetic as int64, which the
  vectoriser may then carry in 64-bit lanes; sigmoid and tanh build 2^k from the bits of the
  magic-rounded ``k + MAGIC`` (an add and a shift, which LLVM narrows back to 32 bits) and the
  float32 reduction works in IR-level int32, so both stay at full width.
- CUDA: the overloads are registered for ``target='generic'`` and use only arithmetic,
  bitcasts, ``llvm.fma``/``llvm.fmuladd``/``llvm.sqrt`` and constant tables;
  ``numba.cuda.compile_ptx`` of a device function calling any of them works for sm_90. Without
  a GPU driver Numba's CUDA dispatcher asks the current device for its compute capability
  when compiling overloads as device functions; the test patches
  ``numba.cuda.dispatcher.get_current_device`` for that. Avoid Python's ``min``/``max`` on
  integers in this package: the CUDA target's overload of them is broken in this Numba.

Layout: one module per family, each defining its public stubs and binding them to their
float32 / float64 implementations with ``_register``; this ``__init__`` re-exports the public
names.

- ``_intrinsics``: LLVM intrinsics (float<->int bitcasts, ``_div``, ``_fma``, ``_mla``, ``_sqrt``).
- ``_core``: registration (``_register``, ``_jitable``), ``_poly``, per-dtype constants (``_Ty``),
  double-word arithmetic (``_two_sum``, ``_two_prod``), scaling by 2**k, the stubs' NumPy
  helpers and ``like``.
- ``exponential`` (exp, exp2, expm1 and the exp cores the later families use), ``logarithm``,
  ``_trig_reduction`` (Cody-Waite, Payne-Hanek) and ``trig``, ``hyperbolic`` (tanh, sigmoid,
  sinh, cosh), ``inverse_trig``, ``inverse_hyperbolic``, ``power`` (pow), ``error_function``
  (erf, erfc), ``hypotenuse`` (hypot), ``activation`` (gelu, gelu_grad, softplus, mish).
"""

# Names importers use beyond __all__ (explicit re-exports): ``like`` and the guards of the
# *_normal / *_near variants (defs/unary.py), ``_fma`` and the wrapping integer ops (scalar
# functions in defs/binary.py and defs/unary.py).
from ._core import like as like
from ._intrinsics import _fma as _fma
from ._intrinsics import _wrap_add as _wrap_add
from ._intrinsics import _wrap_mul as _wrap_mul
from ._intrinsics import _wrap_neg as _wrap_neg
from ._intrinsics import _wrap_sub as _wrap_sub
from .activation import gelu, gelu_grad, mish, softplus
from .error_function import erf, erfc
from .exponential import exp, exp2, exp_normal, expm1
from .exponential import exp_ok as exp_ok
from .hyperbolic import cosh, sigmoid, sinh, tanh
from .hypotenuse import hypot
from .inverse_hyperbolic import acosh, asinh, atanh
from .inverse_trig import acos, asin, atan, atan2
from .logarithm import log, log1p, log1p_normal, log2, log2_normal, log10, log10_normal, log_normal
from .logarithm import log1p_ok as log1p_ok
from .logarithm import log_ok as log_ok
from .power import pow
from .trig import cos, cos_near, sin, sin_near, tan, tan_near
from .trig import trig_near as trig_near

__all__ = [  # noqa: RUF022 (grouped by family)
    "exp",
    "exp_normal",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "log_normal",
    "log2_normal",
    "log10_normal",
    "log1p_normal",
    "sin",
    "cos",
    "tan",
    "sin_near",
    "cos_near",
    "tan_near",
    "tanh",
    "sigmoid",
    "sinh",
    "cosh",
    "atan",
    "atan2",
    "asin",
    "acos",
    "asinh",
    "acosh",
    "atanh",
    "pow",
    "erf",
    "erfc",
    "gelu",
    "gelu_grad",
    "hypot",
    "softplus",
    "mish",
]

# float64 functions that call math.* (correct, but the loop stays scalar)
SCALAR_FLOAT64 = frozenset()
