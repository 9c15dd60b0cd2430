# ruff: noqa: FURB136
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
"""Argument reduction of sin, cos and tan: x = k*pi/2 + r (mod 2*pi), Cody-Waite for moderate
|x| and Payne-Hanek for huge |x|."""

import math
from fractions import Fraction

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._core import _PI, _T32, _T64, _jitable, _scalers, _two_prod, _two_sum
from ._intrinsics import _f64_as_i64, _fma, _i64_as_f64

# Argument reduction x = q*pi/2 + r, |r| <= pi/4, r as a double-word (r + r_lo) (float32 sin and
# cos use a cheaper Cody-Waite of their own, see ``trig._make_sincos32``, and the Payne-Hanek
# reduction below):
# - moderate |x|: Cody-Waite with pi/2 split in three full-precision parts; the first product
#   is subtracted exactly with an FMA, the second as an exact FMA product with TwoSum;
# - huge |x| (Payne-Hanek): x = M * 2^E with integer M; the bits of 2/pi that matter for
#   M * 2^E * 2/pi mod 4 are read from a per-exponent table of 2/pi chunks, the products
#   M * chunk are exact and are summed modulo 4 with exact float64 arithmetic. float32 uses
#   float64 arithmetic for this fallback only (four exact products).
# Both paths are evaluated (branch-free) and selected by |x|.

# 2/pi to 1344 bits (the first hex digit is the first bit after the binary point).
_TWO_OVER_PI_HEX = (
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d192"
    "1cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde0598"
    "0fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d"
    "0856033046fc7b6babf0cfbc209af4361da9e391615ee61b08"
)
_TWO_OVER_PI_BITS = len(_TWO_OVER_PI_HEX) * 4


def _two_over_pi_table(e_min, e_max, nchunks, chunk_bits):
    """Row i: chunks of G = 2^(e_min+i) * 2/pi covering bit positions 1 .. 2 - nchunks*chunk_bits
    (bits above 2^1 only add multiples of 4 to M * G for integer M)."""
    big = int(_TWO_OVER_PI_HEX, 16)  # 2/pi = big / 2^BITS
    rows = []
    for e in range(e_min, e_max + 1):
        row = []
        for j in range(nchunks):
            lo_pos = 2 - (j + 1) * chunk_bits  # value of the chunk's last bit: 2^lo_pos
            shift = _TWO_OVER_PI_BITS - e + lo_pos  # floor(G / 2^lo_pos) = big >> shift
            assert shift >= 0
            chunk = (big >> shift) & ((1 << chunk_bits) - 1)
            row.append(math.ldexp(float(chunk), lo_pos))  # exact: chunk_bits <= 53
        rows.append(row)
    return np.array(rows, dtype=np.float64)


# float32 (|x| >= 2^10, integer reduction, no table): x = m * 2^E with a 24-bit integer m and
# -13 <= E <= 104. W(E) = floor(2^(E+126) * 2/pi) mod 2^128 is a 128-bit window of the bits of
# 2/pi; bits above it add multiples of 4 to m * 2^E * 2/pi. W(E) = (S >> (104 - E)) mod 2^128
# for the fixed 230-bit integer S = floor(2^230 * 2/pi) held in four 64-bit words, so each
# window half is one funnel shift of two of those words (no per-exponent table, no gather).
_RPI32_EMIN, _RPI32_EMAX = -13, 104
_RPI32_S = int(_TWO_OVER_PI_HEX, 16) >> (_TWO_OVER_PI_BITS - 230)
_RPI32_WORDS = tuple((_RPI32_S >> (64 * i)) & ((1 << 64) - 1) for i in range(4))
# float64: |x| >= 2^40 (E >= -12) up to the largest double
_RPI64_EMIN, _RPI64_EMAX = -14, 971
_RPI64_TAB = _two_over_pi_table(_RPI64_EMIN, _RPI64_EMAX, 4, 53)


def _make_cody_waite(T):
    _, _, rint = _scalers(T)
    pio2 = Fraction(_PI) / 2
    P1 = T.c(pio2)
    P2 = T.c(pio2 - Fraction(float(P1)))
    P3 = T.c(pio2 - Fraction(float(P1)) - Fraction(float(P2)))
    TWO_OVER_PI = T.c(1 / pio2)

    @_jitable
    def cody_waite(ax):
        """ax >= 0 moderate: (r, r_lo, k) with ax = k*pi/2 + r + r_lo."""
        kf, k = rint(ax * TWO_OVER_PI)
        r1 = _fma(-kf, P1, ax)  # exact
        w, w_lo = _two_prod(kf, P2)
        r, e = _two_sum(r1, -w)
        r_lo = (e - w_lo) - kf * P3
        y = r + r_lo
        return y, (r - y) + r_lo, k

    return cody_waite


_cody_waite32 = _make_cody_waite(_T32)
_cody_waite64 = _make_cody_waite(_T64)

_PIO2_64 = np.float64(float(Fraction(_PI) / 2))
_PIO2_64_LO = np.float64(float(Fraction(_PI) / 2 - Fraction(float(_PIO2_64))))
_MAGIC64 = _T64.magic
_MAGIC64_I = _T64.magic_i
_TWO52 = np.float64(2.0**52)


@_jitable
def _rint64(x):
    t = x + _MAGIC64
    return t - _MAGIC64, _f64_as_i64(t) - _MAGIC64_I


def _ph32_fixed(builder, x):
    """LLVM IR of the float32 Payne-Hanek product (see ``_payne_hanek32``): y = x * 2/pi mod 4
    as a 64-bit fixed-point integer with 62 fraction bits."""
    i32, i64 = ir.IntType(32), ir.IntType(64)

    def c32(v):
        return ir.Constant(i32, v)

    def c64(v):
        return ir.Constant(i64, v - (1 << 64) if v >= 1 << 63 else v)

    def clamp(v, lo, hi):
        v = builder.select(builder.icmp_signed("<", v, c32(lo)), c32(lo), v)
        return builder.select(builder.icmp_signed(">", v, c32(hi)), c32(hi), v)

    bits = builder.bitcast(x, i32)
    be = builder.and_(builder.lshr(bits, c32(23)), c32(0xFF))
    be = clamp(be, _RPI32_EMIN + 150, _RPI32_EMAX + 150)
    o = builder.sub(c32(_RPI32_EMAX + 150), be)  # 104 - E in [0, 117]
    m = builder.zext(builder.or_(builder.and_(bits, c32(0x7FFFFF)), c32(0x800000)), i64)
    s = builder.zext(builder.and_(o, c32(63)), i64)
    hi_word = builder.icmp_unsigned(">=", o, c32(64))
    w = [c64(v) for v in _RPI32_WORDS]
    d0, d1, d2 = (builder.select(hi_word, w[i + 1], w[i]) for i in range(3))
    fnty = ir.FunctionType(i64, [i64, i64, i64])
    fshr = cgutils.get_or_insert_function(builder.module, fnty, "llvm.fshr.i64")
    w_lo = builder.call(fshr, [d1, d0, s])
    w_hi = builder.call(fshr, [d2, d1, s])
    # top 64 bits of m * W mod 2^128 (the dropped low product bits are below 2^-62): a
    # fixed-point y = m * 2^E * 2/pi mod 4 with 62 fraction bits
    t_lo = builder.lshr(builder.mul(m, builder.lshr(w_lo, c64(32))), c64(32))
    return builder.add(builder.mul(m, w_hi), t_lo)


def _ph32_ir(builder, x):
    """Quadrant form: (r float64, n int32), x = n*pi/2 + r (mod 2*pi), |r| <= pi/4."""
    i64 = ir.IntType(64)
    t = _ph32_fixed(builder, x)
    n = builder.lshr(builder.add(t, ir.Constant(i64, 1 << 61)), ir.Constant(i64, 62))  # mod 4
    f = builder.sub(t, builder.shl(n, ir.Constant(i64, 62)))  # signed, |f| <= 2^61
    scale = ir.Constant(ir.DoubleType(), float(_PIO2_64) * 2.0**-62)
    r = builder.fmul(builder.sitofp(f, ir.DoubleType()), scale)
    return r, builder.trunc(n, ir.IntType(32))


@intrinsic(target="generic")
def _payne_hanek32(typingctx, ax):
    """float32 ax (>= 2^10, finite; other values give garbage) -> (r float64, k int32) with
    ax = k*pi/2 + r (mod 2*pi), |r| <= pi/4 (up to rounding), |error| < 2^-60 + 2^-53 |r|.

    Integer arithmetic only (64-bit multiplies and funnel shifts), so it vectorises without
    gathers; see ``_RPI32_WORDS``."""
    if ax != types.float32:
        return None
    sig = types.Tuple((types.float64, types.int32))(types.float32)

    def codegen(context, builder, sig, args):
        r, k = _ph32_ir(builder, args[0])
        return context.make_tuple(builder, sig.return_type, [r, k])

    return sig, codegen


@_jitable
def _payne_hanek64(ax):
    """float64 ax (>= 2^40, finite) -> (r, r_lo, k) with ax = k*pi/2 + r + r_lo (mod 2*pi)."""
    ix = _f64_as_i64(ax)
    be = (ix >> 52) & 0x7FF
    be = _RPI64_EMIN + 1075 if be < _RPI64_EMIN + 1075 else be
    be = _RPI64_EMAX + 1075 if be > _RPI64_EMAX + 1075 else be
    row = be - (_RPI64_EMIN + 1075)
    m = _i64_as_f64((ix & 0xFFFFFFFFFFFFF) | (1075 << 52))  # 53-bit integer mantissa
    h0, l0 = _two_prod(m, _RPI64_TAB[row, 0])  # < 2^55, multiples of 2^-51
    h1, l1 = _two_prod(m, _RPI64_TAB[row, 1])  # < 8
    h2, l2 = _two_prod(m, _RPI64_TAB[row, 2])  # < 2^-50
    p3 = m * _RPI64_TAB[row, 3]  # < 2^-103
    # reduce the big terms modulo 4 (exactly)
    t = h0 * 0.25
    t = t - (t if t >= _TWO52 else (t + _TWO52) - _TWO52)
    a = t * 4.0 + (l0 - 4.0 * _rint64(l0 * 0.25)[0])
    a = a - 4.0 * _rint64(a * 0.25)[0]
    b = h1 - 4.0 * _rint64(h1 * 0.25)[0]
    s, e = _two_sum(a, b)
    nf, k = _rint64(s)
    s = s - nf
    tt, t1 = _two_sum(e, l1)
    tt, t2 = _two_sum(tt, h2)
    low = (t1 + t2) + (l2 + p3)
    f, f_lo = _two_sum(s, tt)
    f_lo = f_lo + low
    fh = f + f_lo
    f_lo = (f - fh) + f_lo
    r, r_lo = _two_prod(fh, _PIO2_64)
    r_lo = r_lo + (fh * _PIO2_64_LO + f_lo * _PIO2_64)
    y = r + r_lo
    return y, (r - y) + r_lo, k


# Below these the Cody-Waite reduction alone is exact enough: the *_near variants skip the
# Payne-Hanek one, which the branch-free full functions compute for every element (~3x the cost).
_TRIG_NEAR32 = np.float32(1024.0)
_TRIG_NEAR64 = np.float64(2.0**40)


def _make_reduce(T):
    """reduce(ax) -> (r, r_lo, k) with ax = k*pi/2 + r + r_lo (mod 2*pi), |r| <= pi/4."""
    if T is _T32:
        CW_MAX = _TRIG_NEAR32

        @_jitable
        def reduce(ax):
            r, r_lo, k = _cody_waite32(ax)
            rh64, kh = _payne_hanek32(ax)
            rh = np.float32(rh64)
            rh_lo = np.float32(rh64 - np.float64(rh))
            small = ax < CW_MAX
            return (r if small else rh), (r_lo if small else rh_lo), (k if small else kh)

        return reduce

    CW_MAX = _TRIG_NEAR64

    @_jitable
    def reduce(ax):
        r, r_lo, k = _cody_waite64(ax)
        rh, rh_lo, kh = _payne_hanek64(ax)
        small = ax < CW_MAX
        return (r if small else rh), (r_lo if small else rh_lo), (k if small else kh)

    return reduce


_reduce32 = _make_reduce(_T32)
_reduce64 = _make_reduce(_T64)
