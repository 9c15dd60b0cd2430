"""``optim.Optimizer``: parameter groups, per-parameter state, state dicts and step hooks with
torch's semantics. Subclasses write ``step`` as a loop over parameters that hands each
parameter's update (its operands and scalars) to an ``update`` function:

* ``_update`` runs it at once as the ``_fused_<name>_`` op (``kernels/defs/optim.py``: its CPU
  kernel is one compiled loop over one parameter), through dispatch;
* ``_MultiTensor.add`` (torch's foreach / fused steps, the default) collects the group's updates
  and ``run`` applies them all in one compiled call (``kernels/cpu/optim_multi.py``), bitwise
  equal to the per-parameter kernels. Parameters without a flat view (non-contiguous,
  float16, off the CPU) still take ``_update``.

``_multi_tensor(group)`` picks: the per-parameter path for ``foreach=False`` (torch's
single-tensor for-loop), and whenever a dispatch mode is active (``jtorch.compile``'s tracer,
whose proxy tensors only dispatch sees), else one ``_MultiTensor`` per group.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from .. import meta as _meta
from ..autograd.grad_mode import enable_grad, no_grad
from ..kernels.cpu import optim_multi as _om
from ..kernels.defs.optim import OPS as _OPS
from ..nn.modules.module import RemovableHandle
from ..ops.creation import tensor
from ..tensor import Tensor

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


class _RequiredParameter:
    """Marks a default that every parameter group must set (``lr`` of some optimizers)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A pre hook on every optimizer's ``step``: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A post hook on every optimizer's ``step``: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def typename(obj) -> str:
    """torch.typename: ``torch.FloatTensor`` for tensors, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _scalar(x) -> float:
    """A hyperparameter as a Python float (one-element tensors included)."""
    return float(x.item()) if isinstance(x, Tensor) else float(x)


def _scalar_dtype() -> _dt.dtype:
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def _step_tensor(value: float = 0.0, fused: bool | None = False) -> Tensor:
    """The step counter torch keeps in state: a 0-d CPU tensor of the default float dtype
    (on the CPU whatever the parameters' device, as torch's non-capturable optimizers);
    float32 for ``fused=True``, as torch's ``_get_scalar_dtype(is_fused=True)``."""
    return tensor(value, dtype=_dt.float32 if fused else _scalar_dtype(), device="cpu")


def _incr_step(step: Tensor) -> float:
    """``step += 1`` in place; returns the new count as a float (torch's ``_get_value``)."""
    return step.add_(1).item()


def _incr_step_fast(step: Tensor) -> float:
    """``_incr_step`` on the array of a CPU step counter, outside dispatch (the multi-tensor
    path: no mode is active). The sum is rounded to the counter's dtype as ``add_`` rounds it
    (a float32 sum of two floats is exact in double, then rounded once)."""
    a = step._a
    if a.__class__ is not np.ndarray or a.ndim != 0 or not a.flags.writeable:
        return _incr_step(step)
    a[()] = a.item() + 1.0
    step._vc[0] += 1
    return a.item()


_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _check_fused(p: Tensor, cuda_unsupported: bool = False) -> None:
    """torch's ``_device_dtype_check_for_fused``: fused steps take floating-point params on
    the devices that have fused kernels."""
    devices = [d for d in _FUSED_DEVICES if not (cuda_unsupported and d == "cuda")]
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           f"of supported devices: {devices} but {p.dtype} and {p.device.type}")


def _check_foreach_fused(group_defaults: dict) -> None:
    """torch's constructor checks of ``foreach`` and ``fused`` (after the groups are built)."""
    if group_defaults.get("fused") and group_defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _zeros_like(p: Tensor) -> Tensor:
    from ..ops.creation import zeros_like

    return zeros_like(p)


def _update(name: str, tensors: tuple, scalars: tuple) -> None:
    """One fused update of a parameter and its state in place (``tensors`` = param, grad,
    state...; None for buffers the options do not use): the ``_fused_<name>_`` op."""
    dispatch.call(_OPS[name], *tensors, scalars=scalars)


class _MultiTensor:
    """One group's updates, applied by ``run`` in one compiled call per compute dtype (torch's
    multi-tensor apply). ``add`` has ``_update``'s signature; a parameter whose operands have
    no flat view of its compute dtype (non-contiguous, float16, read-only, off the CPU, a
    mismatched shape) is updated at once by ``_update`` instead (which raises torch's errors).
    For example ``b = _MultiTensor(); b.add("sgd", (p, g, None), (lr, 0.0, 0.0, 1.0, False,
    False, False)); b.run()`` updates ``p`` in place and bumps its version.
    """

    __slots__ = ("batches", "name")

    def __init__(self) -> None:
        self.name = ""
        # compute dtype -> [flat operand rows, scalar rows, version counters, param ids, serial]
        self.batches: dict = {}

    def add(self, name: str, tensors: tuple, scalars: tuple) -> None:
        a = tensors[0]._a
        dt = _om.COMPUTE.get(a.dtype) if a.__class__ is np.ndarray else None
        if dt is not None:
            shape, flat = a.shape, _om.flat
            flats, vcs, absent = [], [], []
            for k, t in enumerate(tensors):
                if t is None:
                    flats.append(None)
                    absent.append(k)
                    continue
                f = flat(t._a, shape, dt)
                if f is None:
                    break
                flats.append(f)
                if k != 1:  # the written operands: all but the grad
                    vcs.append(t._vc)
            else:
                batch = self.batches.get(dt)
                if batch is None:
                    batch = self.batches[dt] = _Batch(absent)
                batch.rows.append(flats)
                batch.scalars.append(scalars)
                batch.vcs += vcs
                if absent != batch.absent:  # some parameter has a buffer another lacks
                    batch.absent = None
                if id(a) in batch.ids:  # a parameter listed twice: updated twice, in order
                    batch.serial = True
                batch.ids.add(id(a))
                self.name = name
                return
        _update(name, tensors, scalars)

    def run(self) -> None:
        """Apply the collected updates; bump the version of every tensor written (the params
        and their state buffers, not the grads), as the per-parameter op does."""
        for dt, b in self.batches.items():
            _om.run(self.name, b.rows, b.scalars, dt, b.absent, b.serial)
            for vc in b.vcs:
                vc[0] += 1
        self.batches.clear()


class _Batch:
    """The updates of one compute dtype: each parameter's flat operands and scalars, the
    version counters to bump, and the operand positions no parameter has (None where that
    differs between parameters)."""

    __slots__ = ("absent", "ids", "rows", "scalars", "serial", "vcs")

    def __init__(self, absent: list) -> None:
        self.rows: list = []
        self.scalars: list = []
        self.vcs: list = []
        self.ids: set = set()
        self.serial = False
        self.absent: list | None = absent


def _multi_tensor(group: dict) -> _MultiTensor | None:
    """A ``_MultiTensor`` for ``group``'s step, or None for the per-parameter path: torch's
    single-tensor loop (``foreach=False`` and not ``fused``), and any active dispatch mode
    (``jtorch.compile`` traces the step's ops through dispatch)."""
    if dispatch.mode is not None:
        return None
    if group.get("foreach") is False and not group.get("fused"):
        return None
    if group.get("differentiable") or group.get("capturable"):
        return None
    return _MultiTensor()


def _announce(opt: Optimizer, group: dict) -> None:
    """Tell a compile worker, should this process start one, which multi-tensor kernels the
    group's steps will call (``compile/workers.py``): in a cold process the worker builds them
    while the main process compiles the first step's forward, where the optimizer's kernel
    came last, after the backward (~1.5-2 s of the demo CNN's first step)."""
    from ..compile import workers

    plan = opt._multi_operands(group) if workers.enabled() else None
    if plan is None or _multi_tensor(group) is None:
        return
    name, absent = plan
    by_dtype: dict = {}
    for p in group["params"]:
        a = p._a
        dt = _om.COMPUTE.get(a.dtype) if a.__class__ is np.ndarray else None
        f = _om.flat(a, a.shape, dt) if dt is not None else None
        if f is not None:
            by_dtype.setdefault(dt, []).append(f)
    for dt, arrays in by_dtype.items():
        for key, sig in _om.expected(name, arrays, dt, absent):
            workers.expect(_om.__name__, key, sig)


def _use_no_grad(step: Callable) -> Callable:
    """Run ``step`` under no_grad (closures re-enable grad themselves).

    Under ``jtorch.compile`` the step runs eagerly, as a ``jtorch.compiler.disable``'d call
    (one graph break): one multi-tensor kernel updates every parameter (a traced step would
    be a kernel per parameter shape), step counters are read (``.item()``, a graph break
    per parameter otherwise) and state is made lazily, which must not be traced values that
    outlive their graph."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if not self._sparse_grads:
            _refuse_sparse(self)
        if dispatch.mode is not None and _compiling():
            from ..compile.api import disable

            return disable(_no_grad_step)(step, self, *args, **kwargs)
        with no_grad():
            return step(self, *args, **kwargs)

    return wrapper


def _refuse_sparse(opt: Optimizer) -> None:
    """torch's error for a sparse gradient (embedding's ``sparse=True``) reaching an optimizer
    without a sparse update."""
    for group in opt.param_groups:
        for p in group["params"]:
            g = p._grad
            if g is not None and g.is_sparse:
                raise RuntimeError(opt._sparse_error())


def _no_grad_step(step: Callable, opt: Optimizer, *args, **kwargs):
    with no_grad():
        return step(opt, *args, **kwargs)


def _compiling() -> bool:
    from ..compile import api

    return api.is_compiling()


def _eval_closure(closure: Callable | None):
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _hooked_step(func: Callable) -> Callable:
    """Wrap a class's ``step`` so that global and per-instance step hooks run around it."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _meta.effect_hook is not None:  # traced: the step, hooks and all, runs eagerly,
            # and again at each replay of the cached call (one multi-tensor kernel)
            return _meta.effect_hook("Optimizer.step()", wrapper, args, kwargs)
        self = args[0]
        for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
        out = func(*args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(),
                               _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    r"""Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts defining
    parameter groups; ``defaults`` holds the options a group does not set.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.SGD([w], lr=0.5)
    >>> w.grad = jtorch.ones(2); opt.step(); w
    Parameter containing:
    tensor([0.5000, 0.5000], requires_grad=True)
    """

    # Group options that __setstate__ fills in for state dicts saved by older versions.
    _group_setdefaults: dict = {}
    # Whether this optimizer's per-parameter state holds a ``step`` counter.
    _has_step_state: bool = False
    # Whether its step takes sparse gradients (SGD, Adagrad, SparseAdam and LBFGS do)
    _sparse_grads: bool = False

    def _multi_operands(self, group: dict) -> tuple[str, list] | None:
        """The multi-tensor kernel of this optimizer's step (``optim_multi.KERNELS``) and the
        operands ``group``'s options leave out (None: not announced, see ``_announce``)."""
        return None

    def _sparse_error(self) -> str:
        name = next(c.__name__ for c in type(self).__mro__ if c.__module__.startswith("jtorch."))
        return f"{name} does not support sparse gradients"

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        if defaults.get("differentiable"):
            if defaults.get("fused"):
                raise RuntimeError("`fused` does not support `differentiable`")
            raise NotImplementedError("differentiable=True is not supported: optimizer steps "
                                      "run as compiled kernels outside autograd")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _patch_step_function(self) -> None:
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _hooked_step(cls.step)

    # -- pickling / state -------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for k, v in self._group_setdefaults.items():
                group.setdefault(k, v)
            if not self._has_step_state:
                continue
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(float(p_state["step"]))

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- hooks ------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` before step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` after step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _register(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: per-param state}, 'param_groups': [group with 'params' as
        indices]}``; parameters are numbered in order of first appearance over the groups.
        Tensors in the state are the optimizer's own (not copies), as in torch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict from ``state_dict()`` of an optimizer with the same groups."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param: Tensor, value, key=None):
            if isinstance(value, Tensor):
                if key == "step" or not param.is_floating_point():
                    return value
                return value.to(dtype=param.dtype)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and steps ----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set the gradients of all optimized tensors to None (or to zero)."""
        if _meta.effect_hook is not None:  # traced: a step a cached call replays
            return _meta.effect_hook("Optimizer.zero_grad()", Optimizer.zero_grad, (self,),
                                     {"set_to_none": set_to_none}, reads=False)
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def step(self, closure: Callable | None = None):
        """Perform a single optimization step (``closure`` re-evaluates and returns the loss)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with group-specific options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        _announce(self, param_group)
