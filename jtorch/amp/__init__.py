"""torch.amp: autocast and the gradient scaler. jtorch has no reduced-precision matmul path
on the CPU (no bfloat16 kernels) and no CUDA device yet, so autocast regions run every op in
its own dtype (CUDA autocast warns once that it is disabled, as torch does without CUDA), and
the scaler is disabled where its device is unavailable: ``scale`` returns the loss,
``step`` steps the optimizer, ``update`` does nothing."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
