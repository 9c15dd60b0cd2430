"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, dispatch, matmul, optim, pointwise, pooling,  # noqa: F401
               reduction, resample, startup, train)
