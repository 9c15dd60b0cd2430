"""Movement and indexing ops: views (no kernel: new shape/strides/offset over the same
storage), copying movement ops (cat, flip, roll, repeat, tril/triu: ``kernels/cpu/movement``)
and index ops (gather/scatter family, index_put, nonzero: ``kernels/cpu/indexing``).

The ops layer (``ops/views.py``, ``ops/indexing.py``) calls ``dispatch.record(op, inputs, out,
kwargs)`` with these records; ``vjp`` is attached by the autograd layer. Composite ops
(flatten, chunk, movedim, index_select via gather...) record the primitive they are built on.
"""

from __future__ import annotations

from ..registry import OpDef, extern, register


def _movement(name: str, **kw) -> OpDef:
    return register(OpDef(name, "movement", **kw))


# -- views: kwargs recorded are the ones a vjp needs to map the gradient back ---------------
view_op = _movement("view")              # {"shape": input shape}: reshape/flatten/squeeze/...
permute_op = _movement("permute")        # {"dims"}: permute/transpose/t/movedim
expand_op = _movement("expand")          # {"size"}
slice_op = _movement("slice")            # {"dim", "start", "end", "step"}: narrow, split, chunk
select_op = _movement("select")          # {"dim", "index"}: select, unbind
diagonal_op = _movement("diagonal")      # {"offset", "dim1", "dim2"}
as_strided_op = _movement("as_strided")  # {"size", "stride", "storage_offset"}
index_op = _movement("index")            # {"index"}: Tensor.__getitem__ (basic or advanced)

# -- copying movement ops -------------------------------------------------------------------
cat_op = _movement("cat")                # inputs: the tensors; {"dim"}
flip_op = _movement("flip")              # {"dims"}
roll_op = _movement("roll")              # {"shifts", "dims"}
repeat_op = _movement("repeat")          # {"repeats"}
tril_op = _movement("tril")              # {"diagonal"}
triu_op = _movement("triu")              # {"diagonal"}

# -- index ops ------------------------------------------------------------------------------
gather_op = extern("gather")             # (input, index) {"dim"}; also index_select, take...
scatter_op = extern("scatter")           # (input, index, src) {"dim", "reduce"}
scatter_add_op = extern("scatter_add")   # (input, index, src) {"dim"}
scatter_reduce_op = extern("scatter_reduce")  # (input, index, src) {"dim", "reduce", ...}
index_select_op = extern("index_select")  # (input, index) {"dim"}
index_add_op = extern("index_add")       # (input, index, source) {"dim", "alpha"}
index_copy_op = extern("index_copy")     # (input, index, source) {"dim"}
index_fill_op = extern("index_fill")     # (input, index) {"dim", "value"}
index_put_op = extern("index_put")       # (input, values, *indices) {"accumulate"}
masked_fill_op = extern("masked_fill")   # (input, mask) {"value"}
masked_scatter_op = extern("masked_scatter")  # (input, mask, source)
masked_select_op = extern("masked_select")    # (input, mask)
take_op = extern("take")                 # (input, index)
nonzero_op = extern("nonzero", differentiable=False)


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

from ..registry import defvjp  # noqa: E402


def _permute_vjp(c, g):
    dims = c.kw["dims"]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv),)


def _expand_vjp(c, g):
    from ...autograd.node import sum_to

    return (sum_to(g, c._meta[0][0]),)


defvjp(view_op, lambda c, g: (g.reshape(c._meta[0][0]),), "")
defvjp(permute_op, _permute_vjp, "")
defvjp(expand_op, _expand_vjp, "")
