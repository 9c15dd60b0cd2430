"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, data, dispatch, fft, func, gpt, indexing,  # noqa: F401
               linalg, matmul, optim, pointwise, pooling, reduction, resample, rnn, sparse,
               startup, train)
