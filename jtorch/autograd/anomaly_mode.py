"""Anomaly detection: nodes remember the forward stack that made them, errors in backward are
reported with it, and a node whose gradient holds nan raises (``engine._apply``)."""

from __future__ import annotations

import functools
import warnings

from .node import anomaly

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
           "set_detect_anomaly"]


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


class detect_anomaly:
    """Context manager and decorator that turns anomaly detection on (it warns that it is on:
    recording every forward stack slows every op)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = (anomaly.enabled, anomaly.check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc) -> None:
        anomaly.enabled, anomaly.check_nan = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """``set_detect_anomaly(mode)`` switches anomaly detection now; as a context manager it
    restores the previous state on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        anomaly.enabled, anomaly.check_nan = self.prev
