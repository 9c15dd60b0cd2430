"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, data, dispatch, fft, func, gpt, linalg,  # noqa: F401
               matmul, optim, pointwise, pooling, reduction, resample, rnn, sparse, startup,
               train)
