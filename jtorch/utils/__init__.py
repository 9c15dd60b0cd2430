"""torch.utils: data loading (``jtorch.utils.data``)."""

from . import data  # noqa: F401
