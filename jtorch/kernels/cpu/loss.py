"""Loss helpers: the class-index target check of nll_loss / cross_entropy in one pass.

torch validates targets inside its NLL kernel; composed of tensor ops the same check took six
pointwise kernels, a reduction and a masked fill per call, more than the loss itself on a
training batch.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def nll_targets(target, ignore_index, n_classes, valid, safe):
    """valid = target != ignore_index; safe = target where valid, else 0 (int64); all flat.
    Returns the position of the first valid target outside [0, n_classes), or -1."""
    bad = -1
    for i in range(target.shape[0]):
        t = numba.int64(target[i])
        v = t != ignore_index
        valid[i] = v
        safe[i] = t if v else 0
        if v and (t < 0 or t >= n_classes) and bad < 0:
            bad = i
    return bad
