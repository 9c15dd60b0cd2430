"""Pointwise epilogues of matrix products and convolutions: ``mm``/``addmm``/``bmm`` or a
forward ``convolution`` and the chain of pointwise ops that alone reads its result, as one
call (convolutions: ``ConvEpilogueKernel``).

A linear layer's bias and activation (``addmm -> gelu``), a residual add, a scale: eager runs
the product, then one pass over the result per op (addmm's bias is a pass of its own too).
Here the epilogue is one generated pointwise kernel (``fusion``'s code generator on the chain,
addmm's ``beta * c + alpha * p`` spelled as ``mul``/``add`` lines): each line is the OpDef's
scalar with eager's dtype rules, so given the same product a fused result is eager's bit for
bit. A lone addmm is a group too: its bias is its epilogue.

The product: a 2-D one with enough rows is split by rows over Numba's threads, each thread
multiplying its rows with ``np.dot`` (BLAS held serial, one product per core) and running the
epilogue on them while they are in cache; the weight may be a transposed view (``linear``'s
``t(w)``: BLAS reads it with its transpose flag, no copy). BLAS's own pool never runs inside
the kernel, so Numba's and BLAS's pools do not alternate. Other products (bmm, few rows, one
thread, a strided left operand) are eager's (``matmul.bmm_into``), then the epilogue's
parallel pass. Measured on the GELU-MLP's first layer (x (512, 1024) @ w.T (1024, 4096) + b,
gelu, float32; 2 cores shared with other jobs, min of 5 rounds x 5 calls): torch eager 72 ms,
jtorch eager 100 ms; the whole product with BLAS's threads, then a parallel epilogue pass 92
ms; the row split 60 ms; one thread running row blocks of 256 / 128 / 64 rows (BLAS threaded
on each block, the epilogue on the block while hot) 88 / 128 / 200 ms, and the row split cut
into blocks of 128 / 64 rows per thread 102 / 92 ms against 64 ms whole (BLAS re-packs the
weight for every block). BLAS's threaded product waits on its threads' barriers when another
job holds a core; one serial product per core does not. Below ~32 rows per thread the split
stops paying (each thread packs the whole weight): 64 x 1024 x 1024 ran 1.1-1.2x slower split.

A group runs fused when no operand needs autograd (else its nodes run eagerly); the
epilogue's tensor operands must be row-major and broadcast to the result as ``fusion``'s
layouts (full, a bias row, a value per row, one value), else its ops run eagerly on the
product.
"""

from __future__ import annotations

import math
import operator

import numba
import numpy as np

from .. import _allocator, _flags, _threads, dispatch
from ..kernels import codegen
from ..kernels.defs.conv import convolution_op
from ..kernels.registry import REGISTRY, OpDef
from ..kernels.source import fingerprint, load
from ..tensor import Tensor
from . import fusion, logs
from .config import config
from .graph import Graph, Node
from .graph_module import subgraph_module

_PRODUCTS = frozenset(["mm", "addmm", "bmm"])
_CONV = convolution_op
_CONV_KW = frozenset(["stride", "padding", "dilation", "groups", "nd", "transposed"])
_BLAS = (np.dtype(np.float32), np.dtype(np.float64))
_NDARRAY = np.ndarray
_F16 = np.dtype(np.float16)
_mk = None  # kernels.cpu.matmul, imported at the first product (_matmul)


def _matmul():
    """``kernels.cpu.matmul``, imported at the first product, as the registry's product
    entries are (``kernels/defs/linalg.py``)."""
    global _mk
    if _mk is None:
        from ..kernels.cpu import matmul

        _mk = matmul
    return _mk


def fuse_epilogues(graph: Graph) -> Graph:
    """A copy of ``graph`` where each product whose result only a chain of pointwise ops reads
    is one call of an ``EpilogueKernel`` with them (its outputs taken with getitem); ``graph``
    itself when there is none."""
    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    groups, taken = [], {}  # member -> where its group's call stands (its last member)
    for n in nodes:
        if n in taken:
            continue
        g = _group(n, nodes)
        if g is None or any(m in taken for m in g[0]) or _read_early(g[0], nodes, pos):
            continue  # (a member of two groups: ``a @ b - c @ d``'s sub, taken by the first)
        at = pos[g[0][-1]]
        # a value of another group must exist by this group's call (both stand at their last
        # member: the other's must come first)
        if any(taken.get(a, -1) > at for m in g[0] for a in m.all_input_nodes if a not in g[0]):
            continue
        # and a group already formed that reads this one's values must stand after it
        if any(-1 < taken.get(u, -1) < at for m in g[0] for u in m.users if u not in g[0]):
            continue
        groups.append(g)
        taken.update(dict.fromkeys(g[0], at))
    if not groups:
        return graph
    last = {g[0][-1]: g for g in groups}
    g2 = Graph()
    env: dict = {}
    for n in nodes:
        if n not in taken:
            env[n] = g2.node_copy(n, lambda a: env[a])
            continue
        if n not in last:  # the call stands where the group's last node stood
            continue
        cls = ConvEpilogueKernel if _conv(last[n][0][0]) else EpilogueKernel
        kernel = cls(*last[n], nodes)
        call = g2.call_function(kernel, tuple(env[a] for a in kernel.ins))
        call.meta["val"] = tuple(o.meta["val"] for o in kernel.outs)
        for k, o in enumerate(kernel.outs):
            get = g2.call_function(operator.getitem, (call, k))
            get.meta["val"] = o.meta["val"]
            env[o] = get
    g2.symbols = [(s, env[p], d) for s, p, d in graph.symbols if p in env]
    g2.lint()
    return g2


def _read_early(members: list, nodes: list, pos: dict) -> bool:
    """Whether a node between the group's first and last member, outside it, reads a member:
    the group's call stands where its last member stood, after that reader."""
    ms = set(members)
    lo, hi = pos[members[0]], pos[members[-1]]
    return any(a in ms for n in nodes[lo + 1:hi] if n not in ms for a in n.all_input_nodes)


# -- scheduling ----------------------------------------------------------------------------

def _val(n):
    v = n.meta.get("val") if isinstance(n, Node) else None
    return v if isinstance(v, Tensor) else None


def _product(n: Node) -> bool:
    """A BLAS product (float32/float64) of tensors, addmm's scalars plain numbers, alpha != 0
    (eager then skips the product: not worth a kernel)."""
    t = n.target
    if n.op != "call_function" or not isinstance(t, OpDef) or t.name not in _PRODUCTS or \
            REGISTRY.get(t.name) is not t:
        return False
    if n.meta.get("mutates") or "grad_enabled" in n.meta:
        return False
    val = _val(n)
    if val is None or val.dtype.np not in _BLAS or not all(_val(a) is not None for a in n.args):
        return False
    if t.name != "addmm":
        return not n.kwargs
    kw = n.kwargs
    if set(kw) - {"beta", "alpha"}:
        return False
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    return type(beta) in (int, float) and type(alpha) in (int, float) and alpha != 0


def _conv(n: Node) -> bool:
    """A forward convolution (float32/float64) of tensors, with the user's arguments only (the
    gradient rules' normalised ones and transposed convolutions stay eager's)."""
    t = n.target
    if n.op != "call_function" or t is not _CONV or n.meta.get("mutates") or \
            "grad_enabled" in n.meta:
        return False
    if set(n.kwargs) - _CONV_KW or n.kwargs.get("transposed", False) is not False:
        return False
    val, (x, w, b) = _val(n), n.args
    return val is not None and val.dtype.np in _BLAS and _val(x) is not None and \
        _val(w) is not None and (b is None or _val(b) is not None)


def _view_of(p: Node, v: Node) -> bool:
    """``v`` reshapes the product ``p`` (same size; for addmm, only unfolding its rows, with a
    bias the same for every row: then the bias broadcasts to the view as it did to ``p``)."""
    t = v.target
    if v.op != "call_function" or not isinstance(t, OpDef) or t.name != "view" or \
            v.args != (p,) or set(v.kwargs) - {"shape", "reshape"} or "grad_enabled" in v.meta:
        return False
    if not all(type(d) is int for d in v.kwargs.get("shape", (None,))):
        return False  # a size that varies between calls: the kernel keeps the view's shape
    pv, vv = _val(p), _val(v)
    if vv is None or vv.dtype is not pv.dtype or math.prod(vv.shape) != math.prod(pv.shape):
        return False
    if p.target.name != "addmm":
        return True
    c = tuple(_val(p.args[0]).shape)
    return len(vv.shape) > 0 and vv.shape[-1] == pv.shape[-1] and all(d == 1 for d in c[:-1])


def _group(p: Node, nodes: list):
    """([product, view?, *chain], the chain's head value) for a product whose result (or a
    view of it) only a run of pointwise ops over its shape reads; else None."""
    conv = _conv(p)
    if not (conv or _product(p)) or not p.users:
        return None
    head = p
    u = next(iter(p.users))
    if not conv and len(p.users) == 1 and _view_of(p, u):
        head = u
    shape = tuple(_val(head).shape)
    cur = {p, head}
    chain: list = []
    for n in nodes[nodes.index(head) + 1:]:
        if n.op == "output":
            break
        if not any(a in cur for a in n.all_input_nodes):
            if n.op in ("placeholder", "get_attr") or \
                    n.op == "call_function" and not n.meta.get("mutates"):
                continue  # an unrelated node between: stays before the call
            break  # one that writes memory: the product must not move past it
        if not fusion._pointwise(n) or tuple(n.meta["val"].shape) != shape:
            break
        chain.append(n)
        cur.add(n)
    # addmm's own epilogue (its bias) is a line of the kernel: its result may be read anywhere;
    # alone, it pays only where the product is split over the threads
    lines = p.target.name == "addmm" and _lines(p)
    if not (chain or lines and _splits(p)) or not (lines or all(x in cur for x in head.users)):
        return None
    return [p, *([head] if head is not p else []), *chain], head


def _splits(p: Node) -> bool:
    """Whether the product is large enough for the row split on two threads (sizes known)."""
    (m, k), n = _val(p.args[1]).shape, _val(p.args[2]).shape[1]
    if not all(type(d) is int for d in (m, k, n)):
        return False
    return m >= 2 * _MIN_ROWS and (m * n * k >> 5) >= _flags.GRAIN_SIZE


def _lines(p: Node) -> bool:
    """Whether addmm's scaled sum is more than the product (beta != 0 or alpha != 1)."""
    return p.kwargs.get("beta", 1) != 0 or p.kwargs.get("alpha", 1) != 1


# -- the kernel ------------------------------------------------------------------------------

class EpilogueKernel:
    """A product and its pointwise epilogue: call it with ``ins`` (the product's operands,
    then the epilogue's); it returns the values of the group read after it (``outs``).
    ``source_for(kinds)`` is its generated module for the epilogue operands' layouts."""

    _PREFIX = "jt_epilogue"  # its generated modules' names

    def __init__(self, group: list, head: Node, nodes: list) -> None:
        p = group[0]
        gs = set(group)
        later = nodes[nodes.index(group[-1]) + 1:]
        self.outs = [n for n in group if (n is not p or head is p) and (
            any(u not in gs for u in n.users) or
            any(n in u.all_input_nodes for u in later if u.op == "output"))]
        # the product's operands one per argument (``a @ a`` takes a twice), then the epilogue's
        self.ins: list = [a for a in p.args if isinstance(a, Node)]
        for n in group[1:]:
            for a in n.args:
                if isinstance(a, Node) and a not in gs and a not in self.ins:
                    self.ins.append(a)
        self.names = [n.name for n in group]
        self.__name__ = "epilogue_" + "_".join(self.names)[:60]
        self._mat = 1 if p.target.name == "addmm" else 0  # where the product's operands are
        self._view = tuple(_val(head).shape) if head is not p else None
        chain = [n for n in group[1:] if n is not head]
        # the epilogue's pointwise kernel, the sources of its operands (None: the product, an
        # int: that argument of the call, (v,): a Python scalar v) and its tensor operands
        self._fused, self._feed = _epilogue_kernel(p, head, chain, self.outs, self.ins)
        self._tensors = [j for j, f in enumerate(self._feed)
                         if f is None or type(f) is int and _val(self.ins[f]) is not None]
        self._mods: dict = {}  # (operand layouts, split) -> the loaded module
        self._layouts: dict = {}  # operand shapes -> fusion._layout's answer
        # the group's nodes, run one by one when an operand needs autograd
        self._eager = subgraph_module(group, self.ins, self.outs)

    @property
    def source(self) -> str:
        """The module for epilogue operands that all have the result's shape."""
        return self.source_for("f" * len(self._tensors))

    def source_for(self, kinds: str, rows: bool = True) -> str:
        """``fusion``'s kernel for the epilogue (layouts ``kinds``) and ``gemm_epilogue``: the
        product's rows split over the threads, each thread's rows multiplied (``np.dot``,
        BLAS serial) and their epilogue run while they are in cache. ``rows``: the epilogue
        kernel's rows are the product's (else it has one long row)."""
        nout, nin = len(self.outs), len(self._feed)
        sig = ", ".join([f"out{j}" for j in range(nout)] + [f"in{j}" for j in range(nin)])
        span = "lo, hi, 0, n, n" if rows else "0, 1, lo * n, hi * n, m * n"
        return "\n".join([
            fusion.kernel_source(self._fused.template, kinds),
            f"# the product {', '.join(self.names[:1])}: rows split over the threads",
            codegen.NJIT_PARALLEL,
            f"def gemm_epilogue(a, b, p, {sig}, m, n, nt):",
            "    for c in prange(nt):",
            "        lo = c * m // nt",
            "        hi = (c + 1) * m // nt",
            "        np.dot(a[lo:hi], b, p[lo:hi])",
            f"        _call({sig}, {span})",
            ""])

    def _module(self, kinds: str, variant):
        """The loaded kernel module for operand layouts ``kinds`` and a ``variant`` of it."""
        mod = self._mods.get((kinds, variant))
        if mod is None:
            src = self.source_for(kinds, variant)
            mod = self._mods[kinds, variant] = load(self._PREFIX, src)
            logs.log("kernels", f"{self.__name__} ({mod.__file__}):\n{src}")
        return mod

    def __call__(self, *args):
        """Fused when no operand needs autograd (else the group's nodes, eagerly). A large 2-D
        product with a row-major left operand, epilogue operands that fit ``fusion``'s layouts
        and a split the rows follow runs ``gemm_epilogue``; else eager's product, then the
        epilogue's kernel over it."""
        if dispatch.grad_state.enabled and any(
                isinstance(a, Tensor) and a._requires_grad for a in args):
            return self._eager(*args)
        x, y = args[self._mat], args[self._mat + 1]
        a, b = x._a, y._a
        if a.__class__ is not _NDARRAY or b.__class__ is not _NDARRAY or a.dtype not in _BLAS \
                or b.dtype is not a.dtype:
            return self._eager(*args)
        if a.ndim == 2:
            m, k, n = a.shape[0], a.shape[1], b.shape[1]
            # the split pays from ~4M multiply-adds (as bmm_into's batch split) and enough rows
            if config.gemm_row_split and n and k and a.flags.c_contiguous and \
                    (b.flags.c_contiguous or b.flags.f_contiguous) and \
                    _threads.use_parallel(m * n * k >> 5) and _threads.serial_blas.available() \
                    and m >= _MIN_ROWS * numba.get_num_threads():
                res = self._split(args, a, b, m, n)
                if res is not None:
                    return res
            prod = _allocator.empty((m, n), a.dtype)
            _matmul().bmm_into(a[None], b[None], prod[None])
        else:
            prod = _allocator.empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype)
            _matmul().bmm_into(a, b, prod)
        if self._view is not None:
            prod = prod.reshape(self._view)
        p = Tensor._make(prod, None, x.dtype)
        return self._fused(*[p if f is None else args[f] if type(f) is int else f[0]
                             for f in self._feed])

    def _split(self, args, a, b, m: int, n: int):
        """``gemm_epilogue``'s outputs, or None when an epilogue operand does not fit it."""
        flat = [None if f is None else args[f] if type(f) is int else f[0] for f in self._feed]
        shapes = []
        for j in self._tensors:
            if flat[j] is None:
                shapes.append(self._view or (m, n))
                continue
            arr = flat[j]._a
            if arr.__class__ is not _NDARRAY or not arr.flags.c_contiguous or arr.dtype is _F16:
                return None
            shapes.append(arr.shape)
            flat[j] = arr if arr.ndim == 1 else arr.reshape(-1)
        key = tuple(shapes)
        lay = self._layouts.get(key)
        if lay is None:
            if len(self._layouts) > 256:
                self._layouts.clear()
            lay = self._layouts[key] = fusion._layout(shapes)
        shape, rows, inner, kinds = lay or (None, 0, 0, "")
        if shape != (self._view or (m, n)) or not (rows == 1 or inner == n):
            return None  # no layout fits, or its rows are not the product's
        mod = self._mods.get((kinds, rows > 1)) or self._module(kinds, rows > 1)
        prod = _allocator.empty((m, n), a.dtype)
        flat[self._feed.index(None)] = prod.reshape(-1)
        outs = [_allocator.empty(shape, d.np) for d in self._fused.out_dtypes]
        with _threads.serial_blas():
            mod.gemm_epilogue(a, b, prod, *[o.reshape(-1) for o in outs], *flat, m, n,
                              numba.get_num_threads())
        return tuple([Tensor._make(o, None, d) for o, d in zip(outs, self._fused.out_dtypes)])

    def __repr__(self) -> str:
        return f"EpilogueKernel({', '.join(self.names)})"


class ConvEpilogueKernel(EpilogueKernel):
    """A forward convolution and its pointwise epilogue: call it with ``ins`` (input, weight,
    bias?, then the epilogue's operands); it returns ``outs``.

    Where eager convolves image by image over Numba's threads (``conv._conv_per_image``), the
    generated ``conv_epilogue`` does the same (eager's ``_conv_image_into``: im2col and the
    group GEMMs, BLAS serial in each thread, then the channel bias) into a scratch image of its
    thread, and runs the epilogue's lines on that image while it is in cache: the convolution's
    output never reaches memory. Per image the result is (O, L): an operand with one value
    per channel ((C, 1, 1), an inference batch norm's scale) is a value per row there, a full
    (N, O, *sp) operand is that image's rows. Elsewhere (small planes, one image, too little
    work), eager's convolution, then the epilogue's pass. What it saves is that pass's trip
    through memory: at N=64, 32->64 channels, 32x32, 3x3, relu (float32, 2 cores shared with
    another job) it ran 0.92-0.97x the time of eager's convolution plus the fused relu pass
    (about 30 ms, torch 17 ms: the convolution itself dominates); a 1x1 convolution 0.95x."""

    _PREFIX = "jt_conv_epilogue"

    def __init__(self, group: list, head: Node, nodes: list) -> None:
        super().__init__(group, head, nodes)
        p = group[0]
        self._kw = dict(p.kwargs)
        self._kw.pop("transposed", None)
        self._bias = p.args[2] is not None
        self._plans: dict = {}  # per-image operand shapes -> (layouts, varies, rows, inner)

    def source_for(self, kinds: str, varies: str = "") -> str:
        """``fusion``'s kernel for the epilogue (layouts ``kinds`` over one image's (O, L)
        result) and ``conv_epilogue``: images split over the threads, each convolved into its
        thread's scratch image, then its epilogue. ``varies``: per tensor operand, 1 where it
        has one slice per image (indexed ``[i]``), 0 where every image reads all of it."""
        per = dict(zip(self._tensors, varies or "1" * len(self._tensors)))
        nout, nin = len(self.outs), len(self._feed)
        outs = [f"out{j}" for j in range(nout)]
        ins = [f"in{j}" for j in range(nin) if self._feed[j] is not None]
        sig = ", ".join(outs + ins)
        feed = [f"out{j}[i]" for j in range(nout)] + [
            "p.reshape(-1)" if self._feed[j] is None else
            f"in{j}[i]" if per.get(j) == "1" else f"in{j}" for j in range(nin)]
        return "\n".join([
            fusion.kernel_source(self._fused.template, kinds),
            f"# the convolution {self.names[0]}: images split over the threads",
            f"# conv sources {fingerprint(_conv_kernels()[0].conv_images)[:16]}",
            "from jtorch.kernels.cpu.conv import _conv_image_into",
            "",
            codegen.NJIT,
            f"def _image(x, w3, bias, with_bias, geo, tab, buf, p, i, {sig}, rows, inner):",
            "    _conv_image_into(x, w3, bias, with_bias, p, geo, tab, buf, i)",
            f"    _call({', '.join(feed)}, 0, rows, 0, inner, inner)",
            "",
            codegen.NJIT_PARALLEL,
            f"def conv_epilogue(x, w3, bias, with_bias, geo, tab, buf, prod, {sig}, rows, inner, nt):",
            "    n_img = x.shape[0]",
            "    per = (n_img + nt - 1) // nt",
            "    for t in prange(nt):",
            "        mine = np.empty_like(buf)",
            "        p = np.empty_like(prod)",
            "        for i in range(t * per, min(n_img, (t + 1) * per)):",
            f"            _image(x, w3, bias, with_bias, geo, tab, mine, p, i, {sig}, rows, inner)",
            ""])

    def __call__(self, *args):
        """Fused where eager convolves per image in parallel and the epilogue's operands fit
        one image's layouts; else eager's convolution then the epilogue's kernel, or the
        group's nodes eagerly (gradients, float16, other arrays)."""
        if dispatch.grad_state.enabled and any(
                isinstance(a, Tensor) and a._requires_grad for a in args):
            return self._eager(*args)
        x, w = args[0], args[1]
        b = args[2] if self._bias else None
        xa, wa = x._a, w._a
        if xa.__class__ is not _NDARRAY or wa.__class__ is not _NDARRAY or \
                xa.dtype not in _BLAS or wa.dtype is not xa.dtype or \
                b is not None and (b._a.__class__ is not _NDARRAY or b._a.dtype is not xa.dtype):
            return self._eager(*args)
        plan = convolution_op.meta(x, w, b, **self._kw)  # torch's checks, as eager's call
        if plan.device.type != "cpu":
            return self._eager(*args)
        res = self._fused_call(args, plan, xa, wa, b)
        if res is not None:
            return res
        prod = convolution_op.kernels["cpu"](plan, x, w, b)
        return self._fused(*[prod if f is None else args[f] if type(f) is int else f[0]
                             for f in self._feed])

    def _fused_call(self, args, plan, xa, wa, b):
        """``conv_epilogue``'s outputs, or None where eager would not convolve per image in
        parallel or an epilogue operand does not fit one image's layouts."""
        kw = plan.kw
        _ck, _ce = _conv_kernels()
        stride, padding, dilation, groups, size = _ce._geo3(
            kw["stride"], kw["padding"], kw["dilation"], kw["groups"], kw["size"])
        n, c, o = xa.shape[0], xa.shape[1], wa.shape[0]
        kk, ll = math.prod(wa.shape[2:]), math.prod(size)
        if not (n > 1 and o and ll and c * kk) or \
                not _ck._per_image(ll, o // groups * (c // groups) * kk * ll):
            return None
        in_sp = (1,) * (5 - xa.ndim) + xa.shape[2:]
        if _ck._strategy("forward", xa.dtype, c, o, groups, (1,) * (5 - wa.ndim) + wa.shape[2:],
                         stride, dilation, in_sp, size) != "im2col":
            return None  # eager's direct or Winograd kernel beats per-image GEMMs
        shape = plan.out.shape
        flat = [None if f is None else args[f] if type(f) is int else f[0] for f in self._feed]
        shapes = []
        for j in self._tensors:
            if flat[j] is None:  # the convolution's result
                shapes.append(shape)
                continue
            arr = flat[j]._a
            if arr.__class__ is not _NDARRAY or not arr.flags.c_contiguous or arr.dtype is _F16:
                return None
            shapes.append(arr.shape)
        key = tuple(shapes)
        lay = self._plans.get(key)
        if lay is None:
            if len(self._plans) > 256:
                self._plans.clear()
            lay = self._plans[key] = _image_layout(shape, shapes)
        if not lay:
            return None
        kinds, varies, rows, inner = lay
        for j, v in zip(self._tensors, varies):
            if flat[j] is None:
                continue
            arr = flat[j]._a
            flat[j] = arr.reshape(n, -1) if v == "1" else arr.reshape(-1)
        x5 = _ce._as5d(xa)
        w5 = _ce._as5d(wa)
        geo = _ck._geom(w5.shape[2:], stride, padding, dilation)
        if not _threads.use_parallel(c * kk * ll * n):  # eager's test: its column buffers' size
            return None
        buf, tab = _ck._image_buffer(x5, c * kk, size, geo)
        w3 = w5.reshape(groups, o // groups, -1)
        bias = np.empty(0, xa.dtype) if b is None else np.ascontiguousarray(b._a)
        outs = [_allocator.empty(shape, d.np) for d in self._fused.out_dtypes]
        mod = self._mods.get((kinds, varies)) or self._module(kinds, varies)
        del flat[self._feed.index(None)]
        with _threads.serial_blas():
            mod.conv_epilogue(x5, w3, bias, b is not None, geo, tab, buf,
                              np.empty((o, ll), xa.dtype), *[a.reshape(n, -1) for a in outs],
                              *flat, rows, inner, numba.get_num_threads())
        return tuple([Tensor._make(a, None, d) for a, d in zip(outs, self._fused.out_dtypes)])

    def __repr__(self) -> str:
        return f"ConvEpilogueKernel({', '.join(self.names)})"


def _conv_kernels():
    """(kernels.cpu.conv, kernels.cpu.conv_entries): imported when a convolution's epilogue is
    first compiled, not with jtorch (tests/test_import_time.py)."""
    from ..kernels.cpu import conv, conv_entries

    return conv, conv_entries


def _image_layout(shape: tuple, shapes: list):
    """(layouts, varies, rows, inner) of the epilogue's tensor operands over one image's
    result: ``shape`` is the whole (N, O, *sp) result, ``shapes`` the operands' (the result's
    own among them). An operand varies per image where it has the batch dim (N > 1); its
    image's slice, or all of it, must fit ``fusion``'s layouts over (O, *sp); else None."""
    nd, n = len(shape), shape[0]
    per, varies = [], ""
    for s in shapes:
        if len(s) > nd:
            return None
        s = (1,) * (nd - len(s)) + tuple(s)
        if s[0] not in (1, n):
            return None
        per.append(s[1:])
        varies += "1" if s[0] == n and n > 1 else "0"
    lay = fusion._layout(per)
    if lay is None or lay[0] != tuple(shape[1:]):
        return None
    _, rows, inner, kinds = lay
    return kinds, varies, rows, inner


# rows per thread from which the row split pays (each thread packs the whole right operand)
_MIN_ROWS = 32


def _epilogue_kernel(p: Node, head: Node, chain: list, outs: list, ins: list):
    """(FusedKernel of the epilogue, its operands' sources): the chain copied into a graph of
    its own that reads the product as an input, addmm's scaled sum as its first lines. A source
    is None for the product, an index into ``ins``, or (a Python scalar,)."""
    g = Graph()
    env: dict = {}
    src: dict = {}
    lines: list = []

    def ph(name: str, val, source) -> Node:
        n = g.placeholder(name)
        n.meta["val"] = val
        src[n] = source
        return n

    def line(op: str, args: tuple, val) -> Node:  # named after the product in the header
        n = g.create_node("call_function", REGISTRY[op], args, name=p.name)
        n.meta["val"] = val
        lines.append(n)
        return n

    hv = _val(head)
    x = ph("product", hv, None)
    if p.target.name == "addmm":  # eager's epilogue: beta * c + alpha * p (beta 0 drops c)
        beta, alpha = p.kwargs.get("beta", 1), p.kwargs.get("alpha", 1)
        if alpha != 1:
            x = line("mul", (x, alpha), hv)
        if beta != 0:
            c = ph("bias", _val(p.args[0]), ins.index(p.args[0]))
            if beta != 1:
                c = line("mul", (c, beta), _val(p.args[0]))
            x = line("add", (x, c), hv)
    env[head] = x
    for n in chain:
        for a in n.args:
            if isinstance(a, Node) and a not in env:
                env[a] = ph(f"in_{a.name}", a.meta.get("val"), ins.index(a))
        env[n] = g.node_copy(n, lambda a: env[a])
        lines.append(env[n])
    g.output(tuple(env[o] for o in outs))
    kernel, kins, kouts = fusion._build(lines, list(g.nodes))
    if kouts != [env[o] for o in outs]:
        raise AssertionError(f"epilogue outputs {kouts} != {outs}")
    return kernel, [src[a] if isinstance(a, Node) else (a,) for a in kins]
