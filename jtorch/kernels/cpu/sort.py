"""Sorting kernels: stable row sorts, top-k / k-th value, median, mode, unique.

Rows are read along one dim of a strided ``(O, R, I)`` view (see ``reduce.plan_dim``), sorted
in scratch buffers with their indices, and written to contiguous outputs. Order is torch's:
ascending puts nan last, descending puts nan first (nan counts as the largest value), -0.0
equals 0.0, and equal keys keep their input order (stable). Rows of 64 or more elements use
an LSD radix sort (8 bits a pass, passes over bytes that all keys share are skipped) on
unsigned keys that order like the values (``radix_key``); shorter rows a merge sort with
insertion-sorted runs. Kernels have a serial and a ``prange`` variant (rows in parallel).
"""
# ruff: noqa: PLR0124  (x != x is the nan test that compiles for every dtype)

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic, overload

from ..jit import njit

_OPTS = {"cache": True, "nogil": True}
_RUN = 32
_RADIX_MIN = 64


@intrinsic
def _bits(typingctx, x):
    """The bits of a float as uint64 (zero-extended for float32)."""
    if not isinstance(x, types.Float):
        return None
    width = x.bitwidth

    def codegen(context, builder, sig, args):
        i = builder.bitcast(args[0], ir.IntType(width))
        return builder.zext(i, ir.IntType(64)) if width < 64 else i

    return types.uint64(x), codegen


def radix_key(v):
    """An unsigned key whose order is the ascending sort order of ``v`` (jitted only)."""
    raise NotImplementedError


@overload(radix_key, inline="always")
def _ov_radix_key(v):
    if isinstance(v, types.Float):
        w = v.bitwidth
        sign = np.uint64(1 << (w - 1))
        full = np.uint64((1 << w) - 1)
        top = np.uint64(w - 1)
        zero = np.uint64(0)

        def key_float(v):
            # branch-free (the sign is unpredictable): negatives flip every bit, others
            # set the sign bit; every nan sorts last (in input order), -0.0 == 0.0.
            b = _bits(v)
            k = b ^ (((zero - (b >> top)) & full) | sign)
            k = full if v != v else k
            return sign if v == 0 else k

        return key_float
    if isinstance(v, types.Integer) and v.signed:
        off = np.uint64(1 << (v.bitwidth - 1))
        mask = np.uint64((1 << v.bitwidth) - 1)
        return lambda v: (np.uint64(np.int64(v)) + off) & mask
    if isinstance(v, (types.Integer, types.Boolean)):
        return lambda v: np.uint64(v)
    return None


@njit(inline="always")
def _before(a, b, desc):
    """Strict order: does ``a`` sort before ``b``?"""
    if desc:
        return a > b or (a != a and b == b)
    return a < b or (b != b and a == a)


@njit(**_OPTS)
def msort(kv, ki, tv, ti, n, desc):
    """Stable sort of ``kv[:n]`` (values) carrying ``ki[:n]`` (indices); tv/ti are scratch."""
    for s in range(0, n, _RUN):
        e = min(s + _RUN, n)
        for i in range(s + 1, e):
            v = kv[i]
            ix = ki[i]
            j = i - 1
            while j >= s and _before(v, kv[j], desc):
                kv[j + 1] = kv[j]
                ki[j + 1] = ki[j]
                j -= 1
            kv[j + 1] = v
            ki[j + 1] = ix
    width = _RUN
    sv, si, dv, di = kv, ki, tv, ti
    flipped = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            if mid < hi and not _before(sv[mid], sv[mid - 1], desc):
                for t in range(lo, hi):
                    dv[t] = sv[t]
                    di[t] = si[t]
                continue
            while i < mid and j < hi:
                if _before(sv[j], sv[i], desc):
                    dv[k] = sv[j]
                    di[k] = si[j]
                    j += 1
                else:
                    dv[k] = sv[i]
                    di[k] = si[i]
                    i += 1
                k += 1
            while i < mid:
                dv[k] = sv[i]
                di[k] = si[i]
                i += 1
                k += 1
            while j < hi:
                dv[k] = sv[j]
                di[k] = si[j]
                j += 1
                k += 1
        sv, si, dv, di = dv, di, sv, si
        flipped = not flipped
        width *= 2
    if flipped:
        for t in range(n):
            kv[t] = tv[t]
            ki[t] = ti[t]


@njit(**_OPTS)
def radix(ku, ki, tu, ti, n, nbytes, cnt):
    """Stable LSD radix sort of unsigned keys ``ku[:n]`` carrying ``ki[:n]``."""
    su, si, du, di = ku, ki, tu, ti
    flipped = False
    for b in range(nbytes):
        shift = np.uint64(8 * b)
        for j in range(256):
            cnt[j] = 0
        for r in range(n):
            cnt[(su[r] >> shift) & np.uint64(255)] += 1
        if cnt[(su[0] >> shift) & np.uint64(255)] == n:
            continue  # every key has this byte
        tot = 0
        for j in range(256):
            c = cnt[j]
            cnt[j] = tot
            tot += c
        for r in range(n):
            u = su[r]
            j = (u >> shift) & np.uint64(255)
            k = cnt[j]
            du[k] = u
            di[k] = si[r]
            cnt[j] = k + 1
        su, si, du, di = du, di, su, si
        flipped = not flipped
    if flipped:
        for r in range(n):
            ku[r] = tu[r]
            ki[r] = ti[r]


@njit(**_OPTS)
def scratch(R, x):
    """Buffers for ``sort_row``: values, indices, keys (each twice) and radix counts."""
    return (np.empty(R, x.dtype), np.empty(R, x.dtype), np.empty(R, np.int64),
            np.empty(R, np.int64), np.empty(R, np.uint64), np.empty(R, np.uint64),
            np.empty(256, np.int64))


@njit(**_OPTS)
def sort_row(x, p, R, sR, desc, buf):
    """Stable sort of x[p + r*sR], r < R: sorted values in buf[0][:R], indices in buf[2][:R]."""
    kv, tv, ki, ti, ku, tu, cnt = buf
    if R < _RADIX_MIN:
        for r in range(R):
            kv[r] = x[p + r * sR]
            ki[r] = r
        msort(kv, ki, tv, ti, R, desc)
        return
    nbytes = x.itemsize
    flip = (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * nbytes)) if desc else np.uint64(0)
    for r in range(R):
        ku[r] = radix_key(x[p + r * sR]) ^ flip
        ki[r] = r
    radix(ku, ki, tu, ti, R, nbytes, cnt)
    for r in range(R):
        kv[r] = x[p + ki[r] * sR]


@njit(**_OPTS)
def _sort_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, buf):
    sort_row(x, o * sO + i * sI, R, sR, desc, buf)
    kv, ki = buf[0], buf[2]
    m = k - k0
    for r in range(m):
        q = (o * m + r) * I + i
        vals[q] = kv[k0 + r]
        inds[q] = ki[k0 + r]


@njit(**_OPTS)
def sort_s(x, O, R, I, sO, sR, sI, vals, inds, desc, k0, k):
    """Sort each row; write sorted positions k0..k-1 as an (O, k - k0, I) output."""
    buf = scratch(R, x)
    for o in range(O):
        for i in range(I):
            _sort_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, buf)


@njit(**_OPTS, parallel=True)
def sort_p(x, O, R, I, sO, sR, sI, vals, inds, desc, k0, k):
    for t in prange(O * I):
        o = t // I
        i = t - o * I
        _sort_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, scratch(R, x))


@njit(**_OPTS)
def _sift_down(hk, hi, i, n):
    """Max-heap on (key, index) pairs: move entry i down to its place."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and (hk[c + 1] > hk[c] or (hk[c + 1] == hk[c] and hi[c + 1] > hi[c])):
            c += 1
        if hk[c] > hk[i] or (hk[c] == hk[i] and hi[c] > hi[i]):
            hk[c], hk[i] = hk[i], hk[c]
            hi[c], hi[i] = hi[i], hi[c]
            i = c
        else:
            return


@njit(**_OPTS)
def _select_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, hk, hi):
    # the k first of the stable sort order, by a max-heap of the best k (key, index) pairs
    p = o * sO + i * sI
    flip = (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * x.itemsize)) if desc else np.uint64(0)
    n = 0
    for r in range(R):
        u = radix_key(x[p + r * sR]) ^ flip
        if n < k:
            hk[n] = u
            hi[n] = r
            n += 1
            if n == k:
                for j in range(k // 2 - 1, -1, -1):
                    _sift_down(hk, hi, j, k)
        elif u < hk[0]:  # a later index never beats an equal key
            hk[0] = u
            hi[0] = r
            _sift_down(hk, hi, 0, k)
    for e in range(k - 1, 0, -1):  # heap sort: ascending (key, index)
        hk[0], hk[e] = hk[e], hk[0]
        hi[0], hi[e] = hi[e], hi[0]
        _sift_down(hk, hi, 0, e)
    m = k - k0
    for r in range(m):
        q = (o * m + r) * I + i
        j = hi[k0 + r]
        vals[q] = x[p + j * sR]
        inds[q] = j


@njit(**_OPTS)
def select_s(x, O, R, I, sO, sR, sI, vals, inds, desc, k0, k):
    """Like ``sort_s`` for small k: positions k0..k-1 of each row's stable sort order."""
    hk = np.empty(max(k, 1), np.uint64)
    hi = np.empty(max(k, 1), np.int64)
    for o in range(O):
        for i in range(I):
            _select_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, hk, hi)


@njit(**_OPTS, parallel=True)
def select_p(x, O, R, I, sO, sR, sI, vals, inds, desc, k0, k):
    for t in prange(O * I):
        o = t // I
        i = t - o * I
        hk = np.empty(max(k, 1), np.uint64)
        hi = np.empty(max(k, 1), np.int64)
        _select_one(x, R, I, sO, sR, sI, vals, inds, desc, k0, k, o, i, hk, hi)


@njit(**_OPTS)
def _median_one(x, R, sO, sR, sI, I, vals, inds, ignore_nan, o, i, buf):
    sort_row(x, o * sO + i * sI, R, sR, False, buf)
    kv, ki = buf[0], buf[2]
    c = R  # number of non-nan values (nan sorts last)
    while c > 0 and kv[c - 1] != kv[c - 1]:
        c -= 1
    if ignore_nan:
        pos = (max(c, 1) - 1) // 2
    else:
        pos = (R - 1) // 2 if c == R else c  # median propagates the first nan
    vals[o * I + i] = kv[pos]
    inds[o * I + i] = ki[pos]


@njit(**_OPTS)
def median_s(x, O, R, I, sO, sR, sI, vals, inds, ignore_nan):
    """Lower median of each row (torch.median / nanmedian) with its index."""
    buf = scratch(R, x)
    for o in range(O):
        for i in range(I):
            _median_one(x, R, sO, sR, sI, I, vals, inds, ignore_nan, o, i, buf)


@njit(**_OPTS, parallel=True)
def median_p(x, O, R, I, sO, sR, sI, vals, inds, ignore_nan):
    for t in prange(O * I):
        o = t // I
        i = t - o * I
        _median_one(x, R, sO, sR, sI, I, vals, inds, ignore_nan, o, i, scratch(R, x))


@njit(**_OPTS)
def mode_s(x, O, R, I, sO, sR, sI, vals, inds):
    """Most frequent value of each row (the smallest on ties) and its last index."""
    buf = scratch(R, x)
    kv, ki = buf[0], buf[2]
    for o in range(O):
        for i in range(I):
            sort_row(x, o * sO + i * sI, R, sR, False, buf)
            best = 0
            best_n = 0
            s = 0
            while s < R:
                e = s + 1
                while e < R and kv[e] == kv[s]:
                    e += 1
                if e - s > best_n:
                    best_n = e - s
                    best = s
                s = e
            last = ki[best]
            for r in range(best, best + best_n):
                last = max(last, ki[r])
            vals[o * I + i] = kv[best]
            inds[o * I + i] = last


@njit(**_OPTS)
def argsort_flat(x, kv, ki):
    """kv, ki <- x sorted ascending (stable) and the permutation."""
    n = x.size
    buf = scratch(n, x)
    sort_row(x, 0, n, 1, False, buf)
    for r in range(n):
        kv[r] = buf[0][r]
        ki[r] = buf[2][r]


@njit(**_OPTS)
def unique_sorted(kv, ki, uniq, inv, cnt):
    """Runs of equal values in sorted ``kv``: values, each input's run id, run lengths.
    Returns the number of runs."""
    n = kv.size
    m = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and kv[e] == kv[s]:
            e += 1
        uniq[m] = kv[s]
        cnt[m] = e - s
        for r in range(s, e):
            inv[ki[r]] = m
        m += 1
        s = e
    return m


@njit(**_OPTS)
def unique_runs(x, uniq, inv, cnt):
    """Runs of equal neighbours in ``x`` (unique_consecutive); returns the number of runs."""
    n = x.size
    m = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and x[e] == x[s]:
            e += 1
        uniq[m] = x[s]
        cnt[m] = e - s
        for r in range(s, e):
            inv[r] = m
        m += 1
        s = e
    return m


@njit(**_OPTS)
def _rows_equal(rows, a, b):
    for c in range(rows.shape[1]):
        if rows[a, c] != rows[b, c]:
            return False
    return True


@njit(**_OPTS)
def unique_rows(rows, order, starts, inv, cnt, do_sort):
    """Unique rows of a 2-D array: ``order`` <- rows sorted lexicographically (stable sorts
    by column, last column first; identity when not ``do_sort``); runs of equal rows give
    ``starts`` (into order), each row's run id ``inv`` and run lengths ``cnt``. Returns the
    number of runs."""
    n, w = rows.shape
    for r in range(n):
        order[r] = r
    kv = np.empty(n, rows.dtype)
    tv = np.empty(n, rows.dtype)
    ki = np.empty(n, np.int64)
    ti = np.empty(n, np.int64)
    for c in range(w - 1 if do_sort else -1, -1, -1):
        for r in range(n):
            kv[r] = rows[order[r], c]
            ki[r] = order[r]
        msort(kv, ki, tv, ti, n, False)
        for r in range(n):
            order[r] = ki[r]
    m = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and _rows_equal(rows, order[s], order[e]):
            e += 1
        starts[m] = s
        cnt[m] = e - s
        for r in range(s, e):
            inv[order[r]] = m
        m += 1
        s = e
    return m


@njit(**_OPTS)
def take_rows(rows, order, starts, out):
    for u in range(starts.size):
        src = order[starts[u]]
        for c in range(rows.shape[1]):
            out[u, c] = rows[src, c]

