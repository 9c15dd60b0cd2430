"""Kernels: the op registry (``registry``), op records (``defs``), and per-device loop
templates (``cpu``) compiled from those records."""

import hashlib
import os

from . import cache_locator

cache_locator.install()

_fm_fp = None


def fastmath_fingerprint() -> str:
    """Hash of the fastmath sources (every module of the package, with its name): it keys the
    cache of the generated kernels, which inline them, and of fastmath's own implementations."""
    global _fm_fp
    if _fm_fp is None:
        folder = os.path.join(os.path.dirname(__file__), "fastmath")
        h = hashlib.sha1()
        try:
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), "rb") as f:
                        h.update(name.encode() + b"\0" + f.read())
            _fm_fp = h.hexdigest()
        except OSError:
            _fm_fp = "none"
    return _fm_fp
