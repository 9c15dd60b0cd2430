"""OpDef records, one file per op family. Importing this package fills the registry."""

from . import (  # noqa: F401
    binary,
    conv,
    conversion,
    creation,
    indexing,
    linalg,
    loss,
    movement,
    normalization,
    optim,
    pooling,
    random,
    reduction,
    resample,
    rnn,
    scan,
    softmax,
    sort,
    unary,
)
