# ruff: noqa: PLR0124
# PLR0124: x != x is the nan test; PLR2004: the breakpoints are the published algorithms'.
"""Special functions of one real argument (gamma family, Bessel I0/I1, normal distribution,
Hurwitz zeta) for the scalar functions of ``kernels/defs/special.py``.

They compute in float64 whatever the argument type (float32 results are then rounded once, so
they are within half an ulp of the exact value where the float64 algorithm is accurate) and
follow the algorithms torch's CPU kernels use (Cephes, as ATen's ``Math.h``), so that float64
results agree with torch's to a few ulp, special values (poles, nan, inf, -0.0) included. The
loops (digamma's recurrence, zeta's Euler-Maclaurin sum) are short and data-dependent, so these
stay scalar code: they are ``njit(inline='always')`` helpers, compiled into each kernel that
calls them (CPU and CUDA), not vectorised.
"""

import math

import numpy as np
from numba import njit

from .fastmath._intrinsics import _fma

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16

# Chebyshev coefficients (Cephes): exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) on [8, inf)
_I0_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1)
# exp(-x) I1(x) / x on [0, 8] and exp(-x) sqrt(x) I1(x) on [8, inf)
_I1_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1)

# ndtri (Cephes): rational approximations on |y - 1/2| <= 3/8 and in z = sqrt(-2 log y)
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)
_S2PI = 2.50662827463100050242E0
_SQRT1_2 = 0.7071067811865476
_INV_SQRTPI = 0.5641895835477563


@njit(inline="always")
def _polevl(x, coeffs):
    """coeffs[0] x^n + ... + coeffs[n] (Cephes' order)."""
    r = 0.0
    for c in coeffs:
        r = r * x + c
    return r


@njit(inline="always")
def _chbevl(x, coeffs):
    """Chebyshev series sum (Cephes' chbevl)."""
    b0 = coeffs[0]
    b1 = 0.0
    b2 = 0.0
    for c in coeffs[1:]:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


@njit(inline="always")
def lgamma(x):
    """log |Gamma(x)|: inf at the poles (non-positive integers) and at +-inf."""
    return math.lgamma(np.float64(x))


@njit(inline="always")
def _digamma_pos(x):
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        y = z * _polevl(z, _DIGAMMA_A)
    return result + math.log(x) - (0.5 / x) - y


@njit(inline="always")
def _digamma64(x):
    if x == 0:
        return math.copysign(math.inf, -x)
    if x < 0:
        if x == np.trunc(x):
            return math.nan
        r = x - np.trunc(x)
        return _digamma_pos(1 - x) - math.pi / math.tan(math.pi * r)
    return _digamma_pos(x)


@njit(inline="always")
def digamma(x):
    """psi(x): -+inf at -+0, nan at the negative integers (and -inf), reflection below 0."""
    return _digamma64(np.float64(x))


@njit(inline="always")
def _trigamma64(x):
    sign = 1.0
    result = 0.0
    if x < 0.5:
        sign = -1.0
        s = math.sin(math.pi * x)
        result -= (math.pi * math.pi) / (s * s)
        x = 1 - x
    for _ in range(6):
        result += 1 / (x * x)
        x += 1
    ixx = 1 / (x * x)
    result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return sign * result


@njit(inline="always")
def trigamma(x):
    return _trigamma64(np.float64(x))


@njit(inline="always")
def _zeta64(x, q):
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = math.pow(q, -x)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = math.pow(a, -x)
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for c in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / c
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@njit(inline="always")
def zeta(x, q):
    """Hurwitz zeta(x, q) = sum_k (k + q)^-x (Euler-Maclaurin, Cephes)."""
    return _zeta64(np.float64(x), np.float64(q))


@njit(inline="always")
def polygamma(n, x):
    """The n-th derivative of digamma (n >= 0)."""
    k = int(n)
    if k == 0:
        return digamma(x)
    if k == 1:
        return trigamma(x)
    sign = 1.0 if k % 2 else -1.0
    return sign * math.exp(math.lgamma(k + 1.0)) * zeta(k + 1.0, x)


@njit(inline="always")
def _mvlgamma64(x, p):
    s = 0.0
    for j in range(p):
        s += math.lgamma(x + (-p * 0.5 + 0.5 + j * 0.5))
    return s + p * (p - 1) * 1.1447298858494002 * 0.25


@njit(inline="always")
def mvlgamma(x, p):
    """Multivariate log-gamma: sum_{j<p} lgamma(x - j/2) + p (p - 1) / 4 log(pi)."""
    return _mvlgamma64(np.float64(x), int(p))


@njit(inline="always")
def i0(x):
    return _i064(abs(np.float64(x)))


@njit(inline="always")
def _i064(x):
    if x <= 8.0:
        return math.exp(x) * _chbevl(x / 2.0 - 2.0, _I0_A)
    return math.exp(x) * _chbevl(32.0 / x - 2.0, _I0_B) / math.sqrt(x)


@njit(inline="always")
def i0e(x):
    return _i0e64(abs(np.float64(x)))


@njit(inline="always")
def _i0e64(x):
    if x <= 8.0:
        return _chbevl(x / 2.0 - 2.0, _I0_A)
    return _chbevl(32.0 / x - 2.0, _I0_B) / math.sqrt(x)


@njit(inline="always")
def _i164(x0):
    x = abs(x0)
    if x <= 8.0:
        out = math.exp(x) * x * _chbevl(x / 2.0 - 2.0, _I1_A)
    else:
        out = (math.exp(x) * _chbevl(32.0 / x - 2.0, _I1_B)) / math.sqrt(x)
    return -out if x0 < 0 else out


@njit(inline="always")
def i1(x):
    return _i164(np.float64(x))


@njit(inline="always")
def _i1e64(x0):
    x = abs(x0)
    if x <= 8.0:
        out = _chbevl(x / 2.0 - 2.0, _I1_A) * x
    else:
        out = _chbevl(32.0 / x - 2.0, _I1_B) / math.sqrt(x)
    return -out if x0 < 0 else out


@njit(inline="always")
def i1e(x):
    return _i1e64(np.float64(x))


@njit(inline="always")
def ndtr(x):
    """The standard normal CDF."""
    return 0.5 * math.erfc(-np.float64(x) * _SQRT1_2)


@njit(inline="always")
def _ndtri64(y0):
    if y0 == 0:
        return -math.inf
    if y0 == 1:
        return math.inf
    if not (0 < y0 < 1):
        return math.nan
    code = True
    y = y0
    if y > 1.0 - 0.13533528323661269189:
        y = 1.0 - y
        code = False
    if y > 0.13533528323661269189:
        y = y - 0.5
        y2 = y * y
        return (y + y * (y2 * _polevl(y2, _NDTRI_P0) / _polevl(y2, _NDTRI_Q0))) * _S2PI
    x = math.sqrt(-2.0 * math.log(y))
    x0 = x - math.log(x) / x
    z = 1.0 / x
    if x < 8.0:
        x1 = z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1)
    else:
        x1 = z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2)
    x = x0 - x1
    return -x if code else x


@njit(inline="always")
def ndtri(y0):
    """The inverse of ndtr."""
    return _ndtri64(np.float64(y0))


@njit(inline="always")
def _exp_sq(x):
    """exp(x * x) with x * x carried as an exact double-word (its rounding would cost up to
    x^2 ulp)."""
    h = x * x
    lo = _fma(x, x, -h)
    return math.exp(h) * (1.0 + lo)


@njit(inline="always")
def _erfcx_pos(x):
    if x < 26.0:
        return _exp_sq(x) * math.erfc(x)
    # asymptotic series 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k: 2x^2 >= 1352
    w = 1.0 / (2.0 * x * x)
    s = 1.0
    t = 1.0
    for k in range(1, 10):
        t *= -(2 * k - 1) * w
        s += t
    return _INV_SQRTPI / x * s


@njit(inline="always")
def _erfcx64(x):
    if x != x:
        return x
    if x >= 0:
        return _erfcx_pos(x)
    if x < -26.7:
        return math.inf
    return 2.0 * _exp_sq(x) - _erfcx_pos(-x)


@njit(inline="always")
def erfcx(x):
    """exp(x^2) erfc(x), without its overflow for large x."""
    return _erfcx64(np.float64(x))


@njit(inline="always")
def _log_ndtr64(x):
    t = x * _SQRT1_2
    if x < -1.0:
        return math.log(erfcx(-t) / 2) - t * t
    return math.log1p(-math.erfc(t) / 2)


@njit(inline="always")
def log_ndtr(x):
    """log(ndtr(x)), accurate in the lower tail."""
    return _log_ndtr64(np.float64(x))


@njit(inline="always")
def entr(x):
    """-x log x (0 at 0, -inf below)."""
    if x != x:
        return x
    if x > 0:
        return -x * math.log(x)
    if x == 0:
        return 0.0
    return -math.inf
