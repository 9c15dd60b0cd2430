"""jtorch.nn.functional.__all__: every public function it defines or re-exports, all of them
torch.nn.functional names, and exactly what ``from jtorch.nn.functional import *`` binds."""

from __future__ import annotations

import inspect

import torch.nn.functional as TF

import jtorch.nn.functional as F


def test_all_lists_every_public_function():
    public = {n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))
              and not inspect.isclass(getattr(F, n)) and not inspect.ismodule(getattr(F, n))}
    assert sorted(public) == F.__all__


def test_all_names_are_torch_functional_names():
    assert F.__all__ == sorted(set(F.__all__))
    assert [n for n in F.__all__ if not callable(getattr(TF, n, None))] == []


def test_every_torch_function_we_have_is_listed():
    ours = [n for n in dir(TF) if not n.startswith("_") and inspect.isfunction(getattr(TF, n))
            and hasattr(F, n)]
    assert [n for n in ours if n not in F.__all__] == []


def test_star_import_gives_all():
    ns: dict = {}
    exec("from jtorch.nn.functional import *", ns)
    assert sorted(set(ns) - {"__builtins__"}) == F.__all__
    assert {"relu", "conv2d", "cross_entropy", "layer_norm", "scaled_dot_product_attention",
            "interpolate", "embedding", "max_pool2d", "linear"} <= set(ns)
