"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, dispatch, func, matmul, optim, pointwise,  # noqa: F401
               pooling, reduction, resample, startup, train)
