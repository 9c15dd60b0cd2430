"""torch.amp: autocast and the gradient scaler. CPU autocast casts as torch's does: matmuls,
convolutions, ``linear``, ``prelu`` and attention run in bfloat16 (or the region's float16),
losses, ``prod``, linalg, fft and a few pooling/padding ops in float32, everything else in its
inputs' dtypes (``amp.state`` holds the lists' casts). There is no CUDA device yet: CUDA
autocast warns that it is disabled, as torch does without CUDA, and the scaler is disabled
where its device is unavailable: ``scale`` returns the loss, ``step`` steps the optimizer,
``update`` does nothing."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
