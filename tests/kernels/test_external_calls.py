"""``calls.external``: a callee called by process symbol compiles once, is not linked into
its callers' code, and works again when the callers load from Numba's disk cache (the
symbol is entered by the cache entry's ``reload_init`` before the code loads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_MODULE = textwrap.dedent('''
    import numpy as np
    from numba import njit, prange
    from jtorch.kernels.cpu.calls import external

    @njit(cache=True)
    def body(a, lo, hi):
        s = 0.0
        for i in range(lo, hi):
            s += a[i] * a[i]
        return s

    _body = external(body)

    @njit(cache=True)
    def serial(a):
        return _body(a, np.int64(0), np.int64(a.shape[0]))

    @njit(cache=True, parallel=True)
    def par(a, out):
        n = a.shape[0]
        for t in prange(2):
            out[t] = _body(a, np.int64(t * n // 2), np.int64((t + 1) * n // 2))
''')

_SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import extmod as m
    a = np.arange(10.0)
    out = np.zeros(2)
    m.par(a, out)
    res = {"serial": m.serial(a), "par": out.tolist(),
           "hits": m.serial.stats.cache_hits.get(m.serial.signatures[0], 0)
                   + m.par.stats.cache_hits.get(m.par.signatures[0], 0),
           "body_compiled": len(m.body.signatures)}
    if not res["hits"]:  # compiled here: the callers' code declares the body, never defines it
        name = m.body.overloads[m.body.signatures[0]].fndesc.llvm_func_name
        ir = m.serial.inspect_llvm(m.serial.signatures[0])
        res["defined_in_caller"] = ("define" in ir and name in ir and
                                    any(name in ln for ln in ir.splitlines()
                                        if ln.startswith("define")))
    print(json.dumps(res))
''')


def _run(tmp_path, cache_dir) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_external_callee_compiles_once_and_survives_the_disk_cache(tmp_path):
    (tmp_path / "extmod.py").write_text(_MODULE)
    cache = tmp_path / "numba_cache"
    want_serial, want_par = 285.0, [30.0, 255.0]
    cold = _run(tmp_path, cache)
    assert cold["serial"] == want_serial and cold["par"] == want_par
    assert cold["hits"] == 0 and cold["body_compiled"] == 1
    assert cold["defined_in_caller"] is False
    warm = _run(tmp_path, cache)  # both callers from the cache: the symbol comes back first
    assert warm["serial"] == want_serial and warm["par"] == want_par
    assert warm["hits"] == 2
