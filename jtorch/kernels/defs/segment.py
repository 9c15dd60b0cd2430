"""segment_reduce: reductions over consecutive segments of one axis, given by lengths or
offsets (torch.segment_reduce), with torch's backward. The public function
(``ops/segment.py``) checks the arguments and the lengths' values; these records take the data
and the int32/int64 lengths or offsets (shape ``data.shape[:axis] + (S,)``, or ``S + 1``
offsets) and run ``kernels/cpu/segment.py``.
"""

from __future__ import annotations

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device
from ..registry import defvjp, op
from ._lazy import lazy

_K = "jtorch.kernels.cpu.segment"  # imported at the first call (_lazy.py)
_FLOATS = (_dt.float16, _dt.float32, _dt.float64)


def _segment_meta(data, seg, *, reduce: str, kind: str, axis: int, initial=None) -> Plan:
    dev = common_device(data, seg)
    if seg.dtype not in (_dt.int32, _dt.int64):
        raise NotImplementedError(f"\"_segment_reduce_{kind}_cpu_kernel1\" not implemented for "
                                  f"'{dispatch.torch_name(seg.dtype)}'")
    d = data.dtype
    if d not in _FLOATS and not (d.is_floating_point and d.itemsize == 2):
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{dispatch.torch_name(d)}'")
    shape, sshape = data._a.shape, seg._a.shape
    count = max(sshape[-1] - (kind == "offsets"), 0)
    if tuple(sshape[:-1]) != tuple(shape[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected {kind} of shape "
                           f"{list(shape[:axis])} + [num_segments], but got {list(sshape)}")
    out = Out((*shape[:axis], count, *shape[axis + 1:]), d)
    return Plan(out, {"reduce": reduce, "kind": kind, "axis": axis, "initial": initial}, dev)


def _segment_backward_meta(grad, output, data, seg, *, reduce: str, kind: str, axis: int,
                           initial=None) -> Plan:
    return Plan(Out(data._a.shape, data.dtype),
                {"reduce": reduce, "kind": kind, "axis": axis, "initial": initial},
                common_device(grad, output, data, seg))


def _segment_vjp(c, g):
    data, seg = c.args
    return dispatch.call(segment_reduce_backward_op, g, c.out, data, seg, **c.kw), None


# (data, lengths or offsets) -> (*data.shape[:axis], S, *data.shape[axis + 1:])
#   {reduce in sum/mean/max/min/prod, kind "lengths" or "offsets", axis, initial (or None)}
segment_reduce_op = op("segment_reduce", "extern", _segment_meta, lazy(_K, "segment_reduce_cpu"))
# (grad, output, data, lengths or offsets) -> grad data (the same kw); no derivative of its
# own, as in torch
segment_reduce_backward_op = op("_segment_reduce_backward", "extern", _segment_backward_meta,
                                lazy(_K, "segment_reduce_backward_cpu"), differentiable=False)
defvjp(segment_reduce_op, _segment_vjp, "01o", name="SegmentReduceBackward0")
