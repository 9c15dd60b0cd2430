"""torch.func's function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian) and the
module helpers (functional_call, stack_module_state), over jtorch's reverse-mode autograd.

torch runs each transform at its own autograd "level"; here every transform makes its own
leaves for the inputs it differentiates (a view when the input already requires grad, so an
outer transform or the caller can still differentiate through it) and always builds the
backward graph while grad mode is on outside. Results leave a transform attached to that graph
only where it reaches tensors the transform did not make (closed-over parameters, an outer
transform's inputs), which is what torch's unwrapping gives: ``grad(f)(x)`` of a plain ``x``
does not require grad, ``grad(grad(f))`` and gradient penalties work.

Forward mode is the double-vjp trick: ``u -> J^T u`` is linear in ``u``, and the gradient of
``<J^T u, v>`` with respect to ``u`` is ``J v``.

>>> x = jtorch.tensor([1.0, 2.0])
>>> grad(lambda t: (t * t).sum())(x)
tensor([2., 4.])
"""

from __future__ import annotations

import contextlib
import functools
from collections import OrderedDict
from collections.abc import Sequence

from .. import meta as _meta
from ..autograd import grad as _autograd_grad_raw
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.node import AccumulateGrad
from ..tensor import Tensor
from . import vmap as _vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "stack_module_state", "vjp"]


# -- pytrees (torch.utils._pytree's containers: tuple, list, namedtuple, dict, OrderedDict) ----

class _Spec:
    """A pytree's structure; compares and prints as torch's TreeSpec."""

    __slots__ = ("children", "context", "type")

    def __init__(self, typ, context, children: tuple) -> None:
        self.type, self.context, self.children = typ, context, children

    def __eq__(self, other) -> bool:
        return (isinstance(other, _Spec) and self.type is other.type
                and self.context == other.context and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.type, len(self.children)))

    def _name(self) -> str:
        return "namedtuple" if self.type not in (tuple, list, dict, OrderedDict) else \
            self.type.__name__

    def __repr__(self, indent: int = 0) -> str:
        s = f"TreeSpec({self._name()}, {self.context}, ["
        if self.children:
            indent += 2
            s += _spec_repr(self.children[0], indent)
            s += "," if len(self.children) > 1 else ""
            s += ",".join("\n" + " " * indent + _spec_repr(c, indent) for c in self.children[1:])
        return s + "])"

    def pprint(self) -> str:
        kids = [_spec_pprint(c) for c in self.children]
        if self.type is tuple:
            return f"({kids[0]},)" if len(kids) == 1 else f"({', '.join(kids)})"
        if self.type is list:
            return f"[{', '.join(kids)}]"
        if self.type is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.context, kids)) + "}"
        if self.type is OrderedDict:
            return f"OrderedDict([{', '.join(f'({k!r}, {v})' for k, v in zip(self.context, kids))}])"
        return f"{self.type.__name__}({', '.join(f'{k}={v}' for k, v in zip(self.type._fields, kids))})"


_LEAF = "*"


def _spec_repr(spec, indent: int) -> str:
    return _LEAF if spec is _LEAF else spec.__repr__(indent)


def _spec_pprint(spec) -> str:
    return _LEAF if spec is _LEAF else spec.pprint()


def _flatten_into(x, leaves: list):
    typ = type(x)
    if typ is tuple or typ is list:
        return _Spec(typ, None, tuple(_flatten_into(c, leaves) for c in x))
    if isinstance(x, tuple) and hasattr(typ, "_fields"):
        return _Spec(typ, typ, tuple(_flatten_into(c, leaves) for c in x))
    if typ is dict or typ is OrderedDict:
        keys = list(x)
        return _Spec(typ, keys, tuple(_flatten_into(x[k], leaves) for k in keys))
    leaves.append(x)
    return _LEAF


def tree_flatten(tree) -> tuple:
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _unflatten_from(spec, it):
    if spec is _LEAF:
        return next(it)
    vals = [_unflatten_from(c, it) for c in spec.children]
    if spec.type is tuple or spec.type is list:
        return spec.type(vals)
    if spec.context is spec.type:  # namedtuple
        return spec.type(*vals)
    return spec.type(zip(spec.context, vals))


def tree_unflatten(leaves, spec):
    return _unflatten_from(spec, iter(leaves))


def _tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


# -- levels: which leaves belong to which transform call -------------------------------------

class _Call:
    """One running transform; ``parent`` is the transform it runs inside."""

    __slots__ = ("parent",)

    def __init__(self, parent) -> None:
        self.parent = parent


_calls: list = []


@contextlib.contextmanager
def _nesting():
    call = _Call(_calls[-1] if _calls else None)
    _calls.append(call)
    try:
        yield call
    finally:
        _calls.pop()


def _own(t: Tensor, call: _Call) -> bool:
    """Whether the leaf ``t`` was made by ``call`` or a transform nested in it."""
    c = t.__dict__.get("_func_call")
    while c is not None:
        if c is call:
            return True
        c = c.parent
    return False


def _reaches_outside(t: Tensor, call: _Call) -> bool:
    fn = t.grad_fn
    if fn is not None and fn.placeholder and _meta.read_hook is not None:
        # under jtorch.compile: t's node is the trace's placeholder until its graph runs (a
        # break, as the autograd.grad that follows would make); then it is t's real one
        _meta.read_hook((t,), "autograd.grad()")
        fn = t.grad_fn
    if fn is None:
        return not _own(t, call)
    stack, seen = [fn], {id(fn)}
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            if not _own(node.variable, call):
                return True
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return False


def _export(t, call: _Call, keep_graph: bool):
    """A result as the caller sees it: attached only to what the caller can differentiate."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return t
    if keep_graph and _reaches_outside(t, call):
        return t
    return t.detach()


def _export_aux(aux, call: _Call, keep_graph: bool):
    def one(x):
        if not isinstance(x, Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                f"Expected tensors, got unsupported type {type(x)}")
        return _export(x, call, keep_graph)

    return _tree_map(one, aux)


def _differentiable(x, call: _Call) -> Tensor:
    if not isinstance(x, Tensor):
        raise ValueError(  # noqa: TRY004  (torch's type)
            f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:  # stay connected: the caller differentiates through this transform
        return x.view_as(x)
    t = x.detach().requires_grad_()
    t.__dict__["_func_call"] = call
    _vmap.mark_inner(t)  # a leaf of this transform: inside a vmap, no physical record
    return t


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None,
                   create_graph: bool = True) -> tuple:
    """``autograd.grad`` that gives zeros for inputs the outputs do not depend on."""
    from ..ops.creation import zeros_like

    if grad_outputs is None:
        pairs = [(o, None) for o in outputs if o.requires_grad]
    else:
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return tuple(zeros_like(i) for i in inputs)
    res = _autograd_grad_raw([p[0] for p in pairs], list(inputs), [p[1] for p in pairs],
                             retain_graph=retain_graph, create_graph=create_graph,
                             allow_unused=True)
    return tuple(zeros_like(i) if g is None else g for g, i in zip(res, inputs))


# -- argnums ---------------------------------------------------------------------------------

def _validate_and_wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")  # noqa: TRY004
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums, num_args: int):
    if isinstance(argnums, int):
        return _validate_and_wrap_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        wrapped = tuple(_validate_and_wrap_argnum(a, num_args) for a in argnums)
        if not wrapped:
            raise RuntimeError("argnums must be non-empty")
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return wrapped
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice_argnums(args: tuple, argnums, as_tuple: bool = True):
    argnums = _wrap_argnums(argnums, len(args))
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[i] for i in argnums)


def _replace_args(args: tuple, new_args: tuple, argnums) -> tuple:
    """``args`` with the entries at ``argnums`` (already wrapped) taken from ``new_args``."""
    if isinstance(argnums, int):
        argnums = (argnums,)
    out = list(args)
    for i, a in zip(argnums, new_args):
        out[i] = a
    return tuple(out)


def _make_differentiable_args(args: tuple, argnums, call: _Call) -> tuple:
    """``(args with fresh leaves at argnums, those leaves' pytree)``; all args if argnums is
    None."""
    if argnums is None:
        diff = _tree_map(lambda x: _differentiable(x, call), args)
        return diff, diff
    wrapped = _wrap_argnums(argnums, len(args))
    diff = _tree_map(lambda x: _differentiable(x, call), _slice_argnums(args, wrapped))
    new_args = _replace_args(args, diff, wrapped)
    return new_args, diff[0] if isinstance(wrapped, int) else diff


# -- grad ------------------------------------------------------------------------------------

def _grad_and_value_impl(func, argnums, has_aux: bool, args: tuple, kwargs: dict):
    keep = is_grad_enabled()
    with _nesting() as call, enable_grad():
        args, diff_args = _make_differentiable_args(args, argnums, call)
        output = func(*args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            output, aux = output
        if not isinstance(output, Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                f"got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {output.dim()} dims. Maybe you wanted to "
                               "use the vjp or jacrev APIs instead?")
        flat_diff, spec = tree_flatten(diff_args)
        # a graph of the gradients only where the caller can differentiate them: the
        # output reaches a leaf outside this call (a gradient never reaches more than it)
        keep_graph = keep and output.requires_grad and _reaches_outside(output, call)
        grads = _autograd_grad((output,), flat_diff, create_graph=keep_graph)
        grads = tree_unflatten([_export(g, call, keep_graph) for g in grads], spec)
        output = _export(output, call, keep_graph)
        if has_aux:
            return grads, (output, _export_aux(aux, call, keep))
        return grads, output


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``f -> (gradient, value)``: the value costs nothing extra once the gradient is taken.

    >>> grad_and_value(lambda t: (t * t).sum())(jtorch.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_impl(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """``f -> df/dx`` for a scalar-valued ``f``; composes with itself for higher orders.

    >>> grad(grad(lambda t: t ** 3))(jtorch.tensor(2.0))
    tensor(12.)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# -- vjp -------------------------------------------------------------------------------------

def _vjp_with_argnums(func, *primals, argnums=None, has_aux: bool = False):
    keep = is_grad_enabled()
    with _nesting() as call, enable_grad():
        primals, diff_primals = _make_differentiable_args(primals, argnums, call)
        primals_out = func(*primals)
        aux = None
        if has_aux:
            if not (isinstance(primals_out, tuple) and len(primals_out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            primals_out, aux = primals_out
            aux = _export_aux(aux, call, keep)
        flat_out, out_spec = tree_flatten(primals_out)
        _assert_non_empty_tensor_output(flat_out, "vjp(f, *primals)")
        flat_diff, primals_spec = tree_flatten(diff_primals)
        results = tree_unflatten([_export(o, call, keep) for o in flat_out], out_spec)
        for o in flat_out:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")

    def wrapper(cotangents, retain_graph: bool = True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{_spec_pprint(cot_spec)}, primal output: "
                               f"{_spec_pprint(out_spec)}")
        res = _autograd_grad(flat_out, flat_diff, flat_cot, retain_graph=retain_graph,
                             create_graph=create_graph)
        return tree_unflatten([_export(r, call, create_graph) for r in res], primals_spec)

    if has_aux:
        return results, wrapper, aux
    return results, wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` reuses the one forward pass for
    any number of cotangents, returning one gradient per primal.

    >>> out, vjp_fn = vjp(lambda t: t * t, jtorch.tensor([1.0, 2.0]))
    >>> vjp_fn(jtorch.tensor([1.0, 1.0]))
    (tensor([2., 4.]),)
    """
    return _vjp_with_argnums(func, *primals, has_aux=has_aux)


# -- jvp -------------------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _assert_non_empty_tensor_output(output: list, api: str) -> None:
    if (len(output) == 1 and output[0] is None) or len(output) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {output})")
    for o in output:
        if not isinstance(o, Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                f"{api}: expected f(*primals) to return only tensors, got "
                f"unsupported type {type(o)}")


def _assert_non_empty_list_of_tensors(output: list, api: str, argname: str) -> None:
    if not output:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for o in output:
        if not isinstance(o, Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                f"{api}: Expected {argname} to only contain Tensors, got "
                f"{type(o)}")


def _push_forward(flat_out: list, duals: list, tangents: list, strict: bool, keep: bool,
                  call: _Call) -> list:
    """``J v`` for each output by the double-vjp trick; None where the output does not depend
    on the inputs."""
    from ..ops.creation import zeros_like

    res = [None] * len(flat_out)
    diff = [i for i, o in enumerate(flat_out) if o.requires_grad]
    if diff:
        us = []
        for i in diff:
            u = zeros_like(flat_out[i]).requires_grad_()
            u.__dict__["_func_call"] = call
            us.append(u)
        gs = _autograd_grad_raw([flat_out[i] for i in diff], duals, us, create_graph=True,
                                allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, tangents) if g is not None and g.requires_grad]
        if pairs:
            jv = _autograd_grad_raw([g for g, _ in pairs], us, [t for _, t in pairs],
                                    create_graph=keep, allow_unused=True)
            for i, j in zip(diff, jv):
                res[i] = j
    for i, r in enumerate(res):
        if r is None:
            if strict:
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                                   "independent of the inputs. This is not allowed with "
                                   "strict=True.")
            res[i] = zeros_like(flat_out[i])
    return res


def _jvp_with_argnums(func, primals, tangents, argnums, *, strict: bool = False,
                      has_aux: bool):
    if not isinstance(primals, tuple):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
            "call f(*primals).")
    diff_args = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff_args)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {primals_spec} and tangents "
                           f"with structure {tangents_spec}")
    _assert_non_empty_list_of_tensors(flat_primals, _JVP, "primals")
    _assert_non_empty_list_of_tensors(flat_tangents, _JVP, "tangents")
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(p.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")
    keep = is_grad_enabled()
    with _nesting() as call, enable_grad():
        duals = [_differentiable(p, call) for p in flat_primals]
        dual_tree = tree_unflatten(duals, primals_spec)
        args = dual_tree if argnums is None else \
            _replace_args(primals, dual_tree, _wrap_argnums(argnums, len(primals)))
        out = func(*args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{_JVP}: output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
            aux = _export_aux(aux, call, keep)
        flat_out, spec = tree_flatten(out)
        _assert_non_empty_tensor_output(flat_out, _JVP)
        tangents_out = _push_forward(flat_out, duals, flat_tangents, strict, keep, call)
        primals_out = tree_unflatten([_export(o, call, keep) for o in flat_out], spec)
        tangents_out = tree_unflatten([_export(t, call, keep) for t in tangents_out], spec)
        if has_aux:
            return primals_out, tangents_out, aux
        return primals_out, tangents_out


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: one directional derivative per call, for functions
    with few inputs and many outputs.

    >>> jvp(lambda t: t * t, (jtorch.tensor([1.0, 2.0]),), (jtorch.tensor([1.0, 0.0]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    return _jvp_with_argnums(func, primals, tangents, argnums=None, strict=strict,
                             has_aux=has_aux)


# -- Jacobians -------------------------------------------------------------------------------

def _rows(fn, basis):
    """``fn`` over the rows of ``basis`` (dim 0 of every tensor of the tree) as one vmapped
    call: the Jacobian's rows run as batched kernel calls."""
    from .vmap import vmap

    flat, spec = tree_flatten(basis)
    if flat[0].shape[0] == 0:  # nothing to map: one row's shapes, zero rows of them
        from ..ops.views import stack

        out = fn(tree_unflatten([b.new_zeros(tuple(b.shape[1:])) for b in flat], spec))
        return _tree_map(lambda r: stack([r])[:0], out)
    return vmap(fn)(basis)


def _standard_basis(tensors: list, numels: list) -> tuple:
    """One-hot rows over all the tensors' elements together: row ``k`` is 1 at the ``k``-th
    element counted across ``tensors``; one ``(total, *t.shape)`` tensor per tensor."""
    total = sum(numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, numels):
        chunk = t.new_zeros(total, n)
        chunk.diagonal(-start).fill_(1)
        chunks.append(chunk.view(total, *t.shape))
        start += n
    return tuple(chunks)


def _pieces(t: Tensor, sizes: list, dim: int) -> list:
    """``t.split(sizes, dim)`` by narrowing: jtorch's split backward fails for one piece."""
    out, start = [], 0
    for n in sizes:
        out.append(t.narrow(dim, start, n))
        start += n
    return out


def _error_if_complex(func_name: str, args, is_input: bool) -> None:
    flat, _ = tree_flatten(args)
    for idx, arg in enumerate(flat):
        if isinstance(arg, Tensor) and arg.dtype.is_complex:
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{func_name}: Expected all {which} to be real but received "
                               f"complex tensor at flattened input idx: {idx}")


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """``f -> J``, one vjp per output element: the cheaper side when outputs are few.

    Each Jacobian is ``output.shape + input.shape``; tuples where ``f`` returns several
    outputs or ``argnums`` is a tuple (``[output][input]``).

    >>> jacrev(lambda t: t * t)(jtorch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args):
        _error_if_complex("jacrev", args, is_input=True)
        vjp_out = _vjp_with_argnums(func, *args, argnums=argnums, has_aux=has_aux)
        if has_aux:
            output, vjp_fn, aux = vjp_out
        else:
            output, vjp_fn = vjp_out
        flat_output, output_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_output, is_input=False)
        numels = [o.numel() for o in flat_output]
        flat_primals, primals_spec = tree_flatten(_slice_argnums(args, argnums))
        basis = tree_unflatten(_standard_basis(flat_output, numels), output_spec)
        flat_results, _ = tree_flatten(_rows(vjp_fn, basis))
        per_input = [
            tuple(split.view(tuple(out.shape) + tuple(primal.shape))
                  for split, out in zip(_pieces(result, numels, 0), flat_output))
            for result, primal in zip(flat_results, flat_primals)
        ]
        per_output = tuple(tree_unflatten(ins, primals_spec) for ins in zip(*per_input))
        if isinstance(argnums, int):
            per_output = tuple(ins[0] for ins in per_output)
        jac = tree_unflatten(per_output, output_spec)
        return (jac, aux) if has_aux else jac

    return wrapper_fn


def _check_randomness_arg(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """``f -> J``, one jvp per input element: the cheaper side when inputs are few.

    >>> jacfwd(lambda t: t * t)(jtorch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper_fn(*args):
        _check_randomness_arg(randomness)
        _error_if_complex("jacfwd", args, is_input=True)
        primals = args if argnums is None else _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        numels = [p.numel() for p in flat_primals]
        basis = tree_unflatten(_standard_basis(flat_primals, numels), primals_spec)

        def push_jvp(basis):
            output = _jvp_with_argnums(func, args, basis, argnums=argnums, has_aux=has_aux)
            _error_if_complex("jacfwd", output[0], is_input=False)
            return (output[1], output[2]) if has_aux else output[1]

        results = _rows(push_jvp, basis)
        aux = None
        if has_aux:
            results, aux = results
            aux = _tree_map(lambda v: v[0], aux)
        jac_outs, spec = tree_flatten(results)
        per_output = []
        for jac_out in jac_outs:
            ins = []
            for primal, part in zip(flat_primals, _pieces(jac_out.movedim(0, -1), numels, -1)):
                shape = tuple(primal.shape)
                ins.append(part.squeeze(-1) if not shape else part.unflatten(-1, shape))
            per_output.append(tree_unflatten(ins, primals_spec))
        if isinstance(argnums, int):
            per_output = [ins[0] for ins in per_output]
        jac = tree_unflatten(per_output, spec)
        return (jac, aux) if has_aux else jac

    return wrapper_fn


def hessian(func, argnums=0):
    """``f -> d2f/dx2`` as forward-over-reverse (``jacfwd(jacrev(f))``), as torch computes it.

    >>> hessian(lambda t: (t ** 3).sum())(jtorch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# -- modules ---------------------------------------------------------------------------------

_MISSING = object()


def _module_class() -> type:
    """``nn.Module`` (``jtorch.nn`` imports much of jtorch: looked up once, on first use;
    every parameter of every functional call asks)."""
    cls = _lazy.get("Module")
    if cls is None:
        from ..nn import Module as cls

        _lazy["Module"] = cls
    return cls


_lazy: dict = {}


def _swap_tensor(module, name: str, tensor):
    """Put ``tensor`` at ``name`` on ``module`` (``_MISSING``: remove it); the old value."""
    if not isinstance(module, _module_class()):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for reg in (module._parameters, module._buffers):
        if name in reg:
            orig = reg[name]
            if tensor is _MISSING:
                del reg[name]
            else:
                reg[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _get_submodule(module, path: str, memo: dict):
    if not path:
        return module
    if path not in memo:
        prefix, dot, attr = path.rpartition(".")
        parent = _get_submodule(module, prefix, memo) if dot else module
        try:
            sub = getattr(parent, attr)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(sub, _module_class()):
            raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
        memo[path] = sub
    return memo[path]


def _swap_dict(module, named: dict, memo: dict) -> dict:
    orig = {}
    try:
        for name, tensor in named.items():
            prefix, _, attr = name.rpartition(".")
            orig[name] = _swap_tensor(_get_submodule(module, prefix, memo), attr, tensor)
    except Exception:
        _swap_dict(module, orig, memo)
        raise
    return orig


def _untie(module, parameters_and_buffers: dict) -> dict:
    """Tied tensors (one tensor under several names) all take the value given for any name."""
    all_named = dict(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of: dict = {}
    for name, t in all_named.items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = {n for n in parameters_and_buffers if n in tied}
    for name in given:
        names = tied[name]
        if len(names & given) > 1 and \
                len({id(parameters_and_buffers[n]) for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for t in tied[name]:
            untied[t] = parameters_and_buffers[name]
    return untied


def _functional_call(module, parameters_and_buffers: dict, args, kwargs, tie_weights: bool,
                     strict: bool):
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    named = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(named)), sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(msgs))
    memo: dict = {}
    orig: dict = {}
    try:
        orig = _swap_dict(module, named, memo)
        return module(*args, **kwargs)
    finally:
        new = _swap_dict(module, orig, memo)
        # the module may have rebound a buffer (``self.buf = ...``): the caller sees it
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the given tensors standing in for its parameters and
    buffers (dotted names), so a module can be used as a pure function of its state; the
    module's own tensors are back in place afterwards, also after an exception.

    >>> lin = jtorch.nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": jtorch.ones(1, 2), "bias": jtorch.zeros(1)},
    ...                 (jtorch.tensor([1.0, 2.0]),))
    tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(  # noqa: TRY004  (torch's type)
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
            f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, merged, args, kwargs, tie_weights, strict)


def _stacked_leaf(tensors: list, name: str) -> Tensor:
    from ..ops.views import stack

    n_grad = sum(bool(t.requires_grad) for t in tensors)
    if 0 < n_grad < len(tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if n_grad:  # a fresh leaf an optimizer can own, unrelated to the models' parameters
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """``(params, buffers)``: each model's tensors stacked along a new dim 0, by name, so an
    ensemble of same-shaped models runs as one batched functional call.

    >>> params, buffers = stack_module_state([jtorch.nn.Linear(2, 1) for _ in range(3)])
    >>> params["weight"].shape
    torch.Size([3, 1, 2])
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
