"""``GradScaler``: loss scaling for float16 gradients; disabled, with torch's warning, when
its device ("cuda" by default) is not available."""

from __future__ import annotations

import warnings


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()


class GradScaler:
    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._tracker = 0
        self._unscaled: dict = {}  # id(optimizer) -> whether its gradients had inf or nan

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """The outputs times the scale (unchanged when disabled)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divides the optimizer's gradients by the scale (once per step) and notes whether
        any is inf or nan."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        inv = 1.0 / self._scale
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(inv)
                    found = found or not bool(p.grad.isfinite().all())
        self._unscaled[id(optimizer)] = found

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless done) and steps; a step with inf or nan gradients is skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """The next scale: backed off after a step with inf or nan gradients, grown after
        ``growth_interval`` clean steps in a row."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._tracker = 0
        else:
            self._tracker += 1
            if self._tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._tracker = 0
        self._unscaled = {}

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        self._scale = float(state_dict["scale"])
        self._tracker = int(state_dict.get("_growth_tracker", 0))
