"""torch.fx's names for the compiler's graph IR (``jtorch/compile``)."""

from .compile.graph import Graph, Node, map_arg  # noqa: F401
from .compile.graph_module import GraphModule  # noqa: F401
from .compile.interpreter import Interpreter  # noqa: F401
