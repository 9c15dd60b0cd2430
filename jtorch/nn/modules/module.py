"""``nn.Module``: parameters, buffers and submodules in named registries, with torch's
attribute rules, traversal, state_dict round trips, train/eval, dtype conversion and hooks."""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

from ... import dtypes as _dt
from ... import meta as _meta
from ...tensor import Tensor
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook"]

_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()

T_destination = TypeVar("T_destination", bound=dict[str, Any])

# torch's errors for the accelerators a CPU-only build lacks, beside Tensor.cuda's: (no device
# given, the device's name in "Invalid device, must be ... device").
_NO_DEVICE = {
    "cuda": (AssertionError("Torch not compiled with CUDA enabled"), "cuda"),
    "xpu": (AssertionError("Torch not compiled with XPU enabled"), "xpu"),
    "ipu": (RuntimeError("PyTorch is not linked with support for ipu devices"), "ipu"),
    "mtia": (AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src "
                            "file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as "
                            "your target dependency!"), "MTIA"),
}


def factory_kwargs(device, dtype) -> dict:
    """The ``device=`` and ``dtype=`` a module's constructor passes to the factories of its
    parameters and buffers (None: the default device and dtype, as in torch)."""
    return {"device": device, "dtype": dtype if dtype is not None else _dt.get_default_dtype()}


def _parse_to(args: tuple, kwargs: dict) -> tuple:
    """(device, dtype, memory_format) of ``Module.to``'s arguments, as torch's ``_parse_to``:
    ``(device, dtype, non_blocking)``, ``(dtype, non_blocking)``, ``(tensor, non_blocking)``
    positionally, or those names (and ``memory_format``) as keywords."""
    from ...device import device as _device
    from ...device import to_device

    kwargs = dict(kwargs)
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    fmt = kwargs.pop("memory_format", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got an unexpected "
                        f"keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, (str, _device)) or type(a) is int:
            device = a
        elif a is not None and not isinstance(a, bool):
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    if device is not None:
        device = to_device(device)
    if fmt is not None:
        fmt = _dt.check_memory_format(fmt, "to")
    return device, dtype, fmt


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods: ``remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, *dicts: dict) -> None:
        self.id = next(RemovableHandle._next_id)
        self.dicts = dicts

    def remove(self) -> None:
        for d in self.dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _check_name(name, kind: str, module: Module) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")


class Module:
    """Base class of every layer and model.

    >>> class Net(jtorch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = jtorch.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    """

    training: bool
    _version = 1
    call_super_init = False
    dump_patches: bool = False  # torch's (unused) flag for old serialized modules
    T_destination = T_destination

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'" if kwargs else
                            f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    forward: Callable[..., Any]

    def _forward_unimplemented(self, *input: Any) -> None:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    forward = _forward_unimplemented

    # -- registration ------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter", self)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer", self)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.__dict__.get("persistent", persistent)
            tensor = Tensor._make(tensor._a, tensor._st, tensor.dtype, vc=tensor._vc)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        _check_name(name, "module", self)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (its parent must exist); with
        ``strict``, only replace a submodule that is already there.

        >>> net = jtorch.nn.Sequential(jtorch.nn.Linear(2, 2))
        >>> net.set_submodule("0", jtorch.nn.ReLU())
        >>> net
        Sequential(
          (0): ReLU()
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")  # noqa: TRY004
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    # -- attributes ---------------------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_modules"):
            if reg in d and name in d[reg]:
                return d[reg][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*regs):
            for reg in regs:
                if name in reg:
                    del reg[name]

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            d.pop(name, None)
            remove_from(self._buffers, self._modules)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            d.pop(name, None)
            remove_from(self._parameters, self._buffers)
            self._non_persistent_buffers_set.discard(name)
            self._modules[name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = value
        elif isinstance(value, Buffer) or ("_buffers" in d and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            persistent = name not in self._non_persistent_buffers_set
            if isinstance(value, Buffer):
                persistent = value.__dict__.get("persistent", True)
            d.pop(name, None)
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for reg in (self._parameters, self._buffers, self._modules):
            if name in reg:
                del reg[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks",  # older pickles
                     "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        for name in ("_non_persistent_buffers_set", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called"):
            self.__dict__.setdefault(name, set())

    def _replicate_for_data_parallel(self) -> Module:
        """A shallow copy for ``nn.parallel.replicate``: shares the submodule and buffer
        registries' entries, holds no parameters of its own (torch's replica layout)."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    # -- traversal ----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator:
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator:
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator:
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)

    # -- modes and conversion ------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        if _meta.effect_hook is not None:  # traced: a step a cached call replays
            return _meta.effect_hook("Module.zero_grad()", Module.zero_grad, (self,),
                                     {"set_to_none": set_to_none}, reads=False)
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p._grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse: bool = True) -> Module:
        """Replace every parameter, gradient and buffer ``t`` by ``fn(t)``. As in torch, a
        result of the same kind (CPU to CPU, meta to meta) is written into the Parameter
        (``param.data = ...``: optimizers keep holding it); one of another kind (CPU to meta,
        meta to CPU) becomes a new Parameter with the old one's ``requires_grad``."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        from ...autograd.grad_mode import no_grad

        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            out = param
            if new is not param:
                if new.is_meta == param.is_meta:
                    param.data = new
                else:
                    out = self._parameters[key] = Parameter(new, param._requires_grad)
            g = param._grad
            if g is not None:
                with no_grad():
                    ng = fn(g)
                if ng is not g or out is not param:
                    out._grad = ng
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(device=None, dtype=None, non_blocking=False)``, ``to(dtype)``, ``to(tensor)``,
        ``to(memory_format=...)``: floating and complex parameters and buffers take the dtype,
        all of them move to the device (to ``"meta"``: same shapes, dtypes and strides, no
        data; back from meta with ``to_empty``).

        >>> m = jtorch.nn.Linear(2, 3).to("meta")
        >>> m.weight.device, m.weight.shape
        (device(type='meta'), torch.Size([3, 2]))
        """
        device, dtype, fmt = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and (t.dtype.is_floating_point or t.dtype.is_complex):
                kw["dtype"] = dtype
            if fmt is not None and t.dim() in (4, 5):
                kw["memory_format"] = fmt
            if not kw:
                return t
            try:
                return t.to(**kw)
            except NotImplementedError as e:
                if str(e) == "Cannot copy out of meta tensor; no data!":
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of "
                        f"torch.nn.Module.to() when moving module from meta to a different "
                        f"device.") from None
                raise

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move the parameters and buffers to ``device`` without copying their data: each
        becomes an uninitialised tensor of the same shape, dtype and strides there (how a
        model built on ``meta`` gets memory).

        >>> with jtorch.device("meta"):
        ...     m = jtorch.nn.Linear(2, 3)
        >>> m.to_empty(device="cpu").weight.device
        device(type='cpu')
        """
        from ...ops.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floats(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def float(self) -> Module:
        return self._cast_floats(_dt.float32)

    def double(self) -> Module:
        return self._cast_floats(_dt.float64)

    def half(self) -> Module:
        return self._cast_floats(_dt.float16)

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def bfloat16(self) -> Module:
        return self._cast_floats(_dt.bfloat16)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        """Moves parameters and buffers with ``Tensor.cuda``: without CUDA, a module holding
        a tensor raises torch's error (one holding none is returned as is)."""
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None) -> Module:
        return self._apply(lambda t: _no_device("xpu", device))

    def ipu(self, device=None) -> Module:
        return self._apply(lambda t: _no_device("ipu", device))

    def mtia(self, device=None) -> Module:
        return self._apply(lambda t: _no_device("mtia", device))

    def share_memory(self) -> Module:
        return self

    # -- state_dict ---------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by dotted name (detached unless ``keep_vars``).
        Per module: its state_dict pre-hooks ``hook(module, prefix, keep_vars)`` run first,
        then its own entries and its children's are saved, then its post-hooks
        ``hook(module, state_dict, prefix, local_metadata)``."""
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if r is not None:
                    destination = r
            elif r is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        from ...autograd.grad_mode import no_grad

        assign = bool((local_metadata or {}).get("assign_to_params_buffers", False))
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if is_lazy(param):  # still unshaped (the lazy load hook shapes it for real values)
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to "
                              "a meta parameter in the current model, which is a no-op. (Did you "
                              "mean to pass `assign=True` to assign items in the state dictionary "
                              "to their corresponding key in the module instead of copying them "
                              "in place?)", UserWarning, stacklevel=2)
            if assign:
                if name in self._parameters:
                    setattr(self, name, value if isinstance(value, Parameter) else
                            Parameter(value, param.requires_grad))
                else:
                    self._buffers[name] = value
                continue
            try:
                with no_grad():
                    param.copy_(value)
            except Exception as e:  # noqa: BLE001
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : "
                                  f"{e.args}.")
        extra = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        elif strict and extra in state_dict:
            unexpected_keys.append(extra)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra:
                    rest = key[len(prefix):]
                    head = rest.split(".", 1)[0]
                    if head not in self._modules and rest not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # hooks may edit it; the caller's dict stays as is
        missing, unexpected, errors = [], [], []

        def load(module: Module, prefix: str = "") -> None:
            local = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
            local["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local, True, missing, unexpected,
                                         errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        result = _IncompatibleKeys(missing, unexpected)
        for hook in self._load_state_dict_post_hooks.values():
            hook(self, result)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return result

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves anything."""
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` edits the state_dict in place
        once this module and its children are in it (returning a value is an error)."""
        hook._from_public_api = True
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """torch's older post-hook: a returned dict replaces the state_dict (at the root)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    register_state_dict_hook = _register_state_dict_hook

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self)
        return h

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    # -- hooks and calls ----------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        h = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(h.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        h = RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(h.id)
        if always_call:
            self._forward_hooks_always_called.add(h.id)
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    register_backward_hook = register_full_backward_hook

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        for hid, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                         self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if self._backward_hooks or self._backward_pre_hooks:
            from .hooks import BackwardHook

            bw = BackwardHook(self)
            args = bw.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hid, hook in itertools.chain(_global_forward_hooks.items(),
                                         self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        if bw is not None:
            result = bw.setup_output_hook(result)
        return result

    def __call__(self, *args, **kwargs):
        c = self.__dict__.get("_compiled_call_impl")
        if c is not None:
            return c(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's calls in place (``jtorch.compile`` over ``_call_impl``); the
        module itself stays what it was (its state_dict keys do not change)."""
        from ...compile.api import CompiledFunction, compile_options

        object.__setattr__(self, "_compiled_call_impl", CompiledFunction(
            self._call_impl, module=self, **compile_options(*args, **kwargs)))

    # -- printing -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            mod = _addindent(repr(module), 2)
            lines.append(f"({key}): {mod}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _type_name(x) -> str:
    if isinstance(x, Tensor):
        return "torch." + x.dtype._legacy
    return type(x).__module__ + "." + type(x).__qualname__ if type(x).__module__ != "builtins" \
        else type(x).__name__


def _no_device(kind: str, device) -> NoReturn:
    """Raise what a CPU-only torch raises on moving a tensor to ``kind`` (the accelerator
    build jtorch lacks): a device index needs an accelerator, a device of another type is
    invalid, otherwise the backend is not compiled in."""
    from ...device import device as _device

    err, label = _NO_DEVICE[kind]
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")  # noqa: TRY004
    if device is not None:  # (jtorch.device knows no xpu/ipu/mtia: strings by their prefix)
        given = device.split(":")[0] if isinstance(device, str) else _device(device).type
        if given != kind:
            raise RuntimeError(f"Invalid device, must be {label} device")
    raise type(err)(*err.args)


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook) -> RemovableHandle:
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    return h
