"""``jtorch.compiler.explain(fn)(*args)``: the graphs a call makes and why it broke
(torch._dynamo.explain's report)."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import backends
from .api import CompiledFunction


@dataclass
class BreakReason:
    reason: str
    user_stack: str

    def __str__(self) -> str:
        return f"{self.reason}\n  at {self.user_stack}"


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:\n    Reason: {r.reason}\n    User Stack: "
                         f"{r.user_stack}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops per Graph {i}:")
            lines.extend(f"    {o}" for o in ops)
        return "\n".join(lines)


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs) -> ExplainOutput``: runs ``fn`` once, traced (its results
    are computed as usual), and reports every graph and break."""
    if extra_args or extra_kwargs:
        return explain(fn)(*extra_args, **extra_kwargs)

    def run(*args, **kwargs) -> ExplainOutput:
        target = getattr(fn, "_compiled", None) or fn
        base = target.fn if isinstance(target, CompiledFunction) else fn
        cf = CompiledFunction(base, fullgraph=False, dynamic=None, backend=backends.eager,
                              module=getattr(target, "module", None))
        cf._build_scope()
        _, t, _ = cf._trace(args, kwargs)
        out = ExplainOutput()
        for seg in t.graphs:
            gm = getattr(seg, "gm", None)
            if gm is None:
                continue
            out.graphs.append(gm)
            ops = [n.target for n in seg.graph.nodes if n.op == "call_function"]
            out.ops_per_graph.append(ops)
            out.op_count += len(ops)
        out.graph_count = len(out.graphs)
        out.break_reasons = [BreakReason(r, w) for r, w in t.breaks]
        out.graph_break_count = len(t.breaks)
        return out

    return run
