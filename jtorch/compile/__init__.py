"""The compiler: graph IR, tracer, guards, graph breaks, backends (``jtorch.compile``).

``graph`` (Graph/Node) and ``graph_module`` (generated Python) are the IR; ``interpreter``
runs it node by node; ``tracer`` records a call through ``dispatch.mode``; ``guards`` decide
when a cached graph may run again; ``api`` is the decorator and its cache; ``backends`` turn a
graph into a callable; ``explain`` reports graphs and breaks.
"""

from .api import CompiledFunction, OptimizedModule, compile, disable, is_compiling, reset
from .config import config
from .errors import RecompileLimitExceeded, Unsupported
from .explain import ExplainOutput, explain
from .graph import Graph, Node, map_arg
from .graph_module import GraphModule
from .interpreter import Interpreter

__all__ = ["CompiledFunction", "ExplainOutput", "Graph", "GraphModule", "Interpreter", "Node",
           "OptimizedModule", "RecompileLimitExceeded", "Unsupported", "compile", "config",
           "disable", "explain", "is_compiling", "map_arg", "reset"]
