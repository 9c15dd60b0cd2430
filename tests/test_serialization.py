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
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):  # torch's
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
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(buf.getvalue()))
    assert _CALLS == []
    # the same in jtorch's own format
    buf = io.BytesIO()
    jtorch.save({"x": _Boom()}, buf, _use_new_zipfile_serialization=False)
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
    with pytest.raises(RuntimeError, match="not a checkpoint jtorch can read"):
        jtorch.load(io.BytesIO(b"\x02\x00\x00\x00\x00\x00\x00\x00[]"))
    assert jtorch.load(io.BytesIO(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")) == {}  # safetensors
    bad = bytearray(data)
    bad[data.index(np.float32(1).tobytes())] ^= 1  # a weight's byte: its record's CRC fails
    with pytest.raises(RuntimeError, match="corrupt"):
        jtorch.load(io.BytesIO(bytes(bad)))
    old = io.BytesIO()  # jtorch's own format
    jtorch.save({"w": jtorch.ones(100)}, old, _use_new_zipfile_serialization=False)
    data = old.getvalue()
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        jtorch.load(io.BytesIO(data[:40]))
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
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        jtorch.load(io.BytesIO(data))
    with S.safe_globals([_Config]):
        assert jtorch.load(io.BytesIO(data))["cfg"].a == 3
    assert S.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
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


# -- torch's zip format, both ways ------------------------------------------------------------

_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
           "complex64", "complex128"]


def _values(lib, dtype: str):
    a = (np.arange(12).reshape(3, 4) % 5 - 2).astype(np.dtype(dtype))
    return lib.from_numpy(a.copy())


def _checkpoint(lib):
    """The same object built by torch or by jtorch: a module's state_dict, views of one
    storage (a slice, a transpose), a parameter, every dtype, 0-d and empty tensors, sizes,
    dtypes, devices and plain containers."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    base = lib.arange(12.0).view(3, 4)
    return {"sd": net.state_dict(), "base": base, "rows": base[1:], "t": base.t(),
            "same": [base, base], "p": lib.nn.Parameter(lib.ones(2) * 3),
            "dtypes": {d: _values(lib, d) for d in _DTYPES}, "zero_d": lib.tensor(2.5),
            "empty": lib.zeros(0, 3), "size": lib.Size([2, 3]), "dt": lib.float16,
            "dev": lib.device("cpu"), "misc": (1, 2.5, "s", None, True, b"by", {1, 2})}


def _same_values(a, b) -> None:
    """A torch object and a jtorch one hold the same values (recursively)."""
    import torch

    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        assert getattr(a, "_metadata", None) == getattr(b, "_metadata", None)
        for k in a:
            _same_values(a[k], b[k])
    elif isinstance(a, (list, tuple)) and not isinstance(a, torch.Size):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same_values(x, y)
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, jtorch.Tensor) and str(a.dtype) == str(b.dtype)
        assert tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride())
        assert isinstance(a, torch.nn.Parameter) == isinstance(b, jtorch.nn.Parameter)
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, (torch.dtype, torch.device, torch.Size)):
        assert str(a) == str(b)
    else:
        assert a == b and type(a) is type(b)


def test_torch_reads_what_jtorch_saves(tmp_path):
    import torch

    path = tmp_path / "ckpt.pt"
    jtorch.save(_checkpoint(jtorch), path)
    got = torch.load(path, weights_only=True)  # torch's restricted unpickler accepts it
    _same_values(got, _checkpoint(jtorch))
    assert got["rows"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    assert got["rows"].storage_offset() == 4 and got["same"][0] is got["same"][1]
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    net.load_state_dict(got["sd"])
    # the archive is torch's: records aligned for mmap loads
    assert torch.load(path, weights_only=True, mmap=True)["t"].stride() == (1, 4)


def test_jtorch_reads_what_torch_saves(tmp_path):
    import torch

    path = tmp_path / "ckpt.pt"
    torch.save(_checkpoint(torch), path)
    got = jtorch.load(path)
    _same_values(_checkpoint(torch), got)
    got["rows"][0, 0] = 100.0  # views of one storage share memory again
    assert got["base"][1, 0].item() == 100.0 and got["t"][0, 1].item() == 100.0
    assert got["same"][0] is got["same"][1]
    net = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.BatchNorm1d(4))
    net.load_state_dict(got["sd"])
    meta = jtorch.load(path, map_location="meta")
    assert meta["base"].device.type == "meta" and meta["base"].shape == (3, 4)
    assert jtorch.load(path, map_location={"cpu": "cpu"})["p"].requires_grad
    assert jtorch.load(path, map_location=lambda storage, loc: storage)["zero_d"].item() == 2.5


def test_torch_pickled_modules_need_weights_only_false(tmp_path):
    import torch

    path = tmp_path / "net.pt"
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    torch.save(net, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*Sequential"):
        jtorch.load(path)
    back = jtorch.load(path, weights_only=False)  # torch's classes resolve to jtorch's
    assert isinstance(back, jtorch.nn.Sequential) and isinstance(back[0], jtorch.nn.Linear)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(back(jtorch.from_numpy(x)).detach().numpy(),
                               net(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_torch_pickled_modules_load_with_their_classes_allowlisted(tmp_path):
    # the classes a torch checkpoint names are torch's; allowlisting jtorch's same classes
    # (what ``import jtorch as torch`` code passes to safe_globals) admits them
    import torch

    path = tmp_path / "net.pt"
    net = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.ReLU(), torch.nn.PixelShuffle(2))
    torch.save(net, path)
    nn = jtorch.nn
    allowed = [nn.Sequential, nn.modules.conv.Conv2d, nn.modules.activation.ReLU,
               nn.modules.pixelshuffle.PixelShuffle]
    with jtorch.serialization.safe_globals(allowed[:-1]):
        with pytest.raises(pickle.UnpicklingError, match="PixelShuffle"):
            jtorch.load(path)
    with jtorch.serialization.safe_globals(allowed):
        back = jtorch.load(path)
    assert isinstance(back[2], nn.PixelShuffle)
    x = np.random.default_rng(0).standard_normal((1, 4, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(back(jtorch.from_numpy(x)).detach().numpy(),
                               net(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_torch_files_jtorch_cannot_read_say_so(tmp_path, monkeypatch):
    import torch

    from jtorch import _torch_zip

    legacy = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy checkpoint format"):
        jtorch.load(legacy)
    script = tmp_path / "script.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), script)
    with pytest.raises(RuntimeError, match="TorchScript"):
        jtorch.load(script)
    # a tensor saved from a CUDA device: torch's error on a machine without one, unless mapped
    real = _torch_zip._Storages._ref
    monkeypatch.setattr(_torch_zip._Storages, "_ref",
                        lambda self, root, d: real(self, root, d)[:3] + ("cuda:0",) +
                        real(self, root, d)[4:])
    cuda = tmp_path / "cuda.pt"
    jtorch.save({"w": jtorch.ones(2)}, cuda)
    with pytest.raises(RuntimeError, match="on a CUDA device but torch.cuda.is_available"):
        jtorch.load(cuda)
    assert jtorch.load(cuda, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    assert jtorch.load(cuda, map_location={"cuda:0": "cpu"})["w"].sum().item() == 2.0


def test_plain_safetensors_files_load_as_dicts(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "model.safetensors"
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3),
               "i": np.array([1, 2], np.int64)}, str(path))
    got = jtorch.load(path)
    assert set(got) == {"w", "i"} and got["w"].shape == (2, 3) and got["i"].dtype == jtorch.int64
    np.testing.assert_array_equal(got["w"].numpy(), np.arange(6).reshape(2, 3))
    assert jtorch.load(path, map_location="meta")["w"].device.type == "meta"


def test_views_past_their_storage_are_refused(tmp_path, monkeypatch):
    from jtorch import _torch_zip

    path = tmp_path / "bad.pt"
    jtorch.save({"w": jtorch.ones(4)}, path)
    real = _torch_zip._Storages._storage
    monkeypatch.setattr(_torch_zip._Storages, "_storage",
                        lambda self, a, d: (real(self, a, d)[0], 2, (1,)))  # offset 2 of 4
    jtorch.save({"w": jtorch.ones(4)}, path)
    with pytest.raises(RuntimeError, match="reaches past its storage"):
        jtorch.load(path)


def test_tuples_of_five_round_trip():
    """A user's 5-tuple is not mistaken for a storage reference (pickle asks persistent_id
    about every object)."""
    obj = (jtorch.ones(2), np.arange(3), "storage", 4, (5,))
    got = _roundtrip(obj, weights_only=False)
    assert got[0].tolist() == [1.0, 1.0] and got[1].tolist() == [0, 1, 2] and got[2:] == obj[2:]


@pytest.mark.parametrize("name", ["torch", "jtorch"])
def test_weights_only_default_and_environment_overrides(name, tmp_path, monkeypatch):
    # torch.load's weights_only=None: True unless a pickle_module is given; the two
    # TORCH_FORCE_* variables override it, the NO variant only when the call leaves it unset
    lib = pytest.importorskip(name)
    path = tmp_path / "a.pt"
    lib.save(np.arange(3.0), path)
    with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[numpy\._core\.multiarray"):
        lib.load(path)
    assert lib.load(path, pickle_module=pickle).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        lib.load(path, pickle_module=pickle, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected"):
        assert lib.load(path).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(pickle.UnpicklingError):
        lib.load(path, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(RuntimeError, match="Only one of"):
        lib.load(path)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    with pytest.raises(pickle.UnpicklingError):
        lib.load(path, weights_only=False)
