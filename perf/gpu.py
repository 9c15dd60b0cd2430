"""``python -m perf gpu``: the CUDA checks and benchmarks to run whenever a GPU is at hand.

1. Correctness: ``tests/cuda/cuda_op_sweep.py --device`` (every swept public call on CUDA
   tensors against CPU, with every variant and sample) and ``tests/cuda/cuda_sim_sweep.py
   --device`` (every pointwise op's CUDA kernels, edge values included), each in a subprocess.
2. Speed, each timed after a warm-up with ``cuda.synchronize`` around the timed loop, median of
   the repeats, beside torch CUDA in the same run when torch has CUDA here:
   - ``copy``: a device-to-device copy kernel of 2^26 float32: the bandwidth reference;
   - ``chain``: a compiled ``sin(x) + cos(x) * x - exp(-x * x)`` at 2^26 float32, as a share
     of the copy's bandwidth (target: at least 0.8 of it, reading x and writing the result);
   - ``sgemm``: 4096^2 float32 products (target: 0.9 of torch's);
   - ``launch``: one eager ``x + 1`` on 16 elements (target: at most 3x torch's);
   - ``demo_cnn``: the demo CNN's training step on the GPU against torch eager on the CPU.
``--quick`` shrinks every size (with ``--simulator``, Numba's simulator runs it: a smoke test
of this script, not a measurement). Writes a JSON document (``--out``) and prints it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "cuda")


def _sweep(script: str, flags: list, simulator: bool) -> dict:
    env = dict(os.environ)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        flags = [f for f in flags if f != "--device"]
    r = subprocess.run([sys.executable, os.path.join(_TESTS, script), *flags],
                       capture_output=True, text=True, env=env, timeout=7200, check=False)
    if r.returncode:
        return {"error": r.stderr[-2000:]}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["failures"] = out.get("failures", [])[:50]
    return out


def _time(fn, sync, repeat: int, number: int) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls."""
    fn()
    sync()
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        runs.append((time.perf_counter() - t) / number)
    return statistics.median(runs)


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def benchmarks(quick: bool, tiny: bool = False) -> dict:
    """``tiny``: sizes the simulator runs in seconds (no measurement)."""
    import jtorch

    sync = jtorch.cuda.synchronize
    torch = _torch_cuda()
    tsync = torch.cuda.synchronize if torch is not None else None
    rep, num = (1, 1) if tiny else (3, 2) if quick else (7, 10)
    res: dict = {"device": jtorch.cuda.get_device_name(), "torch_cuda": torch is not None}

    n = 1 << (6 if tiny else 16 if quick else 26)
    x = jtorch.rand(n, device="cuda")
    out = jtorch.empty_like(x)
    t = _time(lambda: out.copy_(x), sync, rep, num)
    copy_gbs = 2 * 4 * n / t / 1e9
    res["copy"] = {"n": n, "seconds": t, "GB/s": copy_gbs}

    @jtorch.compile
    def chain(v):
        return v.sin() + v.cos() * v - (-v * v).exp()

    t = _time(lambda: chain(x), sync, rep, num)
    gbs = 2 * 4 * n / t / 1e9
    res["chain"] = {"n": n, "seconds": t, "GB/s": gbs, "share_of_copy": gbs / copy_gbs,
                    "target": 0.8}
    if torch is not None:
        tx = torch.rand(n, device="cuda")
        tc = torch.compile(lambda v: v.sin() + v.cos() * v - (-v * v).exp())
        res["chain"]["torch_compile_seconds"] = _time(lambda: tc(tx), tsync, rep, num)

    m = 8 if tiny else 256 if quick else 4096
    a, b = jtorch.randn(m, m, device="cuda"), jtorch.randn(m, m, device="cuda")
    t = _time(lambda: a @ b, sync, rep, max(1, num // 5))
    res["sgemm"] = {"n": m, "seconds": t, "TFLOP/s": 2 * m ** 3 / t / 1e12, "target": 0.9}
    if torch is not None:
        ta, tb = torch.randn(m, m, device="cuda"), torch.randn(m, m, device="cuda")
        tt = _time(lambda: ta @ tb, tsync, rep, max(1, num // 5))
        res["sgemm"].update(torch_seconds=tt, ratio_of_torch=tt / t)

    s = jtorch.ones(16, device="cuda")
    t = _time(lambda: s + 1, sync, rep, num * 10)
    res["launch"] = {"seconds": t, "target": "<= 3x torch"}
    if torch is not None:
        ts = torch.ones(16, device="cuda")
        tt = _time(lambda: ts + 1, tsync, rep, num * 10)
        res["launch"].update(torch_seconds=tt, ratio_to_torch=t / tt)

    res["demo_cnn"] = _demo_step(jtorch, quick, rep, 1 if tiny else 3, 2 if tiny else 64)
    return res


def _demo_step(jtorch, quick: bool, rep: int, number: int, batch: int) -> dict:
    """One training step of the demo CNN (batch 64, Adam) on the GPU; torch eager on the CPU
    beside it (the target: the GPU step faster)."""
    from .benchmarks.train import demo_lenet

    def step_fn(lib, dev):
        lib.manual_seed(0)
        model = demo_lenet(lib)().to(dev)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x = lib.randn(batch, 1, 8, 8).to(dev)
        y = lib.randint(0, 10, (batch,)).to(dev)

        def step():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

        return step

    out = {"batch": batch, "seconds": _time(step_fn(jtorch, "cuda"), jtorch.cuda.synchronize, rep, number)}
    if not quick:
        try:
            import torch

            out["torch_cpu_seconds"] = _time(step_fn(torch, "cpu"), lambda: None, rep, number)
            out["speedup_over_torch_cpu"] = out["torch_cpu_seconds"] / out["seconds"]
        except ImportError:
            pass
    from jtorch.kernels.cuda import eager

    out["host_path_ops"] = dict(sorted(eager.FALLBACKS.items()))
    return out


def main(quick: bool, out: str, simulator: bool, skip_sweeps: bool) -> int:
    if simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    doc: dict = {"quick": quick, "simulator": simulator}
    if not skip_sweeps:
        flags = ["--device"] + ([] if quick else ["--samples",
                                                  "--variants=contiguous,noncontig,0-d,0-size"])
        doc["op_sweep"] = _sweep("cuda_op_sweep.py", flags + (["torch:add", "torch:exp"]
                                                             if quick else []), simulator)
        doc["pointwise_sweep"] = _sweep("cuda_sim_sweep.py",
                                        ["--device"] + (["exp", "atan2"] if quick else []),
                                        simulator)
    import jtorch

    if not jtorch.cuda.is_available():
        doc["benchmarks"] = {"error": "no CUDA device (use --simulator for a smoke run)"}
    else:
        doc["benchmarks"] = benchmarks(quick, tiny=simulator)
    text = json.dumps(doc, indent=1, default=str)
    with open(out, "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {out}")
    sweeps_ok = skip_sweeps or all(not doc[k].get("failures") and "error" not in doc[k]
                                   for k in ("op_sweep", "pointwise_sweep"))
    return 0 if sweeps_ok and "error" not in doc["benchmarks"] else 1
