"""``kernels.jit.njit``: jtorch's options on top of Numba's."""

from __future__ import annotations

import numpy as np

from jtorch.kernels import jit


def test_noalias_option_declares_array_arguments_apart():
    """``noalias=True`` reaches Numba's ``Flags.noalias``: the arrays' data pointers carry
    LLVM's ``noalias`` (what lets a max pool's row pass vectorise); without it they do not.
    Where Numba lacks the flag the option is dropped and the kernel still compiles."""

    def scale(a, b):
        for i in range(a.size):
            b[i] = a[i] * 2.0

    marked = jit.njit(noalias=True)(scale)
    plain = jit.njit(scale)
    a, b = np.arange(5.0), np.empty(5)
    marked(a, b)
    np.testing.assert_array_equal(b, 2 * a)
    plain(a, b)

    def noalias_args(f) -> int:  # (the return and exception pointers always carry it)
        head = f.inspect_llvm(f.signatures[0]).split("define", 2)[1].split("\n")[0]
        return head.count("noalias")

    assert noalias_args(marked) > noalias_args(plain) if jit.NOALIAS else \
        noalias_args(marked) == noalias_args(plain)
