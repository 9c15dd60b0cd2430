"""Compile workers: while a cold process runs a compiled function's first call, a second
process builds the kernels of its backward graph, so that two cores compile at once.

Why: a first call with empty caches is Numba compiling, one kernel after another on one
core. The demo CNN's training step spends ~13 of its ~14 s there, while the machine's other
core idles; two cold processes side by side each ran as fast as one alone. torch.compile
hands its kernels to a pool of compile workers for the same reason.

How: when ``aot.build_joint`` has a first call's forward and backward graphs, and this
process has missed the on-disk kernel cache before (a cold cache: a warm process starts no
worker), the graphs' generated code and their inputs' geometry go to a worker process
(``main``). It traces the code again, hands the graph to the same backend and runs each call
of the result on zeros of its operands' geometry, so that every fused and extern kernel the
graph calls is compiled there and written to the shared caches (Numba's and jtorch's, safe
for concurrent processes). The backward graph goes first and each graph's calls run last
first: the main process reaches them last, after the forward and whatever runs eagerly in
between, and then loads each kernel the worker has written instead of compiling it. A worker
changes no result: the main process compiles whatever it needs that the worker has not
written yet.

One worker at a time per process; it stops when its parent exits (killed at exit, and it
checks between graphs). ``JTORCH_COMPILE_WORKERS=0`` turns workers off (the default is on
with more than one CPU); ``JTORCH_LOGS=workers`` logs their starts and their errors.
"""

from __future__ import annotations

import atexit
import operator
import os
import pickle
import subprocess
import sys
import time

from .. import _flags
from ..device import device as _Device
from ..kernels import source
from . import logs
from .graph_module import GraphModule, _grad_state, _torch_ns, aten, python_code

_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_GLOBALS = frozenset(("aten", "getitem", "torch", "_gs"))  # all a shipped graph may name
# A worker runs the graphs on zeros: at most this many bytes of values in a graph (the sum of
# every node's), so that a large model's first call does not need twice its memory
_MAX_BYTES = 1 << 30


def enabled() -> bool:
    """Whether this process may start workers: ``JTORCH_COMPILE_WORKERS`` (default: on with
    more than one CPU), never inside a worker."""
    if _flags.COMPILE_WORKER_CHILD:
        return False
    if _flags.COMPILE_WORKERS is None:
        return (os.cpu_count() or 1) > 1
    return _flags.COMPILE_WORKERS


_proc: list = [None]  # the running worker (subprocess.Popen)


def submit(gms: list) -> bool:
    """Start a worker over the CPU graph modules ``gms`` (the first built first) if workers
    are on, this process has compiled a kernel (a cold cache) and no worker is running.
    Graphs the worker cannot rebuild from their code are left out. Returns whether one
    started."""
    if not enabled() or not source.cache_misses() or busy():
        return False
    try:
        items = [it for it in map(payload, gms) if it is not None]
        if not items:
            return False
        import numba

        from .. import _settings

        job = {"parent": os.getpid(), "threads": numba.get_num_threads(),
               "deterministic": _settings.are_deterministic_algorithms_enabled(),
               "items": items}
        _proc[0] = _start(job)
    except Exception as e:  # noqa: BLE001  (a worker only saves time: never fail the call)
        logs.log("workers", f"no compile worker ({type(e).__name__}: {e})")
        return False
    logs.log("workers", f"compile worker {_proc[0].pid} started for {len(items)} graph(s)")
    return True


def busy() -> bool:
    p = _proc[0]
    return p is not None and p.poll() is None


def wait(timeout: float | None = None) -> int | None:
    """The running worker's exit status once it ends (None: none was started)."""
    p = _proc[0]
    return None if p is None else p.wait(timeout)


def payload(gm: GraphModule):
    """``(code, inputs, devices)`` that rebuild ``gm``'s graph in another process: its
    generated Python, each placeholder's (shape, element strides, dtype name) and the names
    of the device constants it reads; None where the graph holds what code cannot carry
    (other constants, modules, symbolic sizes, non-CPU inputs) or whose values are too
    large to run twice (``_MAX_BYTES``)."""
    graph = gm.graph
    if graph.symbols:
        return None
    specs = []
    total = 0
    for n in graph.nodes:
        if n.op in ("get_attr", "call_module", "call_method"):
            return None
        for v in _values(n.meta.get("val")):
            total += v._a.size * v._a.dtype.itemsize
        if n.op != "placeholder":
            continue
        v = n.meta.get("val")
        a = getattr(v, "_a", None)
        if a is None or v.device.type != "cpu" or any(s % a.dtype.itemsize for s in a.strides):
            return None
        specs.append((tuple(a.shape), tuple(s // a.dtype.itemsize for s in a.strides),
                      v.dtype.name))
    if total > _MAX_BYTES:
        return None
    code, glb = python_code(graph)
    devices = {}  # named constants: only devices (``_to_copy``'s), as their names
    for k in set(glb) - _GLOBALS:
        if glb[k].__class__ is not _Device:
            return None
        devices[k] = str(glb[k])
    return code, specs, devices


def _values(v) -> list:
    if isinstance(v, tuple):
        return [x for x in v if hasattr(x, "_a")]
    return [v] if hasattr(v, "_a") else []


def _start(job: dict) -> subprocess.Popen:
    env = dict(os.environ)
    env["JTORCH_COMPILE_WORKER_CHILD"] = "1"
    env["JTORCH_CACHE_DIR"] = _flags.CACHE_DIR  # the same caches, whatever set them
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    err = None if "workers" in _flags.LOGS else subprocess.DEVNULL
    p = subprocess.Popen([sys.executable, "-c", _ENTRY], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
    try:
        p.stdin.write(pickle.dumps(job))
        p.stdin.close()
    except OSError:  # it died at start: its error went to stderr
        pass
    return p


@atexit.register
def _stop() -> None:
    p = _proc[0]
    if p is not None and p.poll() is None:
        p.kill()  # its cache writes are atomic (temporary file, then a rename)
        p.wait()


# -- the worker ---------------------------------------------------------------------------

def build(item: tuple) -> None:
    """Compile the kernels of one shipped graph: trace its code over fakes, hand the graph to
    the "numba" backend, run the result on zeros of the inputs' geometry."""
    import jtorch

    from .aot import _fake_input
    from .backends import numba as numba_backend
    from .tracer import Tracer, no_values

    code, specs, devices = item
    glb = {"aten": aten, "getitem": operator.getitem, "torch": _torch_ns(), "_gs": _grad_state()}
    glb.update({k: jtorch.device(v) for k, v in devices.items()})
    exec(compile(code, "<jtorch_worker_graph>", "exec"), glb)  # noqa: S102  (our own graph)
    zeros = [_zeros(shape, strides, getattr(jtorch, dtype)) for shape, strides, dtype in specs]
    with jtorch.no_grad():
        tr = Tracer({}, {}, True, no_values)
        fakes = [_fake_input(tr, f"arg_{i}", z) for i, z in enumerate(zeros)]
        with tr:
            res = glb["forward"](None, *fakes)
        res = res if isinstance(res, tuple) else (res,)
        graph = tr.seg.graph
        graph.output(tuple(tr.node_of(r) if isinstance(r, jtorch.Tensor) else r for r in res))
        graph.eliminate_dead_code()
        graph.lint()
        run = numba_backend(GraphModule({}, graph), None)
        if not _run_reversed(getattr(run, "__self__", None)):
            run(*zeros)


def _run_reversed(gm) -> bool:
    """Run each call of a backend's graph module on zeros of its operands' geometry, last
    call first: the kernels the parent reaches last are built first, and those it is
    building now (the forward's, which the backward shares: a transposed convolution is a
    direct one) come late, when the parent has written them. False where a value lacks its
    geometry (the graph then runs in order)."""
    import jtorch

    from .graph import Node, map_arg

    calls = [n for n in getattr(getattr(gm, "graph", None), "nodes", ())
             if n.op == "call_function" and n.target is not operator.getitem]
    if not calls:
        return False
    operands = {a for n in calls for a in n.all_input_nodes}
    if not all(isinstance(a.meta.get("val"), jtorch.Tensor) for a in operands):
        return False

    def zeros(a: Node):
        v = a.meta["val"]
        size = v._a.dtype.itemsize
        return _zeros(tuple(v._a.shape), tuple(s // size for s in v._a.strides), v.dtype)

    for n in reversed(calls):
        try:
            n.target(*map_arg(n.args, zeros), **map_arg(n.kwargs, zeros))
        except Exception as e:  # noqa: BLE001  (a call that needs real values: the parent's)
            logs.log("workers", f"worker {os.getpid()}: {n.name} not built "
                                f"({type(e).__name__}: {e})")
    return True


def _zeros(shape: tuple, strides: tuple, dtype):
    """Zeros of a value's geometry (element strides), to run a kernel on."""
    import jtorch

    return jtorch.empty_strided(shape, strides, dtype=dtype).zero_()


def _work(job: dict) -> int:
    import jtorch

    jtorch.set_num_threads(job["threads"])
    jtorch.use_deterministic_algorithms(job["deterministic"])
    failed = 0
    for item in job["items"]:
        if os.getppid() != job["parent"]:
            break  # the parent is gone: nobody will load these kernels
        t0 = time.perf_counter()
        try:
            build(item)
            logs.log("workers", f"worker {os.getpid()}: graph of {len(item[1])} inputs built in "
                                f"{time.perf_counter() - t0:.2f} s")
        except Exception as e:  # noqa: BLE001  (a graph it cannot build is the parent's to compile)
            failed += 1
            print(f"jtorch compile worker: {type(e).__name__}: {e}", file=sys.stderr)
    return 1 if failed else 0


def main() -> int:
    """The worker process: its job, pickled by its parent, on stdin."""
    return _work(pickle.loads(sys.stdin.buffer.read()))  # the job of our own parent


# (not ``-m jtorch.compile.workers``: jtorch imports this module first, and runpy would run a
# second copy of it)
_ENTRY = "import sys; from jtorch.compile import workers; sys.exit(workers.main())"
