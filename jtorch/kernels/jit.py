"""``njit``: ``numba.njit`` with the options every jtorch CPU kernel and helper shares.

Why a wrapper: Numba builds, beside each compiled function, a C-callable wrapper (``cfunc``)
for the case that the function is passed as a first-class function value. jtorch never passes
one (kernels call each other directly, or by symbol: ``cpu.calls``), and building the wrapper
(its lowering, its LLVM passes, its machine code) was ~10% of a cold process's compile time:
the demo CNN's first training step compiled in 16.3 -> 14.0 s on one core (four alternating
pairs of fresh processes, every pair faster without it).
"""

from __future__ import annotations

import numba


def _noalias_option() -> bool:
    """Make Numba's ``Flags.noalias`` a jit option (``noalias=True``): every array argument's
    data is then declared ``noalias`` to LLVM, as Numba's parfor lowering declares it for a
    gufunc whose arrays it found apart. Without it LLVM must assume that a store into a
    kernel's scratch or output may change its input, and keeps loops with table-driven
    reads scalar (a max pool's row pass: 109 -> 47 ms over 4096 56x56 planes). False where
    this Numba has no such flag (the option is then dropped)."""
    try:
        from numba.core import compiler, cpu, options

        if not hasattr(compiler.Flags, "noalias"):
            return False
        if not hasattr(cpu.CPUTargetOptions, "noalias"):
            cpu.CPUTargetOptions.noalias = options.TargetOptions.Mapping("noalias")
        return True
    except (ImportError, AttributeError):
        return False


NOALIAS = _noalias_option()


def njit(*args, **options):
    """``numba.njit(*args, **options)``, without the cfunc wrapper unless asked for.
    ``noalias=True`` promises that no two array arguments share memory (``_noalias_option``)."""
    options.setdefault("no_cfunc_wrapper", True)
    if not NOALIAS:
        options.pop("noalias", None)
    return numba.njit(*args, **options)
