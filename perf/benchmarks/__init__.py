"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, data, dispatch, fft, func, gpt, matmul,  # noqa: F401
               optim, pointwise, pooling, reduction, resample, rnn, sparse, startup, train)
