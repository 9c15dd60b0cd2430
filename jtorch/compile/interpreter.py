"""``Interpreter``: run a graph node by node with the eager kernels.

The reference every compiler pass and backend is checked against (DESIGN principle 5), in
torch.fx's shape: subclasses override ``run_node`` or one method per node op.
"""

from __future__ import annotations

from .. import dispatch
from .graph import Graph, Node, map_arg


class Interpreter:
    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None
                 ) -> None:
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env: dict[Node, object] = {}
        # the last use of each node: its value is dropped there (memory, as eager frees it)
        self._last_use: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for a in node.all_input_nodes:
                    if a not in seen:
                        seen.add(a)
                        self._last_use.setdefault(node, []).append(a)

    def run(self, *args, initial_env: dict | None = None):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        gs = dispatch.grad_state
        g0 = gs.enabled
        try:
            for node in self.graph.nodes:
                if node in self.env:
                    continue
                want = node.meta.get("grad_enabled")
                gs.enabled = g0 if want is None else want
                self.env[node] = self.run_node(node)
                for dead in self._last_use.get(node, ()):
                    if dead.op != "placeholder" or self.garbage_collect_values:
                        self.env.pop(dead, None)
                if node.op == "output":
                    return self.env[node]
        finally:
            gs.enabled = g0
        return None

    def run_node(self, n: Node):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        env = self.env
        return map_arg(n.args, env.__getitem__), map_arg(n.kwargs, env.__getitem__)

    # -- one method per node op -------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        try:
            return next(self.args_iter)
        except StopIteration:
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was "
                               "not passed in!") from None

    def get_attr(self, target: str, args, kwargs):
        obj = self.module
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target: str, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args, kwargs):
        return self.get_attr(target, (), {})(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]
