"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, data, dispatch, func, gpt, matmul, optim,  # noqa: F401
               pointwise, pooling, reduction, resample, rnn, sparse, startup, train)
