"""Guards: when a compiled graph may be replayed.

A call's guard key is a tuple: the arguments' structure, each tensor's (device class, shape,
strides, dtype, requires_grad), Python argument values, the grad mode, the default dtype, and
the state of the ``Scope`` the function reads (module training flags, parameter and buffer
identities, hooks, plain attributes; global and closure bindings). Equal keys replay; a new
key traces again. ``explain_miss`` names the first component that differs.
"""

from __future__ import annotations

import functools
import inspect
import math

from .. import _settings, dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..nn.modules.module import Module
from ..tensor import Tensor

_TENSOR = Tensor
_SCALARS = (bool, int, float, str, complex, type(None))


def value_key(v):
    """The guard key of one argument (tensors by geometry and dtype, Python values by value)."""
    if isinstance(v, _TENSOR):
        a = v._a
        return (a.__class__, a.shape, a.strides, v.dtype, v._requires_grad)
    t = type(v)
    if t in _SCALARS:
        if t is float and math.isnan(v):
            return (float, "nan")
        return (t, v)
    if t is tuple or t is list:
        return (t, tuple([value_key(x) for x in v]))
    if t is dict:
        return (dict, tuple([(k, value_key(x)) for k, x in v.items()]))
    if isinstance(v, (_dt.dtype, slice)) or v is Ellipsis:
        return (t, repr(v))
    return ("id", id(v))


def call_key(args: tuple, kwargs: dict, scope: Scope) -> tuple:
    """The guard key of a call (hot: a compiled function's per-call cost)."""
    ak = []
    for v in args:
        if v.__class__ is _TENSOR:  # spelled out for the commonest argument
            a = v._a
            ak.append((a.__class__, a.shape, a.strides, v.dtype, v._requires_grad))
        else:
            ak.append(value_key(v))
    if kwargs:
        ak.append(tuple([(k, value_key(x)) for k, x in kwargs.items()]))
    return (dispatch.grad_state.enabled, _dt._default.value, tuple(ak),
            scope.state() if scope.live else None, _settings._State.deterministic,
            _amp.on and _autocast_key())


def _autocast_key():
    """The CPU and CUDA autocast dtypes that are on in this thread (a traced graph holds its
    casts)."""
    en, dt = _amp.state.enabled, _amp.state.dtype
    return (dt["cpu"] if en.get("cpu") else False, dt["cuda"] if en.get("cuda") else False)


def masked_key(args: tuple, kwargs: dict, scope: Scope, mask: dict) -> tuple:
    """``call_key`` with the dynamic dims (``mask``: argument tensor number -> dims) of each
    tensor left out; strides become the row-major flag (they follow from the sizes)."""
    count = [0]

    def key(v):
        if isinstance(v, _TENSOR):
            i = count[0]
            count[0] += 1
            a = v._a
            dims = mask.get(i)
            if not dims:
                return (a.__class__, a.shape, a.strides, v.dtype, v._requires_grad)
            return (a.__class__, tuple([None if d in dims else n for d, n in enumerate(a.shape)]),
                    a.flags.c_contiguous, v.dtype, v._requires_grad)
        t = type(v)
        if t is tuple or t is list:
            return (t, tuple([key(x) for x in v]))
        if t is dict:
            return (dict, tuple([(k, key(x)) for k, x in v.items()]))
        return value_key(v)

    ak = [key(v) for v in args]
    if kwargs:
        ak.append(tuple([(k, key(x)) for k, x in kwargs.items()]))
    return (dispatch.grad_state.enabled, _dt._default.value, tuple(ak),
            scope.state() if scope.live else None, _settings._State.deterministic,
            _amp.on and _autocast_key())


def tensor_leaves(v, out: list) -> list:
    """The tensors inside ``v`` in key order (the graph's argument inputs)."""
    if isinstance(v, _TENSOR):
        out.append(v)
    elif type(v) is tuple or type(v) is list:
        for x in v:
            tensor_leaves(x, out)
    elif type(v) is dict:
        for x in v.values():
            tensor_leaves(x, out)
    return out


def explain_miss(old: tuple, new: tuple, names: list) -> str:
    """The first guard that failed between a cached key and a call's key."""
    if old[0] != new[0]:
        return f"grad mode changed: expected {old[0]}, got {new[0]}"
    if old[1] is not new[1]:
        return f"default dtype changed: expected {old[1].name}, got {new[1].name}"
    if old[4] != new[4]:
        return f"deterministic algorithms changed: expected {old[4]}, got {new[4]}"
    if old[5] != new[5]:
        return f"autocast changed: expected {old[5]}, got {new[5]}"
    oa, na = old[2], new[2]
    if len(oa) != len(na):
        return f"number of arguments changed: expected {len(oa)}, got {len(na)}"
    for i, (o, n) in enumerate(zip(oa, na)):
        if o != n:
            name = names[i] if i < len(names) else f"arg{i}"
            return _describe_diff(name, o, n)
    return "module or global state changed (training flag, parameters, hooks or attributes)"


def _describe_diff(name: str, o, n) -> str:
    if isinstance(o, tuple) and len(o) == 5 and isinstance(n, tuple) and len(n) == 5 \
            and isinstance(o[1], tuple):
        labels = ("device", "size", "stride", "dtype", "requires_grad")
        for lab, a, b in zip(labels, o, n):
            if a != b:
                if lab == "size" and len(a) == len(b):
                    d = next(i for i in range(len(a)) if a[i] != b[i])
                    return f"tensor '{name}' size mismatch at index {d}. expected {a[d]}, actual {b[d]}"
                if lab == "device":
                    a, b = getattr(a, "__name__", a), getattr(b, "__name__", b)
                return f"tensor '{name}' {lab} mismatch. expected {a}, actual {b}"
    return f"argument '{name}' changed: expected {_short(o)}, got {_short(n)}"


def _short(k) -> str:
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], type):
        return repr(k[1])
    return repr(k)


def arg_names(fn, args: tuple, kwargs: dict) -> list:
    """Names for the arguments (placeholder names, guard messages)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(len(args)):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        elif params and params[-1].kind is params[-1].VAR_POSITIONAL or any(
                p.kind is p.VAR_POSITIONAL for p in params):
            var = next(p.name for p in params if p.kind is p.VAR_POSITIONAL)
            names.append(f"{var}_{i}")
        else:
            names.append(f"arg{i}")
    names.extend(kwargs)
    return names


class Scope:
    """What a function reads besides its arguments: modules (their flags, parameters, buffers,
    hooks and plain attributes), tensors and Python values bound in its globals and closure."""

    def __init__(self) -> None:
        self.modules: list = []  # (qualified name, module)
        self.bindings: list = []  # (description, getter) whose value's identity/value is guarded
        self.tensors: dict = {}  # id(tensor) -> (tensor, placeholder name)
        self.live = False
        self._seen_code: set = set()

    def add_module(self, prefix: str, m: Module) -> None:
        for name, sub in m.named_modules(remove_duplicate=True):
            if any(sub is s for _, s in self.modules):
                continue
            self.add_class(type(sub))
            q = f"{prefix}.{name}" if name else prefix
            self.modules.append((q, sub))
            for pn, p in list(sub._parameters.items()) + list(sub._buffers.items()):
                if p is not None and id(p) not in self.tensors:
                    self.tensors[id(p)] = (p, f"{q}_{pn}".replace(".", "_"))
        self.live = True

    def add_function(self, fn) -> None:
        """The globals and closure cells ``fn``'s code names: modules, tensors, Python values,
        and, through the user's own functions and classes it names, theirs (a helper reading a
        global is guarded like the function itself)."""
        code = getattr(fn, "__code__", None)
        if code is None or code in self._seen_code:
            return
        self._seen_code.add(code)
        glb = getattr(fn, "__globals__", {})
        for name in _names(code):
            if name in glb:
                self._bind(name, glb[name], functools.partial(glb.get, name))
        for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            self._bind(name, v, functools.partial(_cell, cell))

    def _bind(self, name: str, v, getter) -> None:
        if isinstance(v, _TENSOR):
            self.tensors.setdefault(id(v), (v, name))
        elif isinstance(v, Module):
            self.add_module(name, v)
        elif _is_user(v) and (inspect.isfunction(v) or inspect.isclass(v)):
            self.add_class(v) if inspect.isclass(v) else self.add_function(v)
        elif type(v) not in _SCALARS and not _is_optimizer(v):
            return
        self.bindings.append((name, getter))
        self.live = True

    def add_class(self, cls) -> None:
        """The functions a user's class defines (methods a module's forward calls)."""
        for klass in cls.__mro__:
            if not _is_user(klass):
                continue
            for v in vars(klass).values():
                v = getattr(v, "__func__", v)  # staticmethod / classmethod
                if inspect.isfunction(v):
                    self.add_function(v)

    def state(self) -> tuple:
        out = []
        for _, m in self.modules:
            d = m.__dict__
            out.append((tuple([(k, v) for k, v in d.items() if type(v) in _SCALARS]),
                        # (negative: a parameter that does not require grad; freezing one
                        # changes which .grad a training step makes)
                        tuple([id(v) if v is None or v._requires_grad else -id(v)
                               for v in d["_parameters"].values()]),
                        tuple([id(v) for v in d["_buffers"].values()]),
                        tuple([id(v) for v in d["_modules"].values()]),
                        len(d["_forward_hooks"]), len(d["_forward_pre_hooks"])))
        for _, g in self.bindings:
            v = g()
            out.append(v if type(v) in _SCALARS else id(v))
        return tuple(out)


def _is_optimizer(v) -> bool:
    """An optimizer the function names: a cached call replays its ``step`` (by identity)."""
    return hasattr(v, "param_groups") and hasattr(v, "step") and not isinstance(v, type)


def _is_user(obj) -> bool:
    """Code of the user's (not of jtorch, Python or a library it ships with)."""
    mod = getattr(obj, "__module__", None) or ""
    return not (mod == "builtins" or mod.split(".")[0] in _LIBRARIES)


_LIBRARIES = frozenset(["jtorch", "torch", "numpy", "numba", "scipy", "typing", "functools",
                        "collections", "abc", "enum", "dataclasses", "math", "operator"])


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return None


def _names(code) -> list:
    """Global names a code object (and the code objects nested in it) reads."""
    names = list(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names.extend(_names(c))
    return names
