"""Writes ``torch_names.json``: the public names of torch 2.13's namespaces that the surface
audit (``test_surface.py``) holds jtorch to. Run it with torch installed:

    python tests/surface/snapshot.py
"""

from __future__ import annotations

import inspect
import json
import os

NAMESPACES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
              "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data", "torch.autograd",
              "Tensor")


def public(ns) -> list:
    """Public names that are not modules (submodules are namespaces of their own)."""
    out = []
    for n in dir(ns):
        if n.startswith("_"):
            continue
        try:
            v = getattr(ns, n)
        except Exception:  # noqa: BLE001  (a lazily failing attribute: still a name)
            v = None
        if inspect.ismodule(v):
            continue
        out.append(n)
    return sorted(out)


def resolve(lib, path: str):
    if path == "Tensor":
        return lib.Tensor
    obj = lib
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def main() -> None:
    import torch

    names = {ns: public(resolve(torch, ns)) for ns in NAMESPACES}
    path = os.path.join(os.path.dirname(__file__), "torch_names.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "names": names}, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
