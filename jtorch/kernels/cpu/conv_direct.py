"""Direct float32 convolution with a register-blocked micro-kernel (oneDNN's scheme on AVX2).

With few channels (LeNet's 1->6 and 6->16, the demo CNN's planes) im2col costs as much as
the GEMM it feeds (the column matrix is C*K times the input), and with many BLAS runs these
GEMM shapes at 55-65% of a core. Here nothing is copied but each image, zero-padded into a
buffer of its thread: the micro-kernel holds a block of output channels (``vo`` vectors of
8) at ``pb`` output positions in vector registers, and for every tap (channel c, kernel
offset k) loads the weight vectors w[c, k, o-block] once and broadcasts each position's
input value x[c, pos + k] once: ``vo*pb`` FMAs per ``vo + pb`` loads. It reaches 60-85% of a
core's FMA peak from 16 channels on, about oneDNN's rate on these layers.

Numba has no vector types and LLVM's SLP vectoriser does not turn scalar accumulators into
vector registers, so the micro-kernel is written in LLVM IR (``_micro``): vector allocas
(promoted to registers), ``llvm.fma.v8f32``, broadcasts and a loop over the reduction with
unrolling off where it would spill. Three register shapes: 8 channels x 8 columns, 16 x 6
(8 and 12 of the 16 ymm registers; 32 x 3 spills) and 16 x 4 for small planes whose
positions 6 does not divide; all three are inlined into the same few kernels. On an AVX-512
target the forward and the weight gradient also have a 16-lane shape, 32 x 8 (16 of the 32 zmm
registers), for layers whose output channels per group are a multiple of 32, and the forward
16 x 8 where they are a multiple of 16. Full blocks
store straight-line (a test per store cost 20-40%); edge blocks test per lane, or go
through a buffer in two short loops (a few IR blocks, not one per store: compile time).

The one micro-kernel serves both passes, as ``sum_t x[a[u] + b[t]] * w[t, ch]``:

    forward         a = output positions (their first tap's offset), b = taps (channel and
                    kernel offsets), w = the weight blocked (taps, 8*vo): y[ch, pos]
    weight grad     a = taps, b = output positions of all the images, w = the output
                    gradient channels-last (positions, O): gW^T[tap, ch], summed over
                    blocks of positions that stay in cache

Layouts: ``xf`` the zero-padded input, flat per image (C*D'*H'*W'); ``pos[p]`` the flat
offset of output position p's first tap in it; ``off[t]`` that of tap t = (c, kd, kh, kw);
``wt`` (G, blocks, taps, ob) the weight with each block's output channels innermost (zero
past O/G); ``bias`` the same, zero-padded. The input gradient of a stride-1 convolution is a
forward pass with the flipped weight (``conv.py``).
"""

from __future__ import annotations

import contextlib
import types as types_

import numba
import numpy as np
from llvmlite import ir
from numba import prange
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from ..jit import njit
from .calls import external

_njit = njit(cache=True, nogil=True)
_inner = njit(cache=True, nogil=True, no_cpython_wrapper=True)  # called by kernels only
# inlined in Numba's IR: a linked callee is optimised again inside each caller's module (the
# micro-kernel dispatch and the forward's item, inlined: the first conv2d with empty caches
# 5.2 -> 3.9 s, with its weight gradient 4.8 -> 4.3 s, the 32 x 8 builds included)
_inline = njit(cache=True, nogil=True, inline="always")
_f32 = ir.FloatType()
_i32 = ir.IntType(32)


class _SelfRef:
    """A metadata operand that names the node holding it (loop metadata's first operand must
    be the node itself; llvmlite's nodes hash their operands, so it cannot hold itself)."""

    type = ir.MetaDataType()

    def __init__(self):
        self.node = None

    def get_reference(self):
        return self.node.get_reference()


@contextlib.contextmanager
def _counted_loop(builder, count, unroll: bool):
    """``for t in range(count)`` in IR, yielding t; ``unroll`` False turns LLVM's unrolling
    off: unrolled by two, the 12-accumulator loop no longer fits the 16 registers and spills
    (2x slower), while the 8-accumulator one gains from it."""
    intp = count.type
    pre = builder.basic_block
    cond = builder.append_basic_block("micro.cond")
    body = builder.append_basic_block("micro.body")
    end = builder.append_basic_block("micro.end")
    builder.branch(cond)
    builder.position_at_end(cond)
    t = builder.phi(intp)
    t.add_incoming(ir.Constant(intp, 0), pre)
    builder.cbranch(builder.icmp_signed("<", t, count), body, end)
    builder.position_at_end(body)
    yield t
    t.add_incoming(builder.add(t, ir.Constant(intp, 1)), builder.basic_block)
    back = builder.branch(cond)
    builder.position_at_end(end)
    if unroll:
        return
    module = builder.module
    ref = _SelfRef()
    off = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    ref.node = ir.values.MDValue(module, [ref, off], name=str(len(module.metadata)))
    back.set_metadata("llvm.loop", ref.node)


def _micro(vo: int, pb: int, lanes: int = 8, stores: str | None = None):
    """The micro-kernel intrinsic for ``vo`` vectors of ``lanes`` channels x ``pb`` columns:

        micro(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)

    sets, for columns u < na and channels ch < nch of the block,
    y[y0 + ch*cs + u*us] = init[i0 + u*iu + ch] + sum_{t < nb} w[w0 + t*ws + ch] *
    x[a[a0 + u] + b[t]]. ``a`` must hold pb entries from a0 on; full blocks with ``cs`` 1
    store whole accumulators. ``stores`` "across" (the forward: channels ``cs`` apart) or
    "vector" (the weight gradient: ``cs`` 1) compiles one way of storing a full block, and
    sends every partial block through the generic copy loop, with no per-lane tests (the wide
    blocks' layers have whole channel blocks): less code to compile."""

    @intrinsic
    def micro(typingctx, x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch):
        floats = (x, w, init, y)
        if not all(isinstance(t, types.Array) and t.dtype == types.float32 for t in floats):
            return None
        sig = types.void(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)

        def codegen(context, builder, sig, args):
            vty = ir.VectorType(_f32, lanes)
            tys = sig.args
            intp = context.get_value_type(types.intp)

            def arg(i):  # an array's data pointer, or an integer as intp
                if isinstance(tys[i], types.Array):
                    return make_array(tys[i])(context, builder, args[i]).data
                return context.cast(builder, args[i], tys[i], types.intp)

            (xp, ap, a0, bp, nb, wp, w0, ws, ip, i0, iu, yp, y0, cs, us, na,
             nch) = [arg(i) for i in range(17)]

            def const(v):
                return ir.Constant(intp, v)

            vptr = vty.as_pointer()
            fma = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(vty, [vty, vty, vty]), f"llvm.fma.v{lanes}f32")
            splat = ir.Constant(ir.VectorType(_i32, lanes), [0] * lanes)
            undef = ir.Constant(vty, ir.Undefined)

            def vptr_at(ptr, i):
                return builder.bitcast(builder.gep(ptr, [i]), vptr)

            acc = [[cgutils.alloca_once(builder, vty) for _ in range(pb)] for _ in range(vo)]
            for u in range(pb):
                iu_u = builder.add(i0, builder.mul(iu, const(u)))
                for v in range(vo):
                    builder.store(builder.load(vptr_at(ip, builder.add(iu_u, const(v * lanes))),
                                               align=4), acc[v][u])
            xu = [builder.gep(xp, [builder.load(builder.gep(ap, [builder.add(a0, const(u))]))])
                  for u in range(pb)]
            with _counted_loop(builder, nb, vo * pb <= 8) as t:
                bt = builder.load(builder.gep(bp, [t]))
                wrow = builder.add(w0, builder.mul(t, ws))
                wv = [builder.load(vptr_at(wp, builder.add(wrow, const(v * lanes))), align=4)
                      for v in range(vo)]
                for u in range(pb):
                    xs = builder.load(builder.gep(xu[u], [bt]))
                    xb = builder.shuffle_vector(
                        builder.insert_element(undef, xs, ir.Constant(_i32, 0)), undef, splat)
                    for v in range(vo):
                        builder.store(builder.call(fma, [wv[v], xb, builder.load(acc[v][u])]),
                                      acc[v][u])

            def dst(u, ch):
                u = const(u) if isinstance(u, int) else u
                return builder.add(y0, builder.add(builder.mul(ch, cs), builder.mul(u, us)))

            def store(u, v, lane):
                a = builder.load(acc[v][u])
                builder.store(builder.extract_element(a, ir.Constant(_i32, lane)),
                              builder.gep(yp, [dst(u, const(v * lanes + lane))]))

            full = builder.and_(builder.icmp_signed("==", na, const(pb)),
                                builder.icmp_signed("==", nch, const(vo * lanes)))
            with builder.if_else(full, likely=True) as (whole, part):
                with whole:  # every lane and column: no tests (branches here cost 20-40%)
                    def store_vectors():  # channels contiguous in y: one per accumulator
                        for v in range(vo):
                            for u in range(pb):
                                builder.store(builder.load(acc[v][u]),
                                              vptr_at(yp, dst(u, const(v * lanes))), align=4)

                    def store_across():  # (8x8 transposes and vector stores measured slower)
                        for v in range(vo):
                            for lane in range(lanes):
                                for u in range(pb):
                                    store(u, v, lane)

                    if stores == "vector":
                        store_vectors()
                    elif stores == "across":
                        store_across()
                    else:
                        unit = builder.icmp_signed("==", cs, const(1))
                        with builder.if_else(unit) as (vec, across):
                            with vec:
                                store_vectors()
                            with across:
                                store_across()
                with part:  # a block at the edge: through a buffer, in two short loops
                    buf = cgutils.alloca_once(builder, ir.ArrayType(vty, vo * pb))
                    for v in range(vo):
                        for u in range(pb):
                            builder.store(builder.load(acc[v][u]), builder.gep(
                                buf, [ir.Constant(_i32, 0), ir.Constant(_i32, v * pb + u)]))
                    flat = builder.bitcast(buf, _f32.as_pointer())

                    def copy(u, ch):  # y[u, ch] = buf[ch // lanes, u, ch % lanes]
                        v = builder.udiv(ch, const(lanes))
                        k = builder.add(builder.mul(builder.add(builder.mul(v, const(pb)), u),
                                                    const(lanes)),
                                        builder.urem(ch, const(lanes)))
                        builder.store(builder.load(builder.gep(flat, [k])),
                                      builder.gep(yp, [dst(u, ch)]))

                    def copy_all():
                        with cgutils.for_range(builder, na) as lu, \
                                cgutils.for_range(builder, nch) as lc:
                            copy(lu.index, lc.index)

                    if stores is not None:  # whole channel blocks: only columns run short
                        copy_all()
                    else:
                        all_cols = builder.icmp_signed("==", na, const(pb))
                        with builder.if_else(all_cols, likely=True) as (cols, edge):
                            with cols:  # part of the channels (LeNet's 6 of 8): per lane
                                for v in range(vo):
                                    for lane in range(lanes):
                                        ch = const(v * lanes + lane)
                                        with builder.if_then(builder.icmp_signed("<", ch, nch)):
                                            for u in range(pb):
                                                store(u, v, lane)
                            with edge:
                                copy_all()
            return context.get_dummy_value()

        return sig, codegen

    return micro


_micro_1x8 = _micro(1, 8)
_micro_2x6 = _micro(2, 6)
_micro_2x4 = _micro(2, 4)
# AVX-512's 32 registers: 32 x 8 of 16-lane vectors (16 zmm accumulators) where 32 divides
# O/G (``block_shape``), one build per pass (its way of storing). 64 x 6 (24 accumulators) was
# 3-5% faster on 64-channel layers but added 1.5 s to the forward's cold compile.
_micro_z2x8_fwd = _micro(2, 8, 16, "across")
_micro_z1x8_fwd = _micro(1, 8, 16, "across")  # the forward's 16 x 8, where 16 divides O/G
_micro_z2x8_wgt = _micro(2, 8, 16, "vector")


def _avx512() -> bool:
    """Whether Numba's target is this host with AVX-512F (a NUMBA_CPU_NAME or
    NUMBA_CPU_FEATURES that says otherwise is honoured)."""
    cfg = numba.config
    if cfg.CPU_FEATURES is not None:
        return "+avx512f" in cfg.CPU_FEATURES.split(",")
    if cfg.CPU_NAME not in (None, "host"):
        return False
    from llvmlite import binding as ll

    try:
        return bool(ll.get_host_cpu_features().get("avx512f"))
    except RuntimeError:
        return False


# The wide blocks (``_micro_z*``): 16-lane vectors need AVX-512's 32 registers; on an AVX2
# target LLVM would split each into two and spill
WIDE = _avx512()


def block_shape(og: int, n_pos: int = 0, weight: bool = False) -> tuple:
    """(output channels, columns) of a micro-kernel block for ``og`` channels per group and
    ``n_pos`` columns: 16 x 4 where 6 would leave a third of the last block empty on a small
    plane (the demo CNN's 4x4: 16 positions as 6 + 6 + 4). A forward pass (``n_pos`` given)
    on an AVX-512 target takes 32 x 8 where 32 divides O/G: with fewer loads per multiply-add
    it ran 1.25-1.4x faster than 16 x 6 on one thread and 1.1-1.35x on two (16->32 at 4x4,
    32->64 at 16x16 and 32x32, 64->64 and 64->128 at 56x56); the weight gradient's blocks
    (``weight``: taps x channels) the same way, 1.05-1.25x. Where only 16 divides O/G the
    forward takes 16 x 8 of one 16-lane vector: 1.15-1.3x (LeNet's 6->16, 1->16 at 28x28,
    3->16 at 32x32, 16->16 at 16x16, 48->48 at 20x20)."""
    if og <= 8:
        return 8, 8
    if (n_pos or weight) and WIDE and og % 32 == 0:
        return (32, 8)
    if n_pos and WIDE and og % 16 == 0:
        return (16, 8)
    return (16, 4) if 0 < n_pos <= 32 and n_pos % 6 and n_pos % 4 == 0 else (16, 6)


# int64 constants, not literals: a literal argument types a call site apart, and the forward's
# and the weight gradient's calls then compile the micro-kernels twice (0.5 s, cold)
_ZERO = np.int64(0)
_ONE = np.int64(1)


@_inline
def _micro_call(ob, pb, x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch):
    if ob == 8:
        _micro_1x8(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)
    elif pb == 6:
        _micro_2x6(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)
    else:
        _micro_2x4(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)


# the forward's entries: the 8-lane blocks' (``_micro_call``) and the 16-lane ones'
@_inline
def _micro_call_wide(ob, pb, x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na,
                     nch):
    if ob == 32:
        _micro_z2x8_fwd(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)
    else:
        _micro_z1x8_fwd(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)


def wide_forward(ob: int, pb: int) -> bool:
    """Whether the forward's block (ob x pb) is a 16-lane one (``forward_wide``)."""
    return ob == 32 or (ob == 16 and pb == 8)


def _variant(fn, name: str, decorator, **subs):
    """``fn`` (a jitted function) compiled again as ``name`` with the globals ``subs`` in
    place of its own: one source for kernels that differ only in the helpers they inline.
    Numba's disk cache keys a function by its qualified name, which ``name`` sets."""
    py = fn.py_func
    glob = dict(py.__globals__, **subs)
    f = types_.FunctionType(py.__code__, glob, name, py.__defaults__, py.__closure__)
    f.__qualname__ = name
    f.__doc__ = py.__doc__
    return decorator(f)


@_inline
def _micro_call_wgt(ob, pb, x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na,
                    nch):
    # the weight gradient's blocks: 32 x 8, 8 x 8 or 16 x 6 (``_weight_items``' pb), never
    # 16 x 4 (its build would add 0.2 s to the cold compile)
    if ob == 32:
        _micro_z2x8_wgt(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)
    elif ob == 8:
        _micro_1x8(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)
    else:
        _micro_2x6(x, a, a0, b, nb, w, w0, ws, init, i0, iu, y, y0, cs, us, na, nch)


# -- the padded input -------------------------------------------------------------------------

@_inline
def _pad_one(x, i, xp, pads):
    """xp (C, D', H', W') = x[i] (C, D, H, W) zero-padded at leading ``pads`` (flat indices:
    a slice per row costs more than a short row's copy). The indices are unsigned: a signed
    offset carried Numba's negative-index fix-up into every element and kept the row copy
    scalar (32 x 32 x 32 images 35 -> 5 us, LeNet's 6 x 12 x 12 1.2 -> 0.4 us)."""
    n_ch, d, h, w = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    dp, hp, wp = xp.shape[1], xp.shape[2], xp.shape[3]
    pd, ph, pw = pads
    src = x.reshape(-1)
    dst = xp.reshape(-1)
    dst[:] = 0
    s0 = i * n_ch * d * h * w
    for c in range(n_ch):
        for z in range(d):
            for r in range(h):
                so = np.uint64(s0 + ((c * d + z) * h + r) * w)
                do = np.uint64(((c * dp + z + pd) * hp + r + ph) * wp + pw)
                for q in range(w):
                    dst[do + np.uint64(q)] = src[so + np.uint64(q)]


# -- forward ----------------------------------------------------------------------------------

@_inline
def _forward_item(xp, pos, off, wt, bias, y, item, chunk, pb):
    """Work item (image i, group g, chunk of ``chunk`` output positions) from image i's padded
    input ``xp`` (C, D', H', W'): every block of output channels over the chunk (its input
    rows stay in cache across the blocks)."""
    n_g, n_ob, ntap, ob = wt.shape
    n_out = y.shape[1]
    og = n_out // n_g
    n_pos = y.shape[2] * y.shape[3] * y.shape[4]
    n_ch = (n_pos + chunk - 1) // chunk
    i = item // (n_g * n_ch)
    g = (item // n_ch) % n_g
    c0 = (item % n_ch) * chunk
    c1 = min(n_pos, c0 + chunk)
    x_img = xp.reshape(-1)[g * (xp.shape[0] // n_g) * xp[0].size:]
    yf = y.reshape(-1)
    wf = wt.reshape(-1)
    for b in range(n_ob):
        o0 = g * og + b * ob
        nch = min(ob, og - b * ob)
        w0 = ((g * n_ob + b) * ntap) * ob
        b0 = (g * n_ob + b) * ob
        y0 = (i * n_out + o0) * n_pos
        for p0 in range(c0, c1, pb):
            _micro_call(ob, pb, x_img, pos, p0, off, ntap, wf, w0, ob, bias, b0, _ZERO, yf,
                        y0 + p0, n_pos, _ONE, min(pb, c1 - p0), nch)


def forward_items(n: int, groups: int, n_pos: int, chunk: int) -> int:
    return n * groups * ((n_pos + chunk - 1) // chunk)


@_inline
def _items_per_image(wt, y, chunk):
    n_pos = y.shape[2] * y.shape[3] * y.shape[4]
    return wt.shape[0] * ((n_pos + chunk - 1) // chunk)


@_inner
def _forward_items(x, xp, pos, off, wt, bias, y, chunk, it0, it1, pads, pb):
    """Items it0 .. it1 in order, padding each image into ``xp`` (this thread's buffer, hot
    in cache) as its first item comes: no padded copy of the whole batch goes to memory."""
    per_img = _items_per_image(wt, y, chunk)
    last = -1
    for item in range(it0, it1):
        i = item // per_img
        if i != last:
            _pad_one(x, i, xp, pads)
            last = i
        _forward_item(xp, pos, off, wt, bias, y, item, chunk, pb)


# both entries call the items by symbol: the micro-kernel tree compiles once (2.5 s cold)
_forward_items_ext = external(_forward_items)
# The 16-lane blocks' items: a process compiles only the family its layers use (each micro-
# kernel adds 0.2-0.25 s to the items' cold compile; the demo CNN's two layers, both wide,
# 2.1-2.3 s for all five, 1.4 s for the two wide ones)
_forward_item_wide = _variant(_forward_item, "_forward_item_wide", _inline,
                              _micro_call=_micro_call_wide)
_forward_items_wide = _variant(_forward_items, "_forward_items_wide", _inner,
                               _forward_item=_forward_item_wide)


@_njit
def forward(x, xp, pos, off, wt, bias, y, chunk, n_items, pads, pb):
    """y (N, O, oD, oH, oW) = conv(x) + bias over the (image, group, position chunk) items;
    ``xp`` a padded image's buffer (C, D', H', W')."""
    _forward_items_ext(x, xp, pos, off, wt, bias, y, chunk, _ZERO, n_items, pads, pb)


@njit(cache=True, nogil=True, parallel=True)
def forward_par(x, xp, pos, off, wt, bias, y, chunk, n_items, pads, pb, nt):
    """``forward`` with the items split evenly over ``nt`` threads, each with its own padded
    image (``xp`` gives the shape)."""
    per = (n_items + nt - 1) // nt
    for t in prange(nt):
        mine = np.empty_like(xp)
        _forward_items_ext(x, mine, pos, off, wt, bias, y, chunk, t * per,
                           min(n_items, (t + 1) * per), pads, pb)


forward_wide = _variant(forward, "forward_wide", _njit,
                        _forward_items_ext=external(_forward_items_wide))
forward_par_wide = _variant(forward_par, "forward_par_wide",
                            njit(cache=True, nogil=True, parallel=True),
                            _forward_items_ext=external(_forward_items_wide))


# -- weight gradient --------------------------------------------------------------------------

@_inner
def _weight_items(xf, rows, off, gt, zero, gwt, it0, it1, n_g, ob, grp, r0, n_rows):
    """Work items it0 .. it1 (group g, block b of ob output channels, block of pb taps) of
    gW^T += the sums over position rows r0 .. r0+n_rows: ``rows[r]`` is the flat offset of
    row r's position (image r // L, position r % L) in the padded input ``xf`` (all images,
    one group's channels ``grp`` elements apart), ``gt`` (rows, O + pad) the output gradient
    channels-last, ``gwt`` (taps + pad, O + pad) the result; rows from 0 start from zero."""
    pb = 6 if ob == 16 else 8
    n_out = gwt.shape[1] - ob
    og = n_out // n_g
    n_ob = (og + ob - 1) // ob
    ntap = off.shape[0]
    n_tb = ntap // pb
    ws = gt.shape[1]
    gf = gt.reshape(-1)
    yf = gwt.reshape(-1)
    rr = rows[r0:]
    for item in range(it0, it1):
        g = item // (n_ob * n_tb)
        b = (item // n_tb) % n_ob
        t0 = (item % n_tb) * pb
        o0 = g * og + b * ob
        y0 = t0 * gwt.shape[1] + o0
        init, i0, iu = (zero, 0, 0) if r0 == 0 else (yf, y0, gwt.shape[1])
        _micro_call_wgt(ob, pb, xf[g * grp:], off, t0, rr, n_rows, gf, r0 * ws + o0, ws, init,
                        i0, iu, yf, y0, _ONE, gwt.shape[1], pb, min(ob, og - b * ob))


def weight_items(n_g: int, og: int, ob: int, taps: int) -> int:
    """Work items of a weight gradient (``taps`` padded to whole blocks)."""
    return n_g * ((og + ob - 1) // ob) * (taps // (6 if ob == 16 else 8))


@_njit
def weight(xf, rows, off, gt, zero, gwt, n_g, ob, grp, chunk, n_items):
    """gwt = gW^T of all the rows, ``chunk`` rows at a time (they stay in cache across the
    items)."""
    total = rows.shape[0]
    for r0 in range(0, total, chunk):
        _weight_items(xf, rows, off, gt, zero, gwt, np.int64(0), n_items, n_g, ob, grp, r0,
                      min(chunk, total - r0))  # (np.int64: weight_par's signature)


@njit(cache=True, nogil=True, parallel=True)
def weight_par(xf, rows, off, gt, zero, gwt, n_g, ob, grp, chunk, n_items, nt):
    """``weight`` with the items split evenly over ``nt`` threads (each sums its own items over
    all the rows, in order: the same sums on any number of threads)."""
    total = rows.shape[0]
    per = (n_items + nt - 1) // nt
    for t in prange(nt):
        for r0 in range(0, total, chunk):
            _weight_items(xf, rows, off, gt, zero, gwt, t * per, min(n_items, (t + 1) * per),
                          n_g, ob, grp, r0, min(chunk, total - r0))


# -- the weight, blocked -------------------------------------------------------------------

@_njit
def weight_blocks(w, bias, with_bias, wt, bt):
    """wt[g, b, (c, k), j] = w[g*O/G + b*OB + j, c, k] for w (O, C/G, K) and bt[g, b, j] the
    bias the same way, zero past O/G (and without a bias)."""
    n_g, n_ob, _, ob = wt.shape
    og = w.shape[0] // n_g
    kk = w.shape[2]
    wt[:] = 0
    bt[:] = 0
    for g in range(n_g):
        for b in range(n_ob):
            for j in range(min(ob, og - b * ob)):
                o = g * og + b * ob + j
                if with_bias:
                    bt[g, b, j] = bias[o]
                for c in range(w.shape[1]):
                    for k in range(kk):
                        wt[g, b, c * kk + k, j] = w[o, c, k]


# -- the plan's tables --------------------------------------------------------------------
# Positions, taps and rows are NumPy: ``conv._direct_tables`` builds them once per geometry,
# and each as a compiled loop cost 0.15-0.3 s of a cold process's first convolution.

def row_offsets(pos, n_img: int, n_pos: int, img: int) -> np.ndarray:
    """rows[i*L + p] = i*img + pos[p]: the flat offsets of every image's output positions."""
    return (np.arange(n_img, dtype=np.int64)[:, None] * img + pos[None, :n_pos]).reshape(-1)


def tap_offsets(cg: int, geo: tuple, padded: tuple, pb: int) -> np.ndarray:
    """off[(c, kd, kh, kw)] = flat offset of the tap in a padded image (planes ``padded``),
    padded to a multiple of ``pb`` entries with zeros."""
    kd, kh, kw, dd, dh, dw = geo[0], geo[1], geo[2], geo[9], geo[10], geo[11]
    dp, hp, wp = padded
    n = cg * kd * kh * kw
    off = np.zeros((n + pb - 1) // pb * pb, np.int64)
    off[:n] = _grid((cg, dp * hp * wp), (kd, dd * hp * wp), (kh, dh * wp), (kw, dw))
    return off


def positions(geo: tuple, padded: tuple, out_sp: tuple, pb: int) -> np.ndarray:
    """pos[p] = flat offset in a padded image of output position p's first tap (kernel offset
    0 of channel 0), padded to a multiple of ``pb`` entries with zeros."""
    sd, sh, sw = geo[3], geo[4], geo[5]
    hp, wp = padded[1], padded[2]
    n = out_sp[0] * out_sp[1] * out_sp[2]
    pos = np.zeros((n + pb - 1) // pb * pb, np.int64)
    pos[:n] = _grid((out_sp[0], sd * hp * wp), (out_sp[1], sh * wp), (out_sp[2], sw))
    return pos


def _grid(*axes) -> np.ndarray:
    """sum_d i_d * step_d over the C-ordered grid of ``(count, step)`` axes, flat."""
    total = np.zeros((), np.int64)
    for count, step in axes:
        total = total[..., None] + np.arange(count, dtype=np.int64) * step
    return total.reshape(-1)
