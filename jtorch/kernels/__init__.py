"""Kernels: the op registry (``registry``), op records (``defs``), and per-device loop
templates (``cpu``) compiled from those records."""

import hashlib
import os

from . import cache_locator

cache_locator.install()

_fm_fp = None


def fastmath_fingerprint() -> str:
    """Hash of the fastmath source: generated kernels inline it, so it keys their cache."""
    global _fm_fp
    if _fm_fp is None:
        path = os.path.join(os.path.dirname(__file__), "fastmath.py")
        try:
            with open(path, "rb") as f:
                _fm_fp = hashlib.sha1(f.read()).hexdigest()
        except OSError:
            _fm_fp = "none"
    return _fm_fp
