"""The compiler's logs (``JTORCH_LOGS=graph,graph_breaks,recompiles,guards,kernels,workers``, or
``jtorch.compiler.set_logs(graph=True, ...)``), printed to stderr."""

from __future__ import annotations

import sys

from .. import _flags

NAMES = ("graph", "graph_code", "graph_breaks", "recompiles", "guards", "kernels", "workers")
enabled: set = set(_flags.LOGS) & set(NAMES)


def set_logs(**flags: bool) -> None:
    for k, v in flags.items():
        if k not in NAMES:
            raise ValueError(f"unknown log {k!r}; known: {', '.join(NAMES)}")
        (enabled.add if v else enabled.discard)(k)


def log(name: str, msg: str) -> None:
    if name in enabled or (name == "graph" and "graph_code" in enabled):
        print(f"[jtorch.compile:{name}] {msg}", file=sys.stderr)
