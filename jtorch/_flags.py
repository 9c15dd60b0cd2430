"""Every environment flag jtorch reads, in one place."""

import os

DEBUG = int(os.environ.get("JTORCH_DEBUG", "0") or 0)
DUMP_DIR = os.environ.get("JTORCH_DUMP_DIR") or None
CACHE_DIR = os.environ.get("JTORCH_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "jtorch"
)
DISABLE_COMPILE = os.environ.get("JTORCH_DISABLE_COMPILE", "0") not in ("", "0")
# Elements below which a kernel runs serially. ATen's 32k assumes a spinning OpenMP pool; ours
# sleeps between regions (see _threads), and a region that wakes it cost 55-60 us here (an
# empty one: 60 us against 1.6 with spinning workers), which a 2-thread split repays only
# from ~1M elements: after 0.2 ms without a region, an add of 2^19 float32 ran 112-143 us
# split against 75 serial, 2^20 155-279 against 202-213, an exp of 2^20 229-339 against
# 334-349, a sum of 2^21 142-147 against 95-97. With 128k the demo CNN's training step
# (conv, pooling and elementwise kernels of 32k-600k elements' work) ran 6-22% slower.
GRAIN_SIZE = int(os.environ.get("JTORCH_GRAIN_SIZE", str(1 << 20)))
# The compiler's logs, torch's TORCH_LOGS names: "graph,graph_breaks,recompiles,guards".
LOGS = frozenset(x.strip().lstrip("+") for x in
                 (os.environ.get("JTORCH_LOGS") or os.environ.get("TORCH_LOGS") or "").split(",")
                 if x.strip())
# Compile workers (compile/workers.py): a cold process's first compiled training call builds
# its backward graph's kernels in a second process. None: on with more than one CPU.
COMPILE_WORKERS = None if os.environ.get("JTORCH_COMPILE_WORKERS") is None else \
    os.environ["JTORCH_COMPILE_WORKERS"].strip() not in ("", "0")
COMPILE_WORKER_CHILD = bool(os.environ.get("JTORCH_COMPILE_WORKER_CHILD"))  # this is one
