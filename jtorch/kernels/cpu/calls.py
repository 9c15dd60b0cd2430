"""``outlined(fn)(*args)``: call a jitted function from a kernel without letting LLVM inline
it; ``external(fn)(*args)``: without linking its code in either (see ``external``).

Why: inside a ``prange`` body Numba builds a gufunc whose vector loop sits in a loop nest
over the schedule; there LLVM rematerialises every constant of a long scalar function
(fastmath polynomials) inside the vector loop instead of hoisting it, and the same loop runs
~1.4x slower per element than in a plain ``@njit`` function (gelu: 1.43 vs 1.06 ns per
element on one thread). Calling a serial loop, compiled on its own, per chunk keeps the
serial code. A callee that raises inside a ``prange`` loses its exception (as any code
there does): loops that can raise (integer division) stay serial.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import sys

from llvmlite import binding as llvm
from numba import types
from numba.core import cgutils
from numba.core.typing import signature
from numba.extending import intrinsic


def _calling(fn, emit):
    """An intrinsic that calls the jitted function ``fn`` with the signature its arguments
    resolve to; ``emit(context, builder, sig, vals)`` lowers the call. ``fn`` is bound here
    rather than passed as an argument: a dispatcher passed as a value is lowered to its
    address, which Numba's disk cache refuses."""
    fnty = types.Dispatcher(fn)

    @intrinsic
    def call(typingctx, *args):
        star = args[0] if len(args) == 1 and isinstance(args[0], types.BaseTuple) else \
            types.StarArgTuple.from_types(args)
        sig = typingctx.resolve_function_type(fnty, tuple(star.types), {})
        if sig is None:
            return None

        def codegen(context, builder, outer_sig, llargs):
            vals = cgutils.unpack_tuple(builder, llargs[0], len(star.types))
            return emit(context, builder, sig, vals)

        return signature(sig.return_type, star), codegen

    return call


def outlined(fn):
    """An intrinsic that calls the jitted function ``fn`` with a ``noinline`` call site."""

    def emit(context, builder, sig, vals):
        fn.compile(sig.args)
        cres = fn.overloads[tuple(sig.args)]
        context.add_linking_libs([cres.library])
        callee = context.declare_function(builder.module, cres.fndesc)
        _, res = context.call_conv.call_function(builder, callee, sig.return_type, sig.args,
                                                 vals)
        for instr in reversed(builder.block.instructions):
            if getattr(instr, "callee", None) is callee:
                instr.attributes.add("noinline")
                break
        else:  # pragma: no cover - the call just emitted is always found
            raise AssertionError("outlined: emitted call not found")
        return res

    return _calling(fn, emit)


def external(fn):
    """An intrinsic that calls the jitted function ``fn`` by a process symbol: the caller
    declares it and does not link ``fn``'s code in.

    Why: a linked callee is optimised and turned into machine code again inside every caller
    (``outlined`` too): two entries over one large tree (a serial and a parallel one) cost
    its cold compile twice, 2.5 s for the direct convolution's micro-kernels. Through a
    symbol, ``fn`` compiles once, as its own function. The symbol is entered into LLVM's
    table when the call is lowered, and again by a ``reload_init`` entry (pickled with the
    caller's cache entry, run before its machine code loads) in a process that loads the
    caller from Numba's cache. ``fn`` must be a module-level ``@njit`` function; its
    exceptions are not propagated (as with ``outlined``)."""
    where = (fn.py_func.__module__, fn.py_func.__qualname__)

    def emit(context, builder, sig, vals):
        name = _symbol(where, sig.args)
        register = functools.partial(_register, where, tuple(sig.args), name)
        register()
        context.active_code_library._reload_init.add(register)
        fnty = context.call_conv.get_function_type(sig.return_type, sig.args)
        callee = cgutils.get_or_insert_function(builder.module, fnty, name)
        _, res = context.call_conv.call_function(builder, callee, sig.return_type, sig.args,
                                                 vals)
        return res

    return _calling(fn, emit)


def _symbol(where: tuple, args: tuple) -> str:
    key = f"{where[0]}.{where[1]}{tuple(str(a) for a in args)}"
    return "jtorch_ext_" + hashlib.sha1(key.encode()).hexdigest()[:20]


def _register(where: tuple, args: tuple, name: str) -> None:
    """Compile (or load) ``where``'s function for ``args`` and enter its address as ``name``
    into LLVM's symbol table (a caller's cache entry runs this before its code loads)."""
    if name in _registered:
        return
    module = sys.modules.get(where[0]) or importlib.import_module(where[0])
    fn = module
    for part in where[1].split("."):
        fn = getattr(fn, part)
    fn.compile(args)
    cres = fn.overloads[args]
    addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    llvm.add_symbol(name, addr)
    _registered[name] = addr


_registered: dict = {}  # symbol -> address, this process


_fp = None


def fingerprint() -> str:
    """Hash of this file: generated kernels that use ``outlined`` key their cache on it."""
    global _fp
    if _fp is None:
        with open(__file__, "rb") as f:
            _fp = hashlib.sha1(f.read()).hexdigest()
    return _fp
