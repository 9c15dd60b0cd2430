"""Compile workers: while a cold process runs a compiled function's first call, a second
process builds kernels it is about to need, so that two cores compile at once.

Why: a first call with empty caches is Numba compiling, one kernel after another on one
core. The demo CNN's training step spends ~13 of its ~14 s there, while the machine's other
core idles; two cold processes side by side each ran as fast as one alone. torch.compile
hands its kernels to a pool of compile workers for the same reason.

How: when ``aot.build_joint`` has a first call's forward and backward graphs, and the cache
holds no mark of them (``mark``: a process that ran them, or a worker that built them,
marks them; a warm process starts no worker), the graphs' generated code and their inputs'
geometry go to a worker process (a fork of this one where that is safe, ``_fork``: it has
jtorch imported; else a new one, ``main``), with the eager kernels the process has announced
(``expect``: an optimizer's step kernel). The worker builds the forward graph, then those
kernels (the main process reaches them last), then the backward graph (``_work``): it traces
each graph's code again, hands the graph to the same backend and runs each call of the result
on zeros of its operands' geometry, last call first, so that every fused and extern kernel the
graph calls is compiled there and written to the shared caches (Numba's and jtorch's, safe
for concurrent processes). The main process runs the graphs first call first: where the two
meet inside a graph, the main process loads each kernel the worker has written instead of
compiling it. Where it misses the cache on a kernel the worker is building, it waits for it
(the worker reports what it builds on its stdout); a forked worker leaves to the main process
a kernel that one is compiling (``_ParentBuilds``). A worker changes no result: the main
process compiles whatever it needs that the worker has not written.

A generated kernel module's parallel entry (``prange`` over chunks, each calling the serial
entry by symbol: ``compile/fusion.py``, ``row_fusion.py``, ``col_fusion.py``; an eager
pointwise loop's, ``beside``) is Numba's parfor pipeline, 1.0-1.8 s of a cold first call whose
serial entry took ~0.2-1.2 s. Both compute every element (every row, every column's sum) with
the same code, so where a caller asks ``parallel_ready`` and the entry is neither compiled
here nor in the cache, a worker builds it (``_build_entry``) while the caller runs the serial
entry; the caller takes the parallel one from the cache once the worker reports it written
(or has ended). Entries that come while another worker runs wait for the next one, unless
that one writes them (a worker over graphs runs their kernels). A worker over entries is not
stopped when its parent exits: it finishes them, so that the next process finds them in the
cache (a parent that exits sooner than they compile would otherwise leave them cold for every
run).

One worker at a time per process; a worker over graphs stops when its parent exits (killed
at exit, and it checks between tasks). ``JTORCH_COMPILE_WORKERS=0`` turns workers off (the
default is on with more than one CPU); ``JTORCH_LOGS=workers`` logs their starts, waits and
errors.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import mmap
import operator
import os
import pickle
import select
import subprocess
import sys
import threading
import time

from numba.core import event

from .. import _flags, _threads
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


def submit(gms: list) -> str | None:
    """Start a worker over the CPU graph modules ``gms`` (the first built first) if workers
    are on, no worker is running, and the cache holds no mark of these graphs (see
    ``mark``). Graphs the worker cannot rebuild from their code are left out. Returns the
    graphs' mark, for the caller to ``mark`` once it has run them (None: none shipped)."""
    if not enabled():
        return None
    try:
        items = [it for it in map(payload, gms) if it is not None]
        if not items:
            return None
        from .. import _settings

        job = {"parent": os.getpid(), "threads": _threads.planned_num_threads(),
               "deterministic": _settings.are_deterministic_algorithms_enabled(),
               "items": items}
        path = job["mark"] = _mark_path(job)
        if busy() or os.path.exists(path):
            return path
        job["kernels"], _expected[:] = list(_expected), []
        _launch(job)
    except Exception as e:  # noqa: BLE001  (a worker only saves time: never fail the call)
        logs.log("workers", f"no compile worker ({type(e).__name__}: {e})")
        return None
    how = "forked" if isinstance(_proc[0], _Forked) else "started"
    logs.log("workers", f"compile worker {_proc[0].pid} {how} for {len(items)} graph(s)")
    return path


_expected: list = []  # (module, key, signature) of eager kernels this process will call


def expect(module: str, key: str, sig: tuple) -> None:
    """Announce an eager kernel this process will call (``module.expected_kernel(key)`` for
    the Numba signature ``sig``): the next worker started builds it before the graphs (an
    optimizer's step kernel, announced at construction)."""
    if (module, key, sig) not in _expected:
        _expected.append((module, key, sig))


# -- marks: which graphs' kernels a cache holds ---------------------------------------------
# Whether a cache is cold is known only by compiling: a process that has compiled nothing yet
# when its first graph is built (its initialisation drew through NumPy, its tracing ran no
# kernel) may still face a cold cache. So a process that has run a joint graph's first
# forward and backward marks it (an empty file named by the job's hash and jtorch's code, in
# the directory of the generated kernels' Numba cache): its kernels are then in that cache,
# and a later process with the same graphs starts no worker.

def _mark_path(job: dict) -> str:
    import numba

    h = hashlib.sha1(pickle.dumps((job["threads"], job["deterministic"], job["items"]),
                                  protocol=4))
    h.update(_code_stamp().encode())
    root = numba.config.CACHE_DIR or _flags.CACHE_DIR
    return os.path.join(root, "jtorch_worker_marks", h.hexdigest()[:24])


_stamp: list = []


def _code_stamp() -> str:
    """jtorch's source files by name, size and modification time (another version of jtorch
    compiles other kernels): once per process."""
    if not _stamp:
        pkg = os.path.join(_PKG_PARENT, "jtorch")
        h = hashlib.sha1()
        for root, dirs, files in os.walk(pkg):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".py"):
                    st = os.stat(os.path.join(root, f))
                    h.update(f"{root[len(pkg):]}/{f}:{st.st_size}:{st.st_mtime_ns};".encode())
        _stamp.append(h.hexdigest())
    return _stamp[0]


def mark(path: str) -> None:
    """Record that the graphs of ``path`` (``submit``'s) have run here: their kernels are in
    the cache."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a"):
            pass
    except OSError:  # a read-only cache: workers start again, nothing else changes
        pass


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


# -- what a worker is building: no kernel compiled twice ----------------------------------------
# A worker reports on its stdout each cache entry it starts to build and each it has written
# ("start <key>", "done <key>", "idle" between tasks; keys hashed from ``source.entry_key``).
# The parent reads the reports when it misses the cache itself: an entry the worker is
# building, it waits for and loads, where it would otherwise build the same kernel beside it.

_WAIT_LIMIT = 120.0  # seconds the parent waits for one entry (then it builds it itself)


def _short(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:16]


class _Reports:
    """The parent's reading of a worker's reports."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.fd = proc.stdout.fileno()
        self.pid = os.getpid()  # (a forked child, a DataLoader's, must not take its lines)
        os.set_blocking(self.fd, False)
        self.rest = b""
        self.building: set = set()
        self.done: set = set()  # entries written
        self.closed = False

    def read(self, timeout: float = 0.0) -> None:
        """Take what the worker has written (waiting up to ``timeout`` for the first bytes)."""
        while not self.closed:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:  # the worker has ended: nothing is being built
                self.closed = True
                self.building.clear()
                return
            *lines, self.rest = (self.rest + data).split(b"\n")
            for line in lines:
                kind, _, key = line.decode().partition(" ")
                if kind == "start":
                    self.building.add(key)
                elif kind == "done":
                    self.building.discard(key)
                    self.done.add(key)
                elif kind == "idle":
                    self.building.clear()
            timeout = 0.0

    def wait(self, key: str, limit: float) -> None:
        end = time.monotonic() + limit
        while key in self.building and not self.closed:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.read(left)


_reports: list = [None]  # the running worker's (_Reports)


def _parent_miss(key: str, retry):
    """``source.on_miss`` in a parent: wait for an entry the worker is building, then load it."""
    r = _reports[0]
    if r is None or r.closed or r.pid != os.getpid():
        return None
    short = _short(key)
    r.read()
    if short not in r.building:
        return None
    t0 = time.perf_counter()
    r.wait(short, _WAIT_LIMIT)
    res = retry()
    logs.log("workers", f"waited {time.perf_counter() - t0:.2f} s for the worker's "
                        f"{os.path.basename(key)}: {'loaded' if res is not None else 'not written'}")
    return res


_report_fd = [1]  # where a worker writes its reports: its stdout, or a forked one's pipe


def _report(kind: str, key: str = "") -> None:
    """A worker's report to its parent (``source.on_miss``/``on_save`` in a worker)."""
    try:
        os.write(_report_fd[0], f"{kind} {_short(key) if key else ''}\n".encode())
    except OSError:  # the parent is gone
        pass


def _launch(job: dict):
    """Start the worker of ``job`` and read its reports (a parent's cache miss on an entry it
    is building waits for it)."""
    _proc[0] = p = _start(job)
    if getattr(p, "stdout", None) is not None:
        _reports[0] = _Reports(p)
        source.on_miss[0] = _parent_miss
    return p


def _start(job: dict):
    """The worker: a fork of this process where that is safe (``_fork``), else a new one."""
    return _fork(job) or _spawn(job)


# -- the kernel the parent is compiling: a forked worker leaves it to the parent ----------------
# Generated kernels are coordinated by the reports above; a library kernel (Numba's own cache)
# is not, and a worker that takes a graph from its end can reach one the parent is compiling at
# that moment: the forward's second convolution, whose kernel the parent compiles for the
# first (2 s on the demo CNN). A forked worker shares one page with its parent, in which the
# parent keeps the name of the kernel its outermost compile builds; a worker about to compile
# that kernel leaves that call to the parent (``_ParentBuilds``) and goes on with the calls
# before it (those the parent has run load from the cache, at once).

class _ParentBuilds(Exception):
    """The parent is compiling the kernel this worker was about to compile."""


_page: list = [None]  # (mmap shared by a parent and its forked worker, the parent's pid)


def _kernel_name(dispatcher) -> bytes:
    f = getattr(dispatcher, "py_func", None)
    name = f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', '')}"
    return name.encode()[:_PAGE - 1]


_PAGE = 256


class _Compiles(event.Listener):
    """Numba's compile events: the parent publishes its outermost compile's kernel in the
    page, a forked worker checks its own against it."""

    def __init__(self) -> None:
        self.depth = threading.local()

    def on_start(self, ev) -> None:
        d = self.depth.n = getattr(self.depth, "n", 0) + 1
        shared = _page[0]
        if shared is None or d != 1:
            return
        page, owner = shared
        name = _kernel_name(ev.data["dispatcher"])
        if os.getpid() == owner:
            page[:1 + len(name)] = bytes((len(name),)) + name
        elif _flags.COMPILE_WORKER_CHILD and page[0] == len(name) and \
                page[1:1 + len(name)] == name:
            raise _ParentBuilds(name.decode())

    def on_end(self, ev) -> None:
        d = self.depth.n = getattr(self.depth, "n", 1) - 1
        shared = _page[0]
        if shared is not None and d == 0 and os.getpid() == shared[1]:
            shared[0][0] = 0


_listening: list = []


def _share_page() -> None:
    """Before a fork: the page the parent publishes in (and a listener, once)."""
    if not _listening:
        listener = _Compiles()
        event.register("numba:compile", listener)
        _listening.append(listener)
    page = mmap.mmap(-1, _PAGE)
    page[0] = 0
    _page[0] = (page, os.getpid())


class _Forked:
    """A forked worker, with the parts of ``subprocess.Popen`` the parent uses."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.stdout = os.fdopen(fd, "rb", buffering=0)
        self.returncode = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"compile worker {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass


def _load_numba_registries() -> None:
    """Load Numba's typing and lowering registries (its first compile in a process does it:
    0.25-0.5 s of imports and template set-up) before a fork, so that the worker inherits
    them instead of loading them again; this process needs them next anyway."""
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()


def _fork(job: dict) -> _Forked | None:
    """A worker forked from this process, which has jtorch imported and the kernels it has
    compiled loaded: it starts building at once, where a new process first spends 0.7-1 s
    importing jtorch (the demo CNN's cold first step: the worker took its first kernel at
    2.0 s from the parent's start, against 1.3 s forked). Only while this process runs one
    Python thread and Numba has not started its thread pool (a fork copies only the calling
    thread: the pool's threads, and any lock another thread holds, would not come along; the
    worker starts its own pool): None otherwise, and off Linux (macOS's system libraries are
    not safe to use in a fork, Windows has none). OpenBLAS's threads (NumPy's and SciPy's,
    started at load) are rebuilt in a fork by OpenBLAS itself. The fork keeps the parent's
    other open files while it runs (seconds); its stdin and stdout, and its stderr unless
    workers are logged, go to devnull."""
    import threading

    from numba.np.ufunc import parallel

    if not sys.platform.startswith("linux") or threading.active_count() > 1 or \
            parallel._is_initialized:
        return None
    for f in (sys.stdout, sys.stderr):  # (what they hold would be written twice)
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass
    _load_numba_registries()
    _share_page()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        rc = 1
        try:
            os.close(r)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            if "workers" not in _flags.LOGS:
                os.dup2(null, 2)
            _flags.COMPILE_WORKER_CHILD = True
            _proc[0] = _reports[0] = None
            _report_fd[0] = w
            rc = _serve(job)
        finally:
            os._exit(rc)
    os.close(w)
    return _Forked(pid, r)


def _spawn(job: dict) -> subprocess.Popen:
    env = dict(os.environ)
    env["JTORCH_COMPILE_WORKER_CHILD"] = "1"
    env["JTORCH_CACHE_DIR"] = _flags.CACHE_DIR  # the same caches, whatever set them
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    err = None if "workers" in _flags.LOGS else subprocess.DEVNULL
    p = subprocess.Popen([sys.executable, "-c", _ENTRY], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    try:
        p.stdin.write(pickle.dumps(job))
        p.stdin.close()
    except OSError:  # it died at start: its error went to stderr
        pass
    return p


@atexit.register
def _stop() -> None:
    p = _proc[0]
    if p is not None and p.poll() is None and not _taken:
        p.kill()  # its cache writes are atomic (temporary file, then a rename)
        p.wait()


# -- parallel entries built beside their serial twins ------------------------------------------

class _Entry:
    """A parallel entry a worker builds: its module, name, Numba signature and cache entry's
    key in the worker's reports."""

    __slots__ = ("key", "mod", "name", "sig", "since")

    def __init__(self, mod, name: str, sig: tuple) -> None:
        self.mod, self.name, self.sig, self.since = mod, name, sig, None
        self.key = _short(source.entry_key(getattr(mod, name)._cache, sig))


_entries: dict = {}  # (module name, entry name) -> _Entry, while not ready
_queued: list = []  # entries no worker has taken yet
_taken: list = []  # entries the running worker builds
_entry_lock = threading.Lock()


def _forget_entries() -> None:
    """In a forked child (a DataLoader's worker): the parent's entries and worker are not its
    own, and the lock may have been held by another of the parent's threads."""
    global _entry_lock
    _entry_lock = threading.Lock()
    _entries.clear()
    _queued.clear()
    _taken.clear()


os.register_at_fork(after_in_child=_forget_entries)


def parallel_ready(mod, name: str, args: tuple) -> bool:
    """Whether the caller may run ``mod``'s parallel entry ``name`` on ``args`` now; False
    while a worker builds it (the caller runs the serial twin instead). True at once where
    workers are off, in a worker, and where the entry is compiled here or in the cache; then
    ``mod.<name>_ready`` is set, which callers test first."""
    if not enabled():  # (a worker: checked before the lock, which a fork may hold)
        setattr(mod, name + "_ready", True)
        return True
    key = (mod.__name__, name)
    with _entry_lock:
        e = _entries.get(key)
        if e is None:
            disp = getattr(mod, name)
            if disp.overloads or _in_cache(disp):
                setattr(mod, name + "_ready", True)
                return True
            from numba import typeof

            try:
                e = _Entry(mod, name, tuple(typeof(a) for a in args))
            except Exception:  # noqa: BLE001  (an argument typeof cannot type: built here)
                setattr(mod, name + "_ready", True)
                return True
            _entries[key] = e
            _queued.append(e)
        _pump()
        if e in _queued or e in _taken:
            return False
        del _entries[key]
        setattr(mod, name + "_ready", True)
        return True


def use_parallel_entry(mod, name: str, n: int, args: tuple) -> bool:
    """``_threads.use_parallel(n)`` for the parallel entry ``name`` of a generated module
    called on ``args``: False while a worker builds it (``parallel_ready``)."""
    return (getattr(mod, name + "_ready", False) or
            (_threads.may_use_parallel(n) and parallel_ready(mod, name, args))) and \
        _threads.use_parallel(n)


class Beside:
    """A kernel module's parallel entry that runs its serial twin (the same arguments, the
    same values) while a worker builds it (``parallel_ready``): eager pointwise loops."""

    __slots__ = ("mod", "name", "parallel", "ready", "serial")

    def __init__(self, mod, name: str, parallel, serial) -> None:
        self.mod, self.name, self.parallel, self.serial = mod, name, parallel, serial
        self.ready = False

    def __call__(self, *args):
        if self.ready or parallel_ready(self.mod, self.name, args):
            self.ready = True
            return self.parallel(*args)
        return self.serial(*args)


def beside(mod, name: str, serial: str):
    """``mod.<name>``, a parallel entry whose serial twin is ``mod.<serial>``; a ``Beside``
    where a worker may build it."""
    par, ser = getattr(mod, name), getattr(mod, serial)
    if par is ser or not enabled():  # (an op that can raise has no parallel entry)
        return par
    return Beside(mod, name, par, ser)


def _in_cache(disp) -> bool:
    """Whether Numba's cache has an index for ``disp`` (a warm process: it loads the entry)."""
    try:
        return os.path.exists(disp._cache._cache_file._index_path)
    except AttributeError:  # no disk cache: compile it here
        return True


def _pump() -> None:
    """Retire the entries the running worker reports written (its own, or queued ones that a
    worker over graphs built while running them), and all of those it took once it has ended
    (written, or the caller's to compile) or past ``_WAIT_LIMIT``; hand the queued ones to a
    new worker when none runs (holding ``_entry_lock``)."""
    running = busy()
    r = _reports[0]
    if running and r is not None and r.pid == os.getpid():
        r.read()
        _taken[:] = [e for e in _taken if e.key not in r.done]
        _queued[:] = [e for e in _queued if e.key not in r.done]
    if _taken and (not running or time.monotonic() - _taken[0].since > _WAIT_LIMIT):
        _taken.clear()
    if not _queued or running:
        return
    todo = [e for e in _queued if not _in_cache(getattr(e.mod, e.name))]  # (another wrote it)
    _queued.clear()
    if not todo:
        return
    from .. import _settings

    job = {"parent": os.getpid(), "threads": _threads.planned_num_threads(),
           "deterministic": _settings.are_deterministic_algorithms_enabled(),
           "entries": [(e.mod.__name__.rpartition("_")[0], e.mod.__file__, e.name, e.sig)
                       for e in todo]}
    try:
        p = _launch(job)
    except Exception as err:  # noqa: BLE001  (a worker only saves time: compile them here)
        logs.log("workers", f"no compile worker ({type(err).__name__}: {err})")
        return
    now = time.monotonic()
    for e in todo:
        e.since = now
    _taken.extend(todo)
    how = "forked" if isinstance(p, _Forked) else "started"
    logs.log("workers", f"compile worker {p.pid} {how} for {len(todo)} parallel entr"
                        f"{'y' if len(todo) == 1 else 'ies'}")


# -- the worker ---------------------------------------------------------------------------

def build(item: tuple) -> str:
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
    return f"graph of {len(specs)} inputs"


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
        except _ParentBuilds as e:  # (the calls before it: built by the parent, or soon)
            logs.log("workers", f"worker {os.getpid()}: {n.name} left to the parent, which "
                                f"is building {e}")
        except Exception as e:  # noqa: BLE001  (a call that needs real values: the parent's)
            logs.log("workers", f"worker {os.getpid()}: {n.name} not built "
                                f"({type(e).__name__}: {e})")
    return True


def _zeros(shape: tuple, strides: tuple, dtype):
    """Zeros of a value's geometry (element strides), to run a kernel on. Filled by NumPy:
    ``zero_`` of a strided tensor compiled two fill kernels the parent never runs (0.4-0.6 s
    of the demo CNN's worker)."""
    import jtorch

    t = jtorch.empty_strided(shape, strides, dtype=dtype)
    t._a[...] = 0
    return t


def _work(job: dict) -> int:
    import jtorch

    jtorch.set_num_threads(job["threads"])
    jtorch.use_deterministic_algorithms(job["deterministic"])
    items = job.get("items", ())
    # the first graph (a joint graph's forward) from its end, which the parent builds from its
    # start: they meet inside it (``_ParentBuilds``), and the parent finds the graph's tail
    # built when its first kernels are done (the demo CNN: its first convolution's kernel,
    # 2 s, while the worker builds the pools, the linear layers and the fused kernels). Then
    # the announced eager kernels (the optimizer's, which the parent reaches last: had the
    # backward graph gone before them, the parent often reached the optimizer's kernel while
    # the worker was still building it), then the other graphs (the backward, which the
    # parent reaches after the forward and the eager loss), each from its end. (With the
    # backward first and the forward last, the parent had built the whole forward before
    # the worker reached it.)
    tasks = [(build, it) for it in items[:1]] + \
        [(_build_kernel, k) for k in job.get("kernels", ())] + \
        [(_build_entry, e) for e in job.get("entries", ())] + [(build, it) for it in items[1:]]
    failed = 0
    for fn, task in tasks:
        if os.getppid() != job["parent"] and fn is not _build_entry:
            return 1 if failed else 0  # the parent is gone: nobody will load these kernels
        t0 = time.perf_counter()
        try:
            what = fn(task)
            _report("idle")
            logs.log("workers", f"worker {os.getpid()}: {what} built in "
                                f"{time.perf_counter() - t0:.2f} s")
        except Exception as e:  # noqa: BLE001  (what it cannot build is the parent's to compile)
            failed += 1
            _report("idle")
            print(f"jtorch compile worker: {type(e).__name__}: {e}", file=sys.stderr)
    if not failed and job.get("mark"):
        mark(job["mark"])
    return 1 if failed else 0


def _build_kernel(kernel: tuple) -> str:
    """Compile an announced eager kernel (``expect``) into the cache."""
    module, key, sig = kernel
    importlib.import_module(module).expected_kernel(key).compile(sig)
    return f"kernel {module}:{key}"


def _build_entry(entry: tuple) -> str:
    """Compile a generated module's entry (``parallel_ready``) into the cache."""
    prefix, path, name, sig = entry
    with open(path) as f:
        mod = source.load(prefix, f.read())
    getattr(mod, name).compile(sig)
    return f"entry {mod.__name__}.{name}"


def _serve(job: dict) -> int:
    """Build ``job``, reporting each cache entry to the parent."""
    source.on_miss[0] = lambda key, retry: _report("start", key)
    source.on_save[0] = lambda key: _report("done", key)
    return _work(job)


def main() -> int:
    """The worker process: its job, pickled by its parent, on stdin."""
    return _serve(pickle.loads(sys.stdin.buffer.read()))  # the job of our own parent


# (not ``-m jtorch.compile.workers``: jtorch imports this module first, and runpy would run a
# second copy of it)
_ENTRY = "import sys; from jtorch.compile import workers; sys.exit(workers.main())"
