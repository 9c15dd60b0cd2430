"""``autograd.functional``: vjp, jvp, jacobian, hessian, vhp and hvp of a function of tensors.

Everything is built on ``autograd.grad``. There is no forward-mode AD, so ``jvp`` (and
``hvp``) use the double-backward trick: the vjp ``g -> J^T g`` is linear in ``g``, and the
gradient of ``<J^T g, v>`` with respect to ``g`` is ``J v``. Return structures and errors
follow torch: a tuple where a tuple came in, nested tuples ``[output][input]`` for
``jacobian``, shapes ``output.shape + input.shape``, zeros for inputs the outputs do not
depend on (an error with ``strict=True``), and results that require grad only with
``create_graph=True``.

>>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
>>> jtorch.autograd.functional.jacobian(lambda t: t * t, x)
tensor([[2., 0.],
        [0., 4.]], dtype=torch.float64)
"""

from __future__ import annotations

from ..tensor import Tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# -- structure helpers -----------------------------------------------------------------------

def _as_tuple_nocheck(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple:
    """``(was_tuple, tuple_of_tensors)``, with torch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if isinstance(el, Tensor):
            continue
        if is_tuple:
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the value at index {i} has type {type(el)}.")
        raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                        f"of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Unwrap the one-element tuples that stand for a non-tuple argument (``to_unpack`` is
    one flag, or ``(outer, inner)`` for nested results)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to differentiate w.r.t.; with ``create_graph`` an input that requires
    grad stays connected to its graph (through a view) so higher-order terms flow back."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs: tuple, create_graph: bool) -> tuple:
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got "
                               f"{el_v.size()}.")


def _check_requires_grad(inputs: tuple, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input "
                               f"{i} is independent of the input. This is not allowed in strict "
                               "mode. You should ensure that your function is thrice "
                               "differentiable and that the hessian depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the "
                               f"user-provided function with respect to input {i} is independent "
                               "of the input. This is not allowed in strict mode. You should "
                               "ensure that your function is twice differentiable and that the "
                               "jacobian depends on the inputs (this would be violated by a "
                               "linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               "inputs of the user-provided function. This is not allowed in "
                               "strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           "gradients. The outputs must be computed in a differentiable manner "
                           "from the input when running in strict mode.")


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
                   retain_graph=None, is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` over the outputs that require grad (all None if none does)."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


_STRICT_NONE_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    from ..ops.creation import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE_MSG[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, refs: tuple, is_refs_tuple: bool, create_graph: bool, fn_name: str,
               none_msg: str):
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, refs, is_refs_tuple)
    return v


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")


# -- vjp / jvp -------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.vjp(lambda t: (t * t).sum(), x)[1]
    tensor([2., 4.], dtype=torch.float64)
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.jvp(lambda t: t * t, x, jtorch.ones_like(x))[1]
    tensor([2., 4.], dtype=torch.float64)
    """
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                       "The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_outputs_tuple))


# -- jacobian / hessian ----------------------------------------------------------------------

def _standard_basis_for(tensors: tuple, numels: tuple) -> tuple:
    """One ``(sum(numels), numel_i)`` block per tensor: together, the rows of the identity."""
    from ..ops.creation import eye

    total = sum(numels)
    basis, start = [], 0
    for t, n in zip(tensors, numels):
        basis.append(eye(total, dtype=t.dtype, device=t.device).narrow(1, start, n))
        start += n
    return tuple(basis)


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """Forward-mode strategy: one jvp (double-backward trick) per input element."""
    from ..ops.creation import zeros_like
    from ..ops.views import stack

    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    numels = tuple(inp.numel() for inp in inputs)
    basis = _standard_basis_for(inputs, numels)
    columns, outputs, is_outputs_tuple = [], None, False
    for k in range(sum(numels)):
        tangents = tuple(b[k].view_as(inp) for b, inp in zip(basis, inputs))
        out, jv = jvp(func, inputs, tangents)
        is_outputs_tuple = isinstance(out, tuple)
        outputs = _as_tuple_nocheck(out)
        columns.append(_as_tuple_nocheck(jv))
    if outputs is None:  # no input elements: evaluate once for the output shapes
        out = func(*(inp.detach() for inp in inputs))
        is_outputs_tuple, outputs = isinstance(out, tuple), _as_tuple_nocheck(out)
    jacobian = []
    for i, out_i in enumerate(outputs):
        if columns:
            flat = stack([c[i] for c in columns], dim=-1)  # out_i.shape + (sum(numels),)
        else:
            flat = zeros_like(out_i).unsqueeze(-1).narrow(-1, 0, 0)
        per_input, start = [], 0
        for inp, n in zip(inputs, numels):
            block = flat.narrow(-1, start, n).reshape(tuple(out_i.shape) + tuple(inp.shape))
            per_input.append(block)
            start += n
        jacobian.append(per_input)
    # lists, not tuples, where a tuple came in: torch's forward-mode structure
    return _tuple_postprocess(jacobian, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """All rows at once through ``is_grads_batched``."""
    from ..ops.creation import zeros_like

    numels = tuple(out.numel() for out in outputs)
    grad_outputs = _standard_basis_for(outputs, numels)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    if sum(numels):
        vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph,
                                 is_grads_batched=True))
    else:  # no rows at all: an empty batch
        vj = [None] * len(inputs)
    for idx, g in enumerate(vj):
        if g is None:
            vj[idx] = zeros_like(inputs[idx]).expand((sum(numels),) + tuple(inputs[idx].shape))
    per_input = []
    for jac_i, inp in zip(vj, inputs):
        per_input.append([jac.reshape(tuple(out.shape) + tuple(inp.shape))
                          for jac, out in zip(jac_i.split(numels, dim=0), outputs)])
    return tuple(zip(*per_input))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``jac[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (tuple levels dropped where no tuple was used).

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.jacobian(lambda t: t.exp().sum(), x)
    tensor([2.7183, 7.3891], dtype=torch.float64)
    """
    from ..ops.creation import zeros_like
    from ..ops.views import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      "(yet). Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)

        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please either "
                                   "set `strict=False` or `vectorize=False`.")
            jac = _grad_postprocess(_jacobian_vectorized(outputs, inputs, create_graph),
                                    create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))

        jac = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            for j in range(out.nelement()):
                vj = _autograd_grad((out,), inputs, (_one_hot(out, j),), retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (rows_el, vj_el, inp_el) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError("The jacobian of the user-provided function is "
                                               f"independent of input {i}. This is not allowed "
                                               "in strict mode when create_graph=True.")
                        rows_el.append(vj_el)
                        continue
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {el_idx}. This is not allowed "
                                           "in strict mode.")
                    rows_el.append(zeros_like(inp_el))
            jac.append(tuple(_stack_rows(rows_el, out, inputs[el_idx], stack)
                             for el_idx, rows_el in enumerate(rows)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _one_hot(out: Tensor, j: int) -> Tensor:
    """A grad_output selecting element ``j`` (row-major) of ``out``."""
    from ..ops.creation import zeros

    g = zeros((out.nelement(),), dtype=out.dtype, device=out.device)
    g[j] = 1
    return g.view(out.shape)


def _stack_rows(rows: list, out: Tensor, inp: Tensor, stack) -> Tensor:
    shape = tuple(out.shape) + tuple(inp.shape)
    if not rows:  # an output with no elements
        from ..ops.creation import zeros

        return zeros(shape, dtype=inp.dtype, device=inp.device)
    if len(rows) == 1:  # a one-element output: no copy
        return rows[0].view(shape)
    return stack(rows, dim=0).view(shape)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func``: ``hess[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape``.

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.hessian(lambda t: (t * t * t).sum(), x)
    tensor([[ 6.,  0.],
            [ 0., 12.]], dtype=torch.float64)
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


# -- vhp / hvp -------------------------------------------------------------------------------

def _scalar_output(func, inputs: tuple, strict: bool, fn_name: str) -> tuple:
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return is_outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar ``func``.

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.vhp(lambda t: (t * t * t).sum(), x, jtorch.ones_like(x))[1]
    tensor([ 6., 12.], dtype=torch.float64)
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, strict, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar ``func`` (the double-backward trick over vhp).

    >>> x = jtorch.tensor([1.0, 2.0], dtype=jtorch.float64)
    >>> jtorch.autograd.functional.hvp(lambda t: (t * t * t).sum(), x, jtorch.ones_like(x))[1]
    tensor([ 6., 12.], dtype=torch.float64)
    """
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, strict, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)
