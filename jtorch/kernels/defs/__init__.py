"""OpDef records, one file per op family. Importing this package fills the registry."""

from . import binary, movement, unary  # noqa: F401
from . import reduction  # noqa: F401
