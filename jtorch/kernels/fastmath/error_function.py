# ruff: noqa: FURB136, S102
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
# S102: exec generates fixed-arity glue code.
"""erf and erfc: a series for |x| < 0.8, beyond it erfc(x) = e^{-x^2} G(x) (float64: G piecewise
in double-word arithmetic; float32: one polynomial each for erf and erfc)."""

import math

import numpy as np

from ._core import (
    _LN2,
    _LOG2E,
    _T32,
    _T64,
    _as_float,
    _frac,
    _jitable,
    _np_unary,
    _poly,
    _register,
    _scalers,
    _two_prod,
    _two_sum,
)
from ._intrinsics import _div, _fma, _i32_as_f32
from .exponential import _EXP_P32, _expk32, _expk_dw64

# erf(x) = x + x*Q(x^2) for |x| < 0.8; beyond, erfc(x) = e^{-x^2} * G(x) with
# G = e^{x^2} erfc(x) a polynomial in x - start on short pieces and G = H(1/x^2) / x on the last
# piece; e^{-x^2} is evaluated from the exact double-word x^2 and the product, quotient and
# scaling are carried as double-words so that the result is rounded once.

_ERF_Q32 = (
    0.12837916612625122,
    -0.37612608075141907,
    0.11283162236213684,
    -0.026822242885828018,
    0.005086925346404314,
    -0.0006543367053382099,
)
def _make_erf(T, expk_dw, Q, pieces, xmax):
    """erf/erfc from the small-|x| series and erfc(x) = e^{-x^2} G(x) on ``pieces``: a list of
    (start, (c0_hi, c0_lo, c1, c2, ...)); G is a polynomial in w = x - start on each piece but
    the last, where G = H(1/x^2) / x."""
    F = T.f
    _, scale2, _ = _scalers(T)
    Q = tuple(F(c) for c in Q)
    ONE, TWO, HALF, ZERO = F(1), F(2), F(0.5), F(0)
    XA, XMAX, QUARTER = F(pieces[0][0]), F(xmax), F(0.25)
    n = len(pieces)
    scope = {"F": F, "ONE": ONE, "XMAX": XMAX, "expk_dw": expk_dw, "scale2": scale2}
    scope.update(_two_prod=_two_prod, _two_sum=_two_sum, _poly=_poly, _div=_div, _fma=_fma)
    lines = [
        "def erfc_pos(ax):",
        "    a = XMAX if ax > XMAX else ax",
        "    h, l = _two_prod(a, a)",
        "    k, s, s_lo = expk_dw(-h, -l)",
    ]
    for i, (start, coeffs) in enumerate(pieces):
        coeffs = tuple(F(c) for c in coeffs)
        scope.update({f"S{i}": F(start), f"C0_{i}": coeffs[0], f"CL_{i}": coeffs[1]})
        scope.update({f"C1_{i}": coeffs[2], f"P_{i}": coeffs[3:]})
        # w = x - start is exact on the piece (it spans less than a factor 2); last piece: 1/x^2
        lines.append(f"    w{i} = a - S{i}" if i < n - 1 else f"    w{i} = _div(ONE, a * a)")
        lines.append(f"    t{i} = (w{i} * w{i}) * _poly(w{i}, P_{i})")
    for name, fmt in (("w", "w{}"), ("c0", "C0_{}"), ("c0_lo", "CL_{}"), ("c1", "C1_{}"), ("tail", "t{}")):
        lines.append(f"    {name} = {fmt.format(n - 1)}")
        for i in range(n - 2, -1, -1):
            lines.append(f"    {name} = {fmt.format(i)} if a < S{i + 1} else {name}")
    lines += [
        # G = c0 + c1*w + w^2 * P(w) with c0 + c1*w as an exact double-word
        "    p1, p1_lo = _two_prod(c1, w)",
        "    g, e = _two_sum(c0, p1)",
        "    g_lo = e + ((c0_lo + p1_lo) + tail)",
        "    g2 = g + g_lo",
        "    g_lo = (g - g2) + g_lo",
        "    g = g2",
        # n = g * (1 + s + s_lo) as a double-word, then n / d with d = x (last piece) or 1
        "    t, t_lo = _two_prod(g, s)",
        "    m, e = _two_sum(g, t)",
        "    m_lo = e + (t_lo + (g * s_lo + g_lo * (ONE + s)))",
        f"    d = ONE if a < S{n - 1} else a",
        "    q = _div(m, d)",
        "    q = q + _div(_fma(-q, d, m) + m_lo, d)",
        "    return scale2(q, k)",
    ]
    exec("\n".join(lines), scope)
    erfc_pos = _jitable(scope["erfc_pos"])

    def erf_(x):
        ax = abs(x)
        y_small = x + x * _poly(x * x, Q)
        y = ONE - erfc_pos(ax)
        y = -y if x < ZERO else y
        return y_small if ax < XA else y

    def erfc_(x):
        ax = abs(x)
        e = erfc_pos(ax)
        y_big = TWO - e if x < ZERO else e
        p = x * _poly(x * x, Q)  # erf(x) = x + p
        y_small = ONE - (x + p) if x < QUARTER else HALF - ((x - HALF) + p)
        return y_small if ax < XA else y_big

    return erf_, erfc_


# float32 erfc beyond 0.8: erfc(a) = e^{-a^2} * t * K(t) with t = 1 / (a + 1/2). K = erfcx(a) (a + 1/2)
# stays within [0.589, 0.644] on [0.8, 10.06] (erfc rounds to 0 beyond), so a polynomial in
# w = t - mid has a dominant constant term and its last Horner step, taken as an exact
# double-word, leaves K within 0.4 ulp; t's rounding (amplified up to 2x through a plain
# rational variable) is carried as a Newton residual t_lo, and e^{-a^2} from the exact
# double-word a^2 as 2^k (1 + s + s_lo), so that the result is rounded once. ~60 vector
# operations against ~100 for the piecewise double-word path; 1.6 ulp max over every float32.
_ERFC_K32 = (
    0.6405335664749146,
    0.055587608367204666,
    -0.25739702582359314,
    0.14396122097969055,
    0.08228543400764465,
    -0.24161723256111145,
    0.22413717210292816,
    0.004704859107732773,
    -0.36133089661598206,
    0.4086898863315582,
)


def _make_erfc32():
    F = np.float32
    _, _, rint = _scalers(_T32)
    Q = tuple(F(c) for c in _ERF_Q32)
    P = tuple(F(c) for c in _EXP_P32)
    K0, KR = F(_ERFC_K32[0]), tuple(F(c) for c in _ERFC_K32[1:])
    ONE, TWO, HALF, ZERO, QUARTER = F(1), F(2), F(0.5), F(0), F(0.25)
    XA, XMAX, MID = F(0.8), F(10.06), F(0.43196386098861694)
    LOG2E = F(_LOG2E)
    LN2_HI, LN2_LO = _T32.split(_frac(_LN2), _T32.mant + 1 - 12)
    # 2^k for k in [-146, 0] as 2^(k + 64) * 2^-64: the first factor is normal, the second
    # product rounds once, also into the subnormals
    K_BIAS, TWO_M64 = 64 + 127, F(2.0**-64)

    def erfc_(x):
        ax = abs(x)
        p = x * _poly(x * x, Q)  # erf(x) = x + p
        y_small = ONE - (x + p) if x < QUARTER else HALF - ((x - HALF) + p)
        a = XMAX if ax > XMAX else ax
        d = a + HALF
        d_lo = HALF - (d - a)  # exact for a >= 1/2 (a < 0.8 takes y_small)
        t = _div(ONE, d)
        t_lo = t * (_fma(-d, t, ONE) - d_lo * t)
        w = t - MID
        p1, p1_lo = _two_prod(w, _poly(w, KR))
        kh = K0 + p1
        k_lo = ((K0 - kh) + p1) + p1_lo
        # e^{-(h + h_lo)} = 2^k (1 + s + s_lo), r + r_lo = -(h + h_lo) - k ln2
        h, h_lo = _two_prod(a, a)
        kf, k = rint(-h * LOG2E)
        u = _fma(-kf, LN2_HI, -h)  # exact
        v = _fma(kf, LN2_LO, h_lo)
        r = u - v
        r_lo = (u - r) - v
        q = (r * r) * _poly(r, P)
        s = r + q
        s_lo = ((r - s) + q) + r_lo
        # t (1 + t_lo/t) * (kh + k_lo) * (1 + s + s_lo), rounded once
        m_lo = _fma(kh, s, _fma(k_lo, s, k_lo) + kh * s_lo)
        p2, p2_lo = _two_prod(t, kh)
        y = p2 + _fma(t, m_lo, _fma(t_lo, kh, p2_lo))
        y = (y * _i32_as_f32((k + K_BIAS) << 23)) * TWO_M64
        y = TWO - y if x < ZERO else y
        return y_small if ax < XA else y

    return erfc_


_erfc32 = _make_erfc32()

# float32 erf needs erfc(x) only to absolute accuracy (erf >= 0.74 beyond 0.8), so one
# polynomial G(t) in t - 1/2, t = 1 / (1 + x/2), covers [0.8, 4] (relative fit error 4e-10;
# erf rounds to 1 beyond 3.92): half the cost of the piecewise double-word path, still
# within 1.4 ulp.
_ERF_T32 = (
    0.25539568066596985,
    0.8543717265129089,
    0.9666328430175781,
    0.6318272352218628,
    0.05971330776810646,
    -0.22377097606658936,
    -0.053508613258600235,
    0.11963609606027603,
)


def _make_erf32():
    F = np.float32
    _, scale2, _ = _scalers(_T32)
    Q, G = tuple(F(c) for c in _ERF_Q32), tuple(F(c) for c in _ERF_T32)
    ONE, HALF, ZERO, XA, XMAX = F(1), F(0.5), F(0), F(0.8), F(4)

    def erf_(x):
        ax = abs(x)
        y_small = x + x * _poly(x * x, Q)
        a = XMAX if ax > XMAX else ax
        # t = 1/d with d = 1 + a/2 as a double-word and one Newton step: t's rounding would
        # otherwise reach the result amplified ~2x
        d, d_lo = _two_sum(ONE, HALF * a)
        t = _div(ONE, d)
        t = _fma(t, _fma(-d, t, ONE) - d_lo * t, t)
        g = _poly(t - HALF, G)
        # e^{-a^2} from the exact double-word a^2, kept as 2^k (1 + s) so that g * e is one fma
        h, h_lo = _two_prod(a, a)
        k, s = _expk32(-h, -h_lo)
        y = ONE - scale2(_fma(g, s, g), k)
        y = -y if x < ZERO else y
        return y_small if ax < XA else y

    return erf_


_erf32 = _make_erf32()


# float64 pieces: [0.8, 1.4), [1.4, 2), [2, 2.8), [2.8, 4) in x - start; [4, 27.3] as H(1/x^2) / x
_ERFC_G1_64 = (
    0.4891005892231147,
    -4.1735737486710563e-19,
    -0.345818224338529,
    0.21244600975228753,
    -0.11724094435758205,
    0.059326627127044264,
    -0.027911856960764876,
    0.012332379405984292,
    -0.0051559782736001255,
    0.0020518536999055755,
    -0.0007808197415258351,
    0.00028491925627781225,
    -9.940910246024075e-05,
    3.2480463249489205e-05,
    -9.3191903241981e-06,
    2.0278714817184706e-06,
    -2.3920530759813566e-07,
)
_ERFC_G2_64 = (
    0.3387435406797346,
    2.099264267512915e-17,
    -0.1798972531922556,
    0.08688738621057747,
    -0.0388366083316669,
    0.016258067274042953,
    -0.0064301256733282994,
    0.002418630583254599,
    -0.0008697274620021473,
    0.00030025735611507065,
    -9.987339979178159e-05,
    3.2118271964894256e-05,
    -1.002856993380231e-05,
    3.0465593162601607e-06,
    -8.775236214337024e-07,
    2.117253764039076e-07,
    -2.999858397239499e-08,
)
_ERFC_G3_64 = (
    0.25539567631050575,
    -4.28065864734225e-18,
    -0.1067964618534896,
    0.04180275260352603,
    -0.015460637764269721,
    0.0054407385370153225,
    -0.0018316642698325964,
    0.0005924699452799774,
    -0.0001847780738260353,
    5.572708510606352e-05,
    -1.6289948718182108e-05,
    4.619630674943916e-06,
    -1.265160215987617e-06,
    3.270399585778388e-07,
    -7.46412973598367e-08,
    1.2965764304720509e-08,
    -1.224793492930565e-09,
)
_ERFC_G4_64 = (
    0.1905488796899919,
    -1.1204827901248793e-17,
    -0.06130544083155795,
    0.018893645361626778,
    -0.005602155879253438,
    0.0016038044486220823,
    -0.0004446013579215916,
    0.0001196401471624686,
    -3.1316555486287505e-05,
    7.987586849254887e-06,
    -1.987279352405849e-06,
    4.815245772129582e-07,
    -1.1237869190941889e-07,
    2.436870623733583e-08,
    -4.521326509594626e-09,
    6.138775209341318e-10,
    -4.3748727569289866e-11,
)
_ERFC_H64 = (
    0.5641895835477563,
    6.747774718723944e-18,
    -0.28209479177387636,
    0.42314218765944916,
    -1.0578554685891424,
    3.7024940002977873,
    -16.66119998753663,
    91.63397063893837,
    -595.4049523711338,
    4452.495989434389,
    -37257.494061569785,
    333929.0944011921,
    -2993147.4900487037,
    24571414.511957366,
    -167850616.71705234,
    858835734.2793567,
    -2850307049.6655025,
    4531669389.76582,
)
_ERF_Q64 = (
    0.1283791670955126,
    -0.37612638903184215,
    0.1128379167098356,
    -0.026866170651968276,
    0.005223977709874683,
    -0.0008548333112242411,
    0.00012055606863582619,
    -1.493356182386413e-05,
    1.6608784402661233e-06,
    -1.804944479895006e-07,
    2.5634993116078194e-08,
    -4.119607234252241e-09,
)


_erf64, _erfc64 = _make_erf(
    _T64,
    _expk_dw64,
    _ERF_Q64,
    [(0.8, _ERFC_G1_64), (1.4, _ERFC_G2_64), (2.0, _ERFC_G3_64), (2.8, _ERFC_G4_64), (4.0, _ERFC_H64)],
    27.3,
)


def erf(x):
    """Error function."""
    x = _as_float(x)
    return _np_unary(math.erf, x)


def erfc(x):
    """Complementary error function 1 - erf(x), accurate for large x."""
    x = _as_float(x)
    return _np_unary(math.erfc, x)


_register(erf, _erf32, _erf64)
_register(erfc, _erfc32, _erfc64)
