"""interpolate and reflect padding (memory-bound)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

FULL, QUICK = ((16, 32, 64, 64),), ((2, 4, 16, 16),)
LABEL = "{0[0]}x{0[1]}x{0[2]}x{0[3]}"
_MODES = {"bilinear_x2": {"scale_factor": 2, "mode": "bilinear", "align_corners": False},
          "nearest_x2": {"scale_factor": 2, "mode": "nearest"}}


def _interp(name, kw, quick):
    @register(f"resample/interpolate_{name}_fwd", full=FULL, quick=QUICK if quick else (),
              label=LABEL)
    def fwd(shape) -> Case:
        return Case(functional(lambda t, x: t.nn.functional.interpolate(x, **kw), [rand(*shape)]),
                    kind="memory", bytes=4 * 5 * np.prod(shape))  # read 1x, write 4x


for _n, _kw in _MODES.items():
    _interp(_n, _kw, _n == "bilinear_x2")


def _bilinear_fwd_bwd(t, x, g):
    t.nn.functional.interpolate(x, **_MODES["bilinear_x2"]).backward(g)
    x.grad = None


@register("resample/interpolate_bilinear_x2_fwd_bwd", full=FULL, label=LABEL)
def bilinear_fwd_bwd(shape) -> Case:
    n, c, h, w = shape
    return Case(functional(_bilinear_fwd_bwd, [rand(*shape), rand(n, c, 2 * h, 2 * w, seed=1)],
                           grad=(0,)),
                kind="memory", bytes=4 * 10 * np.prod(shape))


@register("resample/pad_reflect_3", full=FULL, label=LABEL)
def pad_reflect(shape) -> Case:
    n, c, h, w = shape
    pad = lambda t, x: t.nn.functional.pad(x, (3, 3, 3, 3), mode="reflect")  # noqa: E731
    return Case(functional(pad, [rand(*shape)],
                           numpy=lambda x: np.pad(x, ((0, 0), (0, 0), (3, 3), (3, 3)), "reflect")),
                kind="memory", bytes=4 * (np.prod(shape) + n * c * (h + 6) * (w + 6)))
