"""Framework switches against torch's own: deterministic algorithms (flags, debug modes,
``put_``'s alert, ``empty``'s fill, and results that do not depend on the thread count),
the float32 matmul precision, warn-always, ``torch.backends``, the ``sym_*`` helpers and
``_assert``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import jtorch


@pytest.fixture(autouse=True)
def _restore():
    """Each test leaves both libraries' switches as it found them."""
    saved = [(lib.are_deterministic_algorithms_enabled(),
              lib.is_deterministic_algorithms_warn_only_enabled(),
              lib.get_float32_matmul_precision(), lib.is_warn_always_enabled())
             for lib in (jtorch, torch)]
    yield
    for lib, (det, warn_only, prec, always) in zip((jtorch, torch), saved):
        lib.use_deterministic_algorithms(det, warn_only=warn_only)
        lib.set_float32_matmul_precision(prec)
        lib.set_warn_always(always)


def _both(fn):
    """fn(lib) for jtorch and torch: (result or (error type, message)) of each."""
    out = []
    for lib in (jtorch, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001  (the class named as torch names its own)
            out.append((type(e).__name__, str(e).replace("jtorch.tensor.Tensor", "torch.Tensor")))
    return out


# -- determinism: the switches -----------------------------------------------------------------

def _det_state(lib):
    return (lib.are_deterministic_algorithms_enabled(),
            lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode())


@pytest.mark.parametrize("calls", [
    [("use", True, False)], [("use", True, True)], [("use", False, True)],
    [("use", True, False), ("use", False, False)],
    [("mode", "warn")], [("mode", "error")], [("mode", "default")], [("mode", 1)], [("mode", 2)],
    [("mode", "error"), ("mode", 0)],
])
def test_deterministic_switches_follow_torch(calls):
    def run(lib):
        states = []
        for kind, *a in calls:
            if kind == "use":
                lib.use_deterministic_algorithms(a[0], warn_only=a[1])
            else:
                lib.set_deterministic_debug_mode(a[0])
            states.append(_det_state(lib))
        return states

    mine, theirs = _both(run)
    assert mine == theirs


@pytest.mark.parametrize("call", [
    lambda lib: lib.use_deterministic_algorithms(1),
    lambda lib: lib.use_deterministic_algorithms("x"),
    lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
    lambda lib: lib.set_deterministic_debug_mode("x"),
    lambda lib: lib.set_deterministic_debug_mode(3),
    lambda lib: lib.set_deterministic_debug_mode(-1),
    lambda lib: lib.set_deterministic_debug_mode(1.0),
])
def test_deterministic_switches_refuse_what_torch_refuses(call):
    mine, theirs = _both(call)
    assert isinstance(theirs, tuple) and mine == theirs


def _put(lib, accumulate: bool):
    x = lib.zeros(5)
    return x.put_(lib.tensor([0, 0, 1]), lib.tensor([1.0, 2.0, 3.0]), accumulate=accumulate)


def test_put_without_accumulate_raises_in_deterministic_mode():
    for lib in (jtorch, torch):
        lib.use_deterministic_algorithms(True)
    mine, theirs = _both(lambda lib: _put(lib, False))
    assert theirs[0] == "RuntimeError" and mine == theirs
    mine, theirs = _both(lambda lib: _put(lib, True).tolist())  # accumulate: deterministic
    assert mine == theirs == [3.0, 3.0, 0.0, 0.0, 0.0]
    for lib in (jtorch, torch):
        lib.use_deterministic_algorithms(False)
    assert _put(jtorch, False).tolist()[1:] == [3.0, 0.0, 0.0, 0.0]


def test_put_warns_with_warn_only():
    got = []
    for lib in (jtorch, torch):
        lib.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _put(lib, False)
        got.append([(x.category, str(x.message).split(" (Triggered")[0]) for x in w])
    assert got[0] == got[1] and len(got[0]) == 1


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int64",
                                   "int32", "uint8", "bool"])
def test_empty_is_filled_in_deterministic_mode(dtype):
    vals = []
    for lib in (jtorch, torch):
        lib.use_deterministic_algorithms(True)
        d = getattr(lib, dtype)
        made = [lib.empty(3, dtype=d), lib.empty_like(lib.zeros(2, 2, dtype=d)),
                lib.empty_strided((2, 3), (1, 2), dtype=d), lib.zeros(1, dtype=d).new_empty(4)]
        vals.append([np.asarray(x.numpy()).tolist() for x in made])
    assert repr(vals[0]) == repr(vals[1])  # nan == nan as text
    jtorch.use_deterministic_algorithms(False)


def test_empty_is_not_filled_when_the_user_says_so():
    import jtorch.utils.deterministic as d

    jtorch.use_deterministic_algorithms(True)
    d.fill_uninitialized_memory = False
    try:
        x = jtorch.empty(1 << 12)
        x.fill_(1.0)  # no NaN written first: nothing to see but that it runs
        assert x.sum().item() == 1 << 12
    finally:
        d.fill_uninitialized_memory = True


# -- determinism: the same results on any number of threads -------------------------------------

_THREADS_PROGRAM = r"""
import hashlib, json, sys
import numpy as np
import jtorch as t
t.set_num_threads(int(sys.argv[1]))
t.use_deterministic_algorithms(True)
t.manual_seed(0)
rng = np.random.default_rng(0)
H = lambda v: hashlib.md5(v.detach().numpy().tobytes()).hexdigest()
out = {}
# per-image convolutions (>= 12x12 planes): forward, input and weight gradients, transposed
x = t.from_numpy(rng.standard_normal((9, 8, 16, 16)).astype(np.float32)).requires_grad_()
conv = t.nn.Conv2d(8, 16, 3, padding=1)
y = conv(x)
y.pow(2).sum().backward()
out.update(y=H(y), gx=H(x.grad), gw=H(conv.weight.grad), gb=H(conv.bias.grad))
out["convT"] = H(t.nn.ConvTranspose2d(8, 4, 3)(x.detach()))
big = t.from_numpy(rng.standard_normal((1 << 17,)).astype(np.float32))
m = big.reshape(256, 512)
out.update(sum=H(big.sum()), var=H(big.var()), cumsum=H(big.cumsum(0)), sum0=H(m.sum(0)),
           softmax=H(m.softmax(-1)), norm=H(t.nn.functional.layer_norm(m, (512,))),
           mm=H(m @ m.t()), randn=H(t.randn(1 << 17)), drop=H(t.nn.functional.dropout(big)))
print("RESULT " + json.dumps(out))
"""


def test_results_do_not_depend_on_the_thread_count_in_deterministic_mode(tmp_path):
    prog = tmp_path / "threads.py"
    prog.write_text(_THREADS_PROGRAM)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(jtorch.__file__)),
               JTORCH_GRAIN_SIZE="1024")  # small work still runs the parallel kernels
    res = []
    for n in (1, 2):
        p = subprocess.run([sys.executable, str(prog), str(n)], env=env, capture_output=True,
                           text=True, timeout=600, check=False)
        assert p.returncode == 0, p.stderr
        line = [s for s in p.stdout.splitlines() if s.startswith("RESULT ")][-1]
        res.append(json.loads(line[len("RESULT "):]))
    diff = [k for k in res[0] if res[0][k] != res[1][k]]
    assert not diff, f"differ between 1 and 2 threads: {diff}"


# -- matmul precision, warnings, backends -------------------------------------------------------

@pytest.mark.parametrize("seq", [["high"], ["medium"], ["high", "highest"], ["low"], ["HIGH"]])
def test_float32_matmul_precision_follows_torch(seq):
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for p in seq:
                lib.set_float32_matmul_precision(p)
        return lib.get_float32_matmul_precision(), [str(x.message)[:40] for x in w]

    mine, theirs = _both(run)
    assert mine == theirs


def test_allow_tf32_is_the_precision_through_the_old_flag():
    jtorch.set_float32_matmul_precision("highest")
    assert jtorch.backends.cuda.matmul.allow_tf32 is False
    jtorch.set_float32_matmul_precision("medium")
    assert jtorch.backends.cuda.matmul.allow_tf32 is True
    jtorch.backends.cuda.matmul.allow_tf32 = False
    assert jtorch.get_float32_matmul_precision() == "highest"


def test_backend_flags_read_as_on_a_machine_without_cuda():
    b, tb = jtorch.backends, torch.backends
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
        assert getattr(b.cudnn, name) == getattr(tb.cudnn, name), name
    assert (b.cudnn.is_available(), b.cudnn.version(), b.mps.is_available(), b.mps.is_built(),
            b.cuda.is_built()) == (False, None, False, False, False)
    assert b.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert b.cpu.get_cpu_capability() in ("AVX2", "AVX512", "DEFAULT")
    assert isinstance(b.openmp.is_available(), bool) and isinstance(b.mkldnn.is_available(), bool)
    with b.cudnn.flags(enabled=False, deterministic=True):
        assert b.cudnn.enabled is False and b.cudnn.deterministic is True
    assert b.cudnn.enabled is True and b.cudnn.deterministic is False


def test_warn_always_repeats_once_per_process_warnings():
    m = [jtorch.eye(2)] * 2
    assert jtorch.is_warn_always_enabled() is False
    jtorch.chain_matmul(*m)  # the once-per-process warning may have been given already
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        jtorch.chain_matmul(*m)
        assert not w
        jtorch.set_warn_always(True)
        assert jtorch.is_warn_always_enabled() is True
        jtorch.chain_matmul(*m)
        jtorch.chain_matmul(*m)
    assert [str(x.message).startswith("torch.chain_matmul is deprecated") for x in w] == [True] * 2


# -- symbolic-number helpers, _assert -----------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.sym_int(3.7), lambda lib: lib.sym_int(-3.7), lambda lib: lib.sym_int(True),
    lambda lib: lib.sym_int(np.float32(2.5)), lambda lib: lib.sym_float(3),
    lambda lib: lib.sym_max(2, 3.0), lambda lib: lib.sym_max(3, 2.0), lambda lib: lib.sym_max(2, 3),
    lambda lib: lib.sym_min(2, 3.0), lambda lib: lib.sym_min(np.int64(4), 3),
    lambda lib: lib.sym_max(lib.tensor(1), 2), lambda lib: lib.sym_not(True),
    lambda lib: lib.sym_not(0), lambda lib: lib.sym_ite(True, 1, 2),
    lambda lib: lib.sym_ite(False, "a", "b"), lambda lib: lib.sym_ite(1, 2, 3),
    lambda lib: lib.compiled_with_cxx11_abi(),
    lambda lib: lib._assert(False, "the message"), lambda lib: lib._assert(0, 3),
    lambda lib: lib._assert(True, "never"), lambda lib: lib._assert(lib.tensor(False), "tensor"),
    lambda lib: lib._assert(lib.tensor([True]), "tensor"),
])
def test_sym_helpers_and_assert_follow_torch(call):
    mine, theirs = _both(call)
    assert (type(mine), mine) == (type(theirs), theirs)


def test_assert_in_a_compiled_function_checks_its_condition():
    def f(x):
        jtorch._assert(x.sum() > 0, "needs a positive sum")
        return x * 2

    cf = jtorch.compile(f)
    assert cf(jtorch.ones(3)).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(AssertionError, match="needs a positive sum"):
        cf(-jtorch.ones(3))
    s = jtorch.compile(lambda x: x.reshape(jtorch.sym_int(x.shape[0] / 2), 2), dynamic=True)
    assert tuple(s(jtorch.ones(6)).shape) == (3, 2)


# -- determinism in compiled code: bitwise eager's results ----------------------------------

_REDUCING = {
    "row sum": lambda x: (x * 2 + 1).sum(-1),
    "row mean": lambda x: x.exp().mean(-1, keepdim=True) * x,
    "softmax": lambda x: jtorch.nn.functional.softmax(x, -1),
    "log_softmax": lambda x: jtorch.nn.functional.log_softmax(x * 0.5, -1),
    "layer_norm": lambda x: jtorch.nn.functional.layer_norm(x, (x.shape[-1],)),
    "var": lambda x: (x + 1).var(-1),
    "logsumexp": lambda x: x.logsumexp(-1),
    "column sum": lambda x: (x * x).sum(0),
    "column mean": lambda x: (x - 1).mean(0),
    "column amax": lambda x: (x * 3).amax(0),
    "all": lambda x: (x * 2).sum() + x.mean(),
}


@pytest.mark.parametrize("shape", [(7, 33), (64, 1000), (300, 600)])
def test_compiled_reductions_are_bitwise_eager_in_deterministic_mode(shape):
    x = jtorch.from_numpy(np.random.default_rng(3).standard_normal(shape).astype(np.float32))
    jtorch.use_deterministic_algorithms(True)
    for name, f in _REDUCING.items():
        got, want = jtorch.compile(f)(x), f(x)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)


def test_compiled_training_gradients_are_bitwise_eager_in_deterministic_mode():
    jtorch.use_deterministic_algorithms(True)
    grads = []
    for compiled in (False, True):
        jtorch.manual_seed(0)
        m = jtorch.nn.Sequential(jtorch.nn.Linear(20, 32), jtorch.nn.LayerNorm(32),
                                 jtorch.nn.GELU(), jtorch.nn.Linear(32, 5))
        x = jtorch.from_numpy(np.random.default_rng(4).standard_normal((16, 20)).astype(np.float32))
        f = jtorch.compile(m) if compiled else m
        jtorch.nn.functional.cross_entropy(f(x), jtorch.arange(16) % 5).backward()
        grads.append([p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_switching_determinism_recompiles():
    f = lambda x: (x * 2 + 1).sum(-1)
    cf = jtorch.compile(f)
    x = jtorch.randn(64, 1000)
    cf(x)
    jtorch.use_deterministic_algorithms(True)
    np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    assert len(cf.entries) == 2


def test_symbolic_number_classes_answer_isinstance_as_torch():
    import torch

    for lib in (torch, jtorch):
        assert not isinstance(3, lib.SymInt) and not isinstance(3.0, lib.SymFloat)
        assert not isinstance(True, lib.SymBool)
        assert issubclass(lib.SymInt, object) and lib.SymInt.__name__ == "SymInt"
    n = jtorch.compile(lambda x: x.shape[0] * 2, dynamic=True)(jtorch.ones(3))
    assert isinstance(n, jtorch.SymInt) and n == 6  # a traced size is one
