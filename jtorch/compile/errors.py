"""The compiler's exceptions (torch._dynamo.exc's names)."""


class Unsupported(RuntimeError):
    """What the tracer cannot put in one graph: raised with ``fullgraph=True`` (a graph break
    otherwise), naming the reason and the user's line."""


class RecompileLimitExceeded(RuntimeError):
    """Raised instead of the eager fallback when ``config.fail_on_recompile_limit_hit``."""


class UncapturedHigherOrderOpError(RuntimeError):
    """A control-flow op (``cond``, ``while_loop``) whose branches or body break its contract:
    outputs that differ in structure, shape or dtype, a predicate that is not a boolean."""
