"""OpDef records, one file per op family. Importing this package fills the registry."""

from . import (  # noqa: F401
    binary,
    conv,
    creation,
    linalg,
    movement,
    pooling,
    reduction,
    resample,
    unary,
)
