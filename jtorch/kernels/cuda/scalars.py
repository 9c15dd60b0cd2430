"""The OpDefs' scalar functions as CUDA device functions: copies with CUDA-lowerable twins.

The scalar functions (``kernels/defs``) and their helpers (``fastmath``, ``special_math``) call a
few things Numba's CUDA target does not lower: NumPy ufuncs on scalars (``np.floor``,
``np.trunc``, ``np.rint``, ``np.fmod``, ``np.signbit``, ``np.nextafter``, ``np.sqrt``) and the
builtins ``max``/``min`` of two floats (its typing tries a one-argument overload). Editing
those functions would change the CPU kernels' on-disk cache keys, so the CUDA stagers compile
copies instead: ``substitute(fn)`` rebuilds ``fn`` with each such name bound to its twin in
``TWINS`` (same semantics, bit for bit), and every function it reaches the same way,
recursively: through its globals and closure cells (njit helpers), attributes of modules it
names (``sp.digamma`` -> ``_digamma64`` -> ``np.trunc``) and fastmath stubs' float32/float64
implementations (``fm.hypot`` -> ``_hypot32`` -> ``np.sqrt``). What reaches no twin comes back
unchanged, the very object the CPU kernels use.

The twins:
- ``floor ceil trunc rint fmod nextafter sqrt``: libdevice on CUDA (``floorf`` or ``floor`` ...:
  the float32 or float64 variant as Numba's CPU ufunc picks its loop); all are exact there
  (rint rounds half to even, fmod takes the dividend's sign, sqrt is IEEE). On the CPU (the
  simulator runs kernels on it) they are the NumPy functions themselves.
- ``signbit``: the sign bit read through a bit cast (set for -0.0 and a negative nan; an
  integer's is ``x < 0``, a bool's False, as Numba's CPU ``np.signbit``), on both targets.
- ``max``/``min`` of two values: ``b if b > a else a`` / ``b if b < a else a``, Numba's CPU
  lowering of the builtins (the first argument wins ties and a nan second argument; a nan
  first argument is returned), on both targets. (CUDA's own lowering of a float max/min is
  libdevice ``fmax``/``fmin``, which drop nans.)

>>> from jtorch.kernels import registry
>>> substitute(registry.scalar_of("exp")) is registry.scalar_of("exp")
True
"""

from __future__ import annotations

import builtins
import threading
import types as pytypes

import numba
import numpy as np
from numba import types
from numba.core.registry import CPUDispatcher
from numba.extending import overload
from numba.np.numpy_support import ufunc_find_matching_loop

from ..fastmath._core import _register
from ..fastmath._intrinsics import _f32_as_i32, _f64_as_i64
from . import target

_lock = threading.RLock()
# id(x) -> (x, what replaces it), x kept alive so that its id stays its own
_done: dict[int, tuple] = {}  # values -> substitute(value)
_rebuilt: dict[int, tuple] = {}  # functions -> rebuild(fn)
_modules: dict[int, tuple] = {}  # modules -> their views
# being substituted or rebuilt: a reference back to one of these (a recursive helper) keeps
# the original, which then must reach no twin itself
_busy: set[int] = set()


# --------------------------------------------------------------------------------------------
# Twins
# --------------------------------------------------------------------------------------------


def _float_loop(ufunc, args):
    """``np.float32`` or ``np.float64``: the loop Numba's CPU ``ufunc`` runs for these argument
    types (None where that is not a float loop: integer inputs, which have integer loops)."""
    try:
        loop = ufunc_find_matching_loop(ufunc, args)
    except Exception:  # noqa: BLE001  (no loop: no twin either)
        return None
    kinds = {str(t) for t in (*loop.inputs, *loop.outputs)} if loop else set()
    return {"float32": np.float32, "float64": np.float64}.get(kinds.pop()) if len(kinds) == 1 else None


def _libdevice_twin(ufunc, name: str):
    """A stub for ``ufunc`` of one or two arguments: libdevice ``<name>f`` or ``<name>`` on CUDA
    over the arguments cast as Numba's CPU ufunc loop casts them, the ufunc itself on the CPU."""
    from numba.cuda import libdevice

    impl = {np.float32: getattr(libdevice, name + "f"), np.float64: getattr(libdevice, name)}
    if ufunc.nin == 1:
        def twin(x):
            return ufunc(x)

        def cpu(x):
            return lambda x: ufunc(x)

        def cuda(x):
            ft = _float_loop(ufunc, (x,))
            fn = impl.get(ft)
            return None if fn is None else (lambda x: fn(ft(x)))
    else:
        def twin(x, y):
            return ufunc(x, y)

        def cpu(x, y):
            return lambda x, y: ufunc(x, y)

        def cuda(x, y):
            ft = _float_loop(ufunc, (x, y))
            fn = impl.get(ft)
            return None if fn is None else (lambda x, y: fn(ft(x), ft(y)))
    twin.__name__ = twin.__qualname__ = f"cuda_{ufunc.__name__}"
    overload(twin, target="cpu")(cpu)
    overload(twin, target="cuda")(cuda)
    return twin


def signbit(x):
    return np.signbit(x)


@overload(signbit, target="generic")
def _signbit(x):
    if x == types.float32:
        return lambda x: _f32_as_i32(x) < 0
    if x == types.float64:
        return lambda x: _f64_as_i64(x) < 0
    if isinstance(x, types.Float):  # float16: exact in float32
        return lambda x: _f32_as_i32(np.float32(x)) < 0
    if isinstance(x, types.Boolean):
        return lambda x: False
    if isinstance(x, types.Integer):
        return lambda x: x < 0
    return None


@numba.njit(inline="always")
def maximum(a, b):
    return b if b > a else a  # noqa: FURB136  (the builtin is what CUDA cannot lower)


@numba.njit(inline="always")
def minimum(a, b):
    return b if b < a else a  # noqa: FURB136  (the builtin is what CUDA cannot lower)


def _twins() -> dict:
    twins = {np.signbit: signbit, builtins.max: maximum, builtins.min: minimum}
    for ufunc, name in [(np.floor, "floor"), (np.ceil, "ceil"), (np.trunc, "trunc"), (np.rint, "rint"),
                        (np.fmod, "fmod"), (np.nextafter, "nextafter"), (np.sqrt, "sqrt")]:
        twins[ufunc] = _libdevice_twin(ufunc, name)
    return twins


TWINS: dict = _twins()
_TWIN_IDS = {id(k): v for k, v in TWINS.items()}


# --------------------------------------------------------------------------------------------
# Substitution
# --------------------------------------------------------------------------------------------


def substitute(value):
    """``value`` with every twin in place: a twin itself, a rebuilt njit dispatcher, fastmath
    stub or module view where ``value`` reaches one, else ``value`` unchanged. Cached."""
    return _memo(_done, value, _substitute)


def _memo(table: dict, value, make):
    """``make(value)`` once per object (``table``: id -> (object, result)); a value met again
    while it is being made (a recursive helper) stands for itself."""
    key = id(value)
    hit = table.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    with _lock:
        hit = table.get(key)
        if hit is not None and hit[0] is value:
            return hit[1]
        if key in _busy:
            return value
        _busy.add(key)
        try:
            new = make(value)
        finally:
            _busy.discard(key)
        table[key] = (value, new)
        return new


def _substitute(value):
    twin = _TWIN_IDS.get(id(value))
    if twin is not None:
        return twin
    if isinstance(value, CPUDispatcher):  # an njit helper: the same options over the rebuilt function
        py = rebuild(value.py_func)
        if py is value.py_func:
            return value
        options = {k: v for k, v in value.targetoptions.items() if k != "nopython"}
        return numba.njit(**options)(py)
    if isinstance(value, pytypes.FunctionType) and hasattr(value, "_impl32") and hasattr(value, "_impl64"):
        # a fastmath stub (``fastmath._core._register``): register a copy over the rebuilt pair
        i32, i64 = rebuild(value._impl32), rebuild(value._impl64)
        if i32 is value._impl32 and i64 is value._impl64:
            return value
        return _register(_copy(value, value.__globals__, value.__closure__), i32, i64)
    return value  # anything else (other plain functions are Python-only or overloaded already)


def rebuild(fn: pytypes.FunctionType) -> pytypes.FunctionType:
    """``fn`` over new globals and closure cells in which every twin is in place (``fn``
    itself where nothing changes). Names are found in the code's ``co_names``: globals,
    builtins, and the attributes of modules it names."""
    return _memo(_rebuilt, fn, _rebuild)


def _rebuild(fn):
    names = _names(fn.__code__)
    glb = fn.__globals__
    changed = {}
    for name in names:
        if name in glb:
            value = glb[name]
            new = _module(value, names) if isinstance(value, pytypes.ModuleType) else substitute(value)
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
            new = substitute(value)
        else:
            continue
        if new is not value:
            changed[name] = new
    cells = fn.__closure__
    if cells:
        new_cells = tuple(_cell(c) for c in cells)
        if any(a is not b for a, b in zip(new_cells, cells)):
            cells = new_cells
    if not changed and cells is fn.__closure__:
        return fn
    return _copy(fn, {**glb, **changed}, cells)


def _cell(cell):
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return cell
    new = substitute(value)
    return cell if new is value else pytypes.CellType(new)


def _names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _names(c)
    return names


def _copy(fn, glb: dict, cells):
    new = pytypes.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, cells)
    new.__qualname__ = fn.__qualname__
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__doc__ = fn.__doc__
    return new


class _ModuleView(pytypes.ModuleType):
    """A module whose attributes are read through ``substitute`` (``np`` with its twins)."""

    def __init__(self, of: pytypes.ModuleType) -> None:
        super().__init__(of.__name__, of.__doc__)
        self._of = of

    def __getattr__(self, name: str):
        return substitute(getattr(self._of, name))


def _module(mod: pytypes.ModuleType, names: set):
    """A view of ``mod`` if one of ``names`` is an attribute of it with a substitute, else
    ``mod``."""
    attrs = vars(mod)  # not getattr: that would import lazily loaded submodules
    for name in names:
        value = attrs.get(name)
        if value is not None and substitute(value) is not value:
            break
    else:
        return mod
    hit = _modules.get(id(mod))
    if hit is None:
        hit = _modules[id(mod)] = (mod, _ModuleView(mod))
    return hit[1]


# --------------------------------------------------------------------------------------------
# What the generated CUDA modules import
# --------------------------------------------------------------------------------------------


def scalar_of(name: str, which: str = "scalar"):
    """``registry.scalar_of`` for CUDA: the op's scalar function as an always-inlined njit
    function (CUDA compiles it as a device function), with the twins in place."""
    from .. import registry

    return _device(registry.scalar_of(name, which))


def part_of(name: str, part: str):
    """``cpu.reduce.part_of`` for CUDA: a reduction's map/combine/post with the twins in place."""
    from ..cpu import reduce

    return _device(reduce.part_of(name, part))


def _device(fn):
    """``substitute(fn)``; under the simulator, which calls it as a CPU function, compiled with
    the error model CUDA compiles kernels with (``numpy``: x / 0 is inf or nan, no raise)."""
    fn = substitute(fn)
    if not target.SIMULATOR or not isinstance(fn, CPUDispatcher):  # NUMBA_DISABLE_JIT=1: Python
        return fn
    hit = _simulated.get(id(fn))
    if hit is None or hit[0] is not fn:
        options = {k: v for k, v in fn.targetoptions.items() if k != "nopython"}
        hit = _simulated[id(fn)] = (fn, numba.njit(**options, error_model="numpy")(fn.py_func))
    return hit[1]


_simulated: dict[int, tuple] = {}
