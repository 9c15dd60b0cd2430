"""torch.cond and torch.while_loop: control flow over tensors.

Eagerly a predicate's value picks what runs, as Python would. Under a mode that cannot read
values (``jtorch.compile``'s tracer, ``vmap``) ``cond`` runs both branches and selects their
outputs with ``where``: the branches must then agree in structure, shape and dtype (torch's
rule for traced branches), and they are pure by torch's contract, so computing both changes
only the cost. With grad mode on, the tracer reads the predicate instead (a graph break; an
error with ``fullgraph=True``), so that the branch not taken sends no gradient.
``while_loop``'s trip count depends on values, so under tracing it is a graph break (an error
with ``fullgraph=True``), and under vmap torch's error."""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from ..compile.errors import UncapturedHigherOrderOpError
from ..tensor import Tensor

__all__ = ["cond", "while_loop"]


def _leaves(tree, out: list) -> list:
    from ..func._transforms import tree_flatten  # (jtorch.func loads at first use)

    out.extend(tree_flatten(tree)[0])
    return out


def _check_operands(operands, what: str, ints: bool) -> tuple:
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect {what} to be a tuple of possibly nested dict/list/tuple that "
                           f"only consists of tensor leaves, but got {operands}.")
    for v in _leaves(operands, []):
        if not (isinstance(v, Tensor) or (ints and isinstance(v, int))):
            leaf = "tensor or int leaves" if ints else "tensor leaves"
            raise RuntimeError(f"Expect {what} to be a tuple of possibly nested dict/list/tuple "
                               f"that only consists of {leaf}, but got {tuple(operands)}.")
    return tuple(operands)


def _check_pred(pred, fn: str):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return pred
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"Expected pred to be bool or a tensor, but got {type(pred).__name__} "
                       f"in {fn}.")


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    >>> jtorch.cond(jtorch.tensor(2.0) > 1, lambda x: x + 1, lambda x: x - 1, (jtorch.zeros(2),))
    tensor([1., 1.])
    """
    pred = _check_pred(pred, "cond")
    operands = _check_operands(operands, "operands", False)
    if not isinstance(pred, Tensor) or dispatch.mode is None or (
            dispatch.grad_state.enabled and _tracing()):
        # under the compiler with grad mode on: ``where`` would send zero gradients through
        # the branch not taken, and 0 * nan (a sqrt of a negative there) is nan; reading the
        # predicate (a graph break; an error with fullgraph=True) keeps eager's gradients
        return (true_fn if bool(pred) else false_fn)(*operands)
    # a traced or batched predicate: both branches, outputs selected
    a, b = true_fn(*operands), false_fn(*operands)
    la, lb = _leaves(a, []), _leaves(b, [])
    if len(la) != len(lb) or type(a) is not type(b):
        raise UncapturedHigherOrderOpError(
            f"Expected true_fn and false_fn to return the same structure, got {len(la)} and "
            f"{len(lb)} outputs")
    picked = []
    cond_t = pred.reshape(())
    for x, y in zip(la, lb):
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
            raise UncapturedHigherOrderOpError("Expected true_fn and false_fn to return tensors")
        if x.shape != y.shape or x.dtype != y.dtype:
            raise UncapturedHigherOrderOpError(
                f"Expected true_fn and false_fn outputs to have the same shape and dtype, got "
                f"{list(x.shape)} {x.dtype} and {list(y.shape)} {y.dtype}")
        picked.append(_where(cond_t, x, y))
    from ..func._transforms import tree_flatten, tree_unflatten

    return tree_unflatten(picked, tree_flatten(a)[1])


def _tracing() -> bool:
    from ..compile import tracer

    return bool(tracer.active) and dispatch.mode is tracer.active[-1]


def _where(c: Tensor, x: Tensor, y: Tensor) -> Tensor:
    from .pointwise import where

    return where(c if c.dtype is _dt.bool else c.bool(), x, y)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; returns the last carried
    values. ``body_fn`` returns as many values as it takes, of the same shapes and dtypes.

    >>> jtorch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
    ...                   (jtorch.tensor(0), jtorch.ones(2)))
    (tensor(3), tensor([8., 8.]))
    """
    carried = _check_operands(carried_inputs, "carried_inputs", True)
    while True:
        p = cond_fn(*carried)
        if isinstance(p, Tensor):
            if p.numel() != 1 or p.dtype.is_floating_point or p.dtype.is_complex:
                raise UncapturedHigherOrderOpError(
                    f"cond_fn must return a boolean scalar tensor or a bool, got {p}")
        elif not isinstance(p, bool):
            raise UncapturedHigherOrderOpError(
                f"cond_fn must return a boolean scalar tensor or a bool, got "
                f"{type(p).__name__}")
        if not bool(p):
            return carried
        out = body_fn(*carried)
        out = out if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise UncapturedHigherOrderOpError(
                f"body_fn should return the same number of elements as carried_inputs: got "
                f"{len(out)}, expected {len(carried)}")
        for i, (new, old) in enumerate(zip(out, carried)):
            if isinstance(old, Tensor) and (not isinstance(new, Tensor) or new.shape != old.shape
                                            or new.dtype != old.dtype):
                got = (f"{list(new.shape)} {new.dtype}" if isinstance(new, Tensor)
                       else type(new).__name__)
                raise UncapturedHigherOrderOpError(
                    f"body_fn's output {i} must have the shape and dtype of carried_inputs[{i}] "
                    f"({list(old.shape)} {old.dtype}), got {got}")
        carried = tuple(out)
