"""Generated kernels are real files named by content, loaded warm by a second process."""

import os
import subprocess
import sys

import jtorch
from jtorch.kernels import source


def test_generated_module_is_a_named_file(tmp_path, monkeypatch):
    monkeypatch.setattr(jtorch._flags, "CACHE_DIR", str(tmp_path))
    mod = source.load("jt_test_probe", "X = 1\n")
    assert os.path.basename(mod.__file__).startswith("jt_test_probe_")
    assert mod.__name__ in sys.modules and mod.X == 1
    assert source.load("jt_test_probe", "X = 1\n") is mod


def test_pointwise_source_names_its_op_and_dtypes():
    from jtorch.kernels.cpu import pointwise

    mod = pointwise.kernels(jtorch.kernels.registry.get("mul"), 2, "float32", "float32")
    with open(mod.__file__) as f:
        text = f.read()
    assert text.startswith("# mul: binary pointwise op, compute float32 -> out float32")
    assert "def c_as(out0, in0, in1):" in text and "def s_2(shape," in text


def test_second_process_loads_kernels_from_disk_cache(tmp_path):
    script = (
        "import jtorch\n"
        "x = jtorch.ones(8)\n"
        "y = x * 3 + 1\n"
        "from jtorch import dispatch\n"
        "k = dispatch.kernel(jtorch.kernels.registry.get('mul'), 2, jtorch.float32, "
        "jtorch.float32, 'c_as')\n"
        "print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))\n"
    )
    env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path))
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
    assert run() == ["0", "1"]   # cold: compiled
    assert run() == ["1", "0"]   # warm: loaded from the on-disk cache


def test_hand_written_kernels_cache_outside_the_package():
    from jtorch.kernels.cpu import normalization

    path = normalization.layer_norm_fwd._cache._cache_path
    package = os.path.dirname(os.path.abspath(jtorch.__file__))
    assert path.startswith(os.path.join(jtorch._flags.CACHE_DIR, "numba"))
    assert not os.path.abspath(path).startswith(package)


def test_fingerprint_of_a_compiled_function_is_the_same_in_every_process():
    """A Numba dispatcher counts with its Python source (its repr holds an address: a
    fingerprint of it named a new module, compiled again, in every process)."""
    script = ("from jtorch.kernels.source import fingerprint\n"
              "from jtorch.kernels.cpu import conv\n"
              "print(fingerprint(conv.conv_images), fingerprint(conv.conv_images.py_func))\n")
    run = lambda: subprocess.run([sys.executable, "-c", script], capture_output=True,
                                 text=True, check=True).stdout.split()
    first, second = run(), run()
    assert first == second and first[0] == first[1]


def test_fingerprint_of_a_scalar_lambda_covers_the_kernel_modules_it_names(monkeypatch):
    """digamma's scalar is a lambda of defs/special.py calling special_math: an edit of
    special_math.py must change the kernels' cache key too."""
    from jtorch.kernels import special_math

    fn = jtorch.kernels.registry.get("digamma").scalar
    monkeypatch.setattr(source, "_src_hash_cache", {})
    before = source.fingerprint(fn)
    monkeypatch.setattr(source, "_src_hash_cache", {})
    monkeypatch.setitem(source._file_hashes, special_math.__file__, "edited")
    assert source.fingerprint(fn) != before
