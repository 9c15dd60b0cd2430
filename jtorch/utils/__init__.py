"""torch.utils: data loading (``jtorch.utils.data``), activation checkpointing."""

from . import checkpoint, data  # noqa: F401
