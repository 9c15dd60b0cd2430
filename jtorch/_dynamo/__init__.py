"""torch._dynamo's names that user code reaches for, over ``jtorch/compile``."""

from ..compile import config, disable, explain, is_compiling, reset  # noqa: F401
from ..compile import errors as exc  # noqa: F401
from ..compile.errors import Unsupported  # noqa: F401
from ..compile.tracer import mark_dynamic, mark_static  # noqa: F401


def allow_in_graph(fn):
    """Every jtorch op is already traced into the graph: the function is returned as is."""
    return fn
