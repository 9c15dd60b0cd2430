"""Every swept public call (``tests/op_samples.py``: the patterns and hand-written samples the
meta sweep runs) on CUDA tensors against the same call on CPU tensors.

A call passes when both raise the same exception type, or both return results of the same
structure whose tensors agree in shape and dtype, sit on the device their CPU twins' inputs
were moved to, and hold the same values (exactly for integers and bools; floats within a
tolerance: products and reductions sum in another order on the device). Random calls are
seeded the same on both sides; a call that drew random numbers on the device (a native
sampler, ``philox.DRAWS``) is compared by structure only (shape, dtype, device), as its
numbers come from the device's Philox stream, not the CPU's generator (as in torch).

Usage: ``python tests/cuda/cuda_op_sweep.py [--device] [--samples] [--variants V,...]
[name ...]`` (no ``--device``: Numba's simulator). Prints one JSON object: the calls run, the
failures (call, variant, what differed), and the ops that ran their CPU kernel on host copies
(``eager.FALLBACKS``).
"""

import json
import os
import sys

DEVICE = "--device" in sys.argv
if not DEVICE:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from helpers import leaves, tree_map
from op_samples import PATTERNS, SAMPLES
from test_op_path import _args, _inputs, _outcome, _target

import jtorch
from jtorch.kernels.cuda import eager, philox
from jtorch.tensor import Tensor

RTOL = {"float32": 1e-4, "float64": 1e-9, "complex64": 1e-4, "complex128": 1e-9,
        "float16": 1e-2, "bfloat16": 2e-2}


def to_cuda(x, moved: dict):
    """A CUDA twin of CPU tensor ``x`` (views of one storage stay views of one storage, so
    in-place calls through them behave alike)."""
    if not isinstance(x, Tensor) or x.is_sparse:
        return x
    base = x._base if x._base is not None else x
    cb = moved.get(id(base))
    if cb is None:
        cb = moved[id(base)] = base.detach().to("cuda")
    c = cb
    if x is not base:
        try:
            c = cb.as_strided(x.shape, x.stride(), x.storage_offset()) if x.dtype == base.dtype \
                else x.detach().to("cuda")
        except RuntimeError:  # a view the base's geometry does not give: a copy
            c = x.detach().to("cuda")
    if x.requires_grad:
        c = c.detach().requires_grad_() if x.is_leaf else c
    return c


def compare(got, want, where: str, values: bool = True) -> str | None:
    g, w = leaves(got), leaves(want)
    if len(g) != len(w):
        return f"{len(g)} results, CPU {len(w)}"
    if type(got) is not type(want) and not (isinstance(got, Tensor) and isinstance(want, Tensor)):
        return f"result {type(got).__name__}, CPU {type(want).__name__}"
    for a, b in zip(g, w):
        if not isinstance(a, Tensor):
            continue
        if a.is_sparse or b.is_sparse:
            continue
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            return f"{tuple(a.shape)} {a.dtype}, CPU {tuple(b.shape)} {b.dtype}"
        if b.device.type == "cpu" and a.device.type != where:
            return f"result on {a.device}, expected {where}"
        if not values:
            continue
        ha = a.detach().cpu()
        hb = b.detach()
        if ha.dtype in (jtorch.bfloat16, jtorch.float16):
            ha, hb = ha.float(), hb.float()
        av, bv = ha.numpy(), hb.numpy()
        if av.dtype.kind in "fc":
            rtol = RTOL.get(str(b.dtype).replace("torch.", ""), 1e-6)
            if not np.allclose(av, bv, rtol=rtol, atol=rtol, equal_nan=True):
                return f"values differ: {av.ravel()[:4]} vs {bv.ravel()[:4]}"
        elif not np.array_equal(av, bv):
            return f"values differ: {av.ravel()[:4]} vs {bv.ravel()[:4]}"
    return None


# calls whose CUDA twin is expected to differ, with the reason
EXPECTED = {"torch:spmm #0": "the sample builds a sparse (CPU-only) operand itself: torch's "
                             "mixed-device error on CUDA"}

# uninitialised results: their values are whatever the memory held
UNINITIALISED = ("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided")


def check(fn, args, kwargs, what: str, failures: list) -> None:
    if any(isinstance(x, Tensor) and x.is_sparse for x in leaves([args, kwargs])):
        return  # sparse tensors live on the CPU only
    moved: dict = {}  # the CUDA twins first: the CPU call may write into its operands
    cargs = tree_map(lambda x: to_cuda(x, moved), list(args))
    ckw = tree_map(lambda x: to_cuda(x, moved), dict(kwargs))
    jtorch.manual_seed(0)
    with np.errstate(all="ignore"):
        want, err = _outcome(fn, args, kwargs)
    jtorch.manual_seed(0)
    draws = philox.DRAWS.total()
    with np.errstate(all="ignore"):
        got, cerr = _outcome(fn, cargs, ckw)
    drew = philox.DRAWS.total() != draws
    if err is not None:
        if cerr is None:
            failures.append({"call": what, "error": f"CPU raised {err!r}, CUDA returned"})
        elif type(cerr) is not type(err):
            failures.append({"call": what, "error": f"CPU raised {err!r}, CUDA {cerr!r}"})
        return
    if cerr is not None:
        failures.append({"call": what, "error": f"CUDA raised {type(cerr).__name__}: {cerr}"[:300]})
        return
    initialised = what.split(":")[-1].split(" ")[0] not in UNINITIALISED
    why = compare(got, want, "cuda", initialised and not drew)
    if why is not None:
        failures.append({"call": what, "error": why[:300]})


def main() -> None:
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    variants = ["contiguous", "noncontig"]
    for a in sys.argv[1:]:
        if a.startswith("--variants="):
            variants = a.split("=", 1)[1].split(",")
    failures: list = []
    runs = 0
    for key in sorted(PATTERNS):
        if names and key not in names:
            continue
        kind, name = key.split(":", 1)
        for v in variants:
            runs += 1
            check(_target(kind, name), _args(PATTERNS[key], _inputs(v)), {}, f"{key} [{v}]",
                  failures)
    if "--samples" in sys.argv:
        for key in sorted(SAMPLES):
            if names and key not in names:
                continue
            for k, sample in enumerate(SAMPLES[key]):
                if f"{key} #{k}" in EXPECTED:
                    continue
                runs += 1
                fn, args, kwargs = sample(_inputs("contiguous"))
                check(fn, args, kwargs, f"{key} #{k}", failures)
    print(json.dumps({"calls": runs, "failures": failures,
                      "host_path_ops": dict(sorted(eager.FALLBACKS.items()))}))


if __name__ == "__main__":
    main()
