"""Benchmark definitions, one file per area; importing this package registers them all."""

from . import (autograd, compile, conv, dispatch, func, gpt, matmul, optim,  # noqa: F401
               pointwise, pooling, reduction, resample, startup, train)
from . import data  # noqa: F401  (the data pipeline: collate, loader, indexing)
