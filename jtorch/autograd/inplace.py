"""In-place ops on views: the write changes the base too, so the base's history is rebased.

``y = x.clone(); y[0].mul_(2)``: the node of ``mul_`` sees the view's old value; the base
``y`` gets a ``CopySlices`` node whose gradient is the incoming one with the view's region
replaced by what ``mul_``'s rule returns for it, and the view becomes an ``as_strided`` view
of the new base (torch's CopySlices, with the view geometry taken from the storage).
"""

from __future__ import annotations

from ..shape import elem_offset, elem_strides
from ..tensor import Tensor
from .node import Node, edge_of, make_node


def _geometry(t: Tensor) -> tuple:
    """(shape, element strides, storage offset) of ``t`` inside its storage."""
    a = t._a
    return a.shape, elem_strides(a), elem_offset(a, t._st) if a.size else 0


def _as_view_dtype(flat: Tensor, node) -> Tensor:
    """The flat base-dtype gradient storage read in the view's dtype where they differ
    (view_as_real / view_as_complex: a complex gradient and its (real, imag) pairs are the
    same numbers)."""
    import jtorch as J

    vd = node.view_dtype
    if vd is None or vd is flat.dtype:
        return flat
    if vd.is_complex:
        return J.view_as_complex(flat.reshape(-1, 2))
    return J.view_as_real(flat).reshape(-1)


def _storage_size(base: Tensor, view: Tensor) -> int:
    n = base._st.size
    return n + n % 2 if view.dtype.is_complex and not base.dtype.is_complex else n


class CopySlices(Node):
    """The base's node after an in-place op wrote through one of its views."""

    __slots__ = ("base_geom", "view_geom", "storage_size", "dtype", "view_dtype", "fn")

    def n_outputs(self) -> int:
        return 1

    def release(self) -> None:
        self.fn.release()

    def apply(self, grads: list) -> list:
        import jtorch as J

        g = grads[0]
        if g is None:
            return [None] * len(self._edges)
        flat = J.zeros(self.storage_size, dtype=self.dtype)
        gb = flat.as_strided(*self.base_geom)
        gb.copy_(g)
        gv = _as_view_dtype(flat, self).as_strided(*self.view_geom)
        res = self.fn.apply([gv.clone()])
        if res and res[0] is not None:
            gv.copy_(res[0])
        else:
            gv.zero_()
        return [gb, *res[1:]]


def record_view_inplace(op, inputs: tuple, out: Tensor, kw) -> None:
    """``out`` (= inputs[0]) is a view of ``out._base`` that ``op`` changed in place."""
    base = out._base
    fn = make_node(op, inputs, (out,), kw)
    cs = CopySlices()
    cs._edges = ((edge_of(base), True), *fn._edges[1:])
    cs.base_geom = _geometry(base)
    cs.view_geom = _geometry(out)
    cs.storage_size = _storage_size(base, out)
    cs.dtype = base.dtype
    cs.view_dtype = out.dtype if out.dtype is not base.dtype else None
    cs.fn = fn
    base.grad_fn, base._output_nr, base._requires_grad = cs, 0, True
    _rebase_view(out, base, cs)


class AsStridedBackward0(Node):
    """The node of a view whose base was rebased: the gradient lands in the view's region of
    a zero gradient for the base."""

    __slots__ = ("base_geom", "view_geom", "storage_size", "dtype", "view_dtype")

    def apply(self, grads: list) -> list:
        import jtorch as J

        g = grads[0]
        if g is None:
            return [None]
        flat = J.zeros(self.storage_size, dtype=self.dtype)
        _as_view_dtype(flat, self).as_strided(*self.view_geom).copy_(g)
        return [flat.as_strided(*self.base_geom)]


def _rebase_view(view: Tensor, base: Tensor, cs: CopySlices) -> None:
    """The view's history becomes: a view of the (new) base."""
    if view.dtype.category < 2:
        return
    v = AsStridedBackward0()
    v._edges = (((cs, 0), True),)
    v.base_geom, v.view_geom, v.storage_size, v.dtype = (cs.base_geom, cs.view_geom,
                                                         cs.storage_size, cs.dtype)
    v.view_dtype = cs.view_dtype
    view.grad_fn, view._output_nr, view._requires_grad = v, 0, True
