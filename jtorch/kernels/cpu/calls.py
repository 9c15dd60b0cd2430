"""``outlined(fn)(*args)``: call a jitted function from a kernel without letting LLVM inline
it.

Why: inside a ``prange`` body Numba builds a gufunc whose vector loop sits in a loop nest
over the schedule; there LLVM rematerialises every constant of a long scalar function
(fastmath polynomials) inside the vector loop instead of hoisting it, and the same loop runs
~1.4x slower per element than in a plain ``@njit`` function (gelu: 1.43 vs 1.06 ns per
element on one thread). Calling a serial loop, compiled on its own, per chunk keeps the
serial code. A callee that raises inside a ``prange`` loses its exception (as any code
there does): loops that can raise (integer division) stay serial.
"""

from __future__ import annotations

import hashlib

from numba import types
from numba.core import cgutils
from numba.core.typing import signature
from numba.extending import intrinsic


def outlined(fn):
    """An intrinsic that calls the jitted function ``fn`` with a ``noinline`` call site.
    ``fn`` is bound here rather than passed as an argument: a dispatcher passed as a value is
    lowered to its address, which Numba's disk cache refuses."""
    fnty = types.Dispatcher(fn)

    @intrinsic
    def call(typingctx, *args):
        star = args[0] if len(args) == 1 and isinstance(args[0], types.BaseTuple) else \
            types.StarArgTuple.from_types(args)
        sig = typingctx.resolve_function_type(fnty, tuple(star.types), {})
        if sig is None:
            return None
        ret = sig.return_type

        def codegen(context, builder, outer_sig, llargs):
            vals = cgutils.unpack_tuple(builder, llargs[0], len(star.types))
            fn.compile(sig.args)
            cres = fn.overloads[tuple(sig.args)]
            context.add_linking_libs([cres.library])
            callee = context.declare_function(builder.module, cres.fndesc)
            _, res = context.call_conv.call_function(builder, callee, ret, sig.args, vals)
            for instr in reversed(builder.block.instructions):
                if getattr(instr, "callee", None) is callee:
                    instr.attributes.add("noinline")
                    break
            else:  # pragma: no cover - the call just emitted is always found
                raise AssertionError("outlined: emitted call not found")
            return res

        return signature(ret, star), codegen

    return call


_fp = None


def fingerprint() -> str:
    """Hash of this file: generated kernels that use ``outlined`` key their cache on it."""
    global _fp
    if _fp is None:
        with open(__file__, "rb") as f:
            _fp = hashlib.sha1(f.read()).hexdigest()
    return _fp
