"""jtorch.save / jtorch.load: round trips, safety against malicious files, corrupt files."""

from __future__ import annotations

import base64
import io
import json
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import jtorch


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    jtorch.save(obj, buf)
    buf.seek(0)
    return jtorch.load(buf, **kw)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                   "float32", "float64", "complex64", "complex128"])
def test_tensor_dtypes_round_trip(dtype):
    a = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    t = jtorch.from_numpy(a)
    r = _roundtrip(t)
    assert r.dtype is t.dtype and tuple(r.shape) == (2, 3)
    np.testing.assert_array_equal(r.numpy(), a)


def test_shapes_views_and_flags(tmp_path):
    base = jtorch.arange(12.0).reshape(3, 4)
    objs = {"scalar": jtorch.tensor(3.5), "empty": jtorch.zeros(0, 3), "view": base.t()[1:],
            "grad": jtorch.ones(2, requires_grad=True), "param": jtorch.nn.Parameter(jtorch.ones(1))}
    path = tmp_path / "x.pt"
    jtorch.save(objs, path)
    r = jtorch.load(path)
    assert r["scalar"].item() == 3.5 and r["scalar"].dim() == 0
    assert tuple(r["empty"].shape) == (0, 3)
    np.testing.assert_array_equal(r["view"].numpy(), base.t()[1:].numpy())
    assert r["grad"].requires_grad and r["grad"].is_leaf
    assert isinstance(r["param"], jtorch.nn.Parameter) and r["param"].requires_grad
    r["view"][0, 0] = 100.0  # loaded tensors own writable memory
    assert base[0, 1].item() == 1.0


def test_nested_containers_and_scalars():
    shared = jtorch.ones(3)
    obj = OrderedDict(a=[1, 2.5, float("nan"), float("inf"), None, True, "s", (1, (2,))],
                      b={0: shared, 1: {"x": shared, "$weird": 1}}, c=jtorch.Size([2, 3]),
                      d=jtorch.float16, e=b"bytes", f={1, 2}, g=np.float32(1.5))
    r = _roundtrip(obj)
    assert isinstance(r, OrderedDict) and list(r) == list("abcdefg")
    assert r["a"][:2] == [1, 2.5] and np.isnan(r["a"][2]) and r["a"][3] == float("inf")
    assert r["a"][4:] == [None, True, "s", (1, (2,))]
    assert r["b"][0] is r["b"][1]["x"]  # one tensor saved once, loaded once
    assert r["b"][1]["$weird"] == 1
    assert r["c"] == jtorch.Size([2, 3]) and isinstance(r["c"], jtorch.Size)
    assert r["d"] is jtorch.float16 and r["e"] == b"bytes" and r["f"] == {1, 2}
    assert r["g"] == 1.5


def test_state_dict_round_trip_into_module():
    a = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.ReLU(), jtorch.nn.Linear(4, 1))
    b = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.ReLU(), jtorch.nn.Linear(4, 1))
    b.load_state_dict(_roundtrip(a.state_dict()))
    x = jtorch.randn(5, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_whole_module_needs_weights_only_false():
    net = jtorch.nn.Linear(2, 2)
    buf = io.BytesIO()
    jtorch.save(net, buf)
    with pytest.raises(RuntimeError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(buf.getvalue()))
    back = jtorch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert isinstance(back, jtorch.nn.Linear)
    np.testing.assert_array_equal(back.weight.detach().numpy(), net.weight.detach().numpy())


class _Boom:
    def __reduce__(self):
        return (_record_call, ("executed",))


_CALLS: list = []


def _record_call(x):
    _CALLS.append(x)
    return x


def test_malicious_files_never_execute():
    # a jtorch file whose pickles entry would run code when unpickled
    buf = io.BytesIO()
    jtorch.save({"x": _Boom()}, buf)
    _CALLS.clear()
    with pytest.raises(RuntimeError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(buf.getvalue()))
    assert _CALLS == []
    # a plain pickle (torch's legacy format, or an attack) is refused without unpickling
    evil = pickle.dumps(_Boom())
    with pytest.raises(RuntimeError):
        jtorch.load(io.BytesIO(evil))
    assert _CALLS == []
    # a hand-made header pointing "pickles" at an attack: still refused by default
    meta = {"format": "jtorch", "version": "1", "tree": json.dumps({"$pk": 0}),
            "pickles": base64.b64encode(pickle.dumps([_Boom()])).decode()}
    header = json.dumps({"__metadata__": meta}).encode()
    blob = struct.pack("<Q", len(header)) + header
    with pytest.raises(RuntimeError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(blob))
    assert _CALLS == []


def test_corrupt_and_truncated_files():
    buf = io.BytesIO()
    jtorch.save({"w": jtorch.ones(100)}, buf)
    data = buf.getvalue()
    with pytest.raises(RuntimeError, match="truncated"):
        jtorch.load(io.BytesIO(data[:4]))
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        jtorch.load(io.BytesIO(data[:40]))
    with pytest.raises(RuntimeError, match="corrupt"):
        jtorch.load(io.BytesIO(data[:-8]))
    with pytest.raises(RuntimeError, match="not a jtorch checkpoint"):
        jtorch.load(io.BytesIO(b"\x02\x00\x00\x00\x00\x00\x00\x00{}"))
    bad = bytearray(data)
    bad[10] = ord("#")
    with pytest.raises(RuntimeError):
        jtorch.load(io.BytesIO(bytes(bad)))


class _Config:
    """A user object saved beside the weights (only pickle can store it)."""

    def __init__(self, a) -> None:
        self.a = a


def test_safe_globals_allow_listed_objects_in_weights_only_loads():
    import io

    from jtorch import serialization as S

    buf = io.BytesIO()
    jtorch.save({"w": jtorch.ones(2), "cfg": _Config(3)}, buf)
    data = buf.getvalue()
    with pytest.raises(RuntimeError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(data))
    with S.safe_globals([_Config]):
        assert jtorch.load(io.BytesIO(data))["cfg"].a == 3
    assert S.get_safe_globals() == []
    with pytest.raises(RuntimeError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(data))
    S.add_safe_globals([_Config])
    try:
        assert S.get_safe_globals() == [_Config]
        assert jtorch.load(io.BytesIO(data))["cfg"].a == 3
        with S.safe_globals([(dict, "builtins.dict")]):
            assert len(S.get_safe_globals()) == 2
    finally:
        S.clear_safe_globals()
    assert S.get_safe_globals() == []
    S.add_safe_globals([jtorch.Size])  # another global than the file's: still refused
    try:
        with pytest.raises(Exception, match="Unsupported global"):
            jtorch.load(io.BytesIO(data))
    finally:
        S.clear_safe_globals()
