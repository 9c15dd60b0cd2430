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


def njit(*args, **options):
    """``numba.njit(*args, **options)``, without the cfunc wrapper unless asked for."""
    options.setdefault("no_cfunc_wrapper", True)
    return numba.njit(*args, **options)
