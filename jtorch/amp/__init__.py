"""torch.amp: autocast and the gradient scaler. jtorch's autocast does not cast ops to a lower
precision (torch's CPU autocast runs matmuls and convolutions in bfloat16; jtorch has the dtype
but not the per-op cast lists) and there is no CUDA device yet, so autocast regions run every
op in its own dtype (CUDA autocast warns once that it is disabled, as torch does without
CUDA), and the scaler is disabled where its device is unavailable: ``scale`` returns the loss,
``step`` steps the optimizer, ``update`` does nothing."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
