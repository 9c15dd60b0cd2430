"""Small real datasets shipped with jtorch (for the demo and the training tests).

``digits.csv.gz`` is the UCI optical-recognition handwritten-digits test set (1797 8x8
images, pixel values 0..16, labels in the last column), as distributed by scikit-learn
(BSD-3-Clause; see LICENSE.digits).
"""

from __future__ import annotations

import gzip
import os

import numpy as np

__all__ = ["load_digits"]


def load_digits() -> tuple:
    """(images float32 (1797, 1, 8, 8) scaled to [0, 1], labels int64 (1797,)) as NumPy
    arrays."""
    path = os.path.join(os.path.dirname(__file__), "digits.csv.gz")
    with gzip.open(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images = (data[:, :-1] / 16.0).reshape(-1, 1, 8, 8).astype(np.float32)
    return images, data[:, -1].astype(np.int64)
