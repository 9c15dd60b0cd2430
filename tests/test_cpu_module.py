"""torch.cpu, torch.Stream / torch.Event, get_device_module and thread_safe_generator answer
as torch's CPU build does."""

from __future__ import annotations

import warnings

import pytest
import torch

import jtorch


def _both(fn):
    out = []
    for lib in (torch, jtorch):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001  (the exception type and message are compared)
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("fn", [
    lambda t: (t.cpu.is_available(), t.cpu.device_count(), t.cpu.current_device(),
               t.cpu.is_initialized(), t.cpu.synchronize(), t.cpu.set_device("cpu")),
    lambda t: type(t.cpu.current_stream()).__name__,
    lambda t: (repr(t.Stream()), repr(t.Stream("cpu", priority=0)), t.Stream() == t.Stream(),
               t.Stream().query(), t.Stream().synchronize(), t.Stream().device_index,
               t.Stream().is_capturing(), str(t.Stream().device)),
    lambda t: t.Stream().record_event(),
    lambda t: t.Stream().wait_stream(t.Stream()),
    lambda t: t.Stream().native_handle,
    lambda t: t.Stream("cuda"),
    lambda t: t.Event("cuda"),
    lambda t: (repr(t.Event()), str(t.Event().device), t.Event().query(),
               t.Event().synchronize(), t.Event().wait(), t.Event().event_id),
    lambda t: t.Event().record(),
    lambda t: t.Event().elapsed_time(t.Event()),
    lambda t: t.get_device_module().__name__.split(".")[-1],
    lambda t: t.get_device_module("cpu").__name__.split(".")[-1],
    lambda t: t.get_device_module(t.device("cuda")).__name__.split(".")[-1],
    lambda t: t.get_device_module(3),
    lambda t: t.thread_safe_generator(),
    lambda t: sorted(k for k in ("avx2", "avx512_f", "fma3", "num_logical_cores", "cpu_name",
                                 "architecture") if k in t.cpu.get_capabilities()),
    lambda t: [t.cpu.get_capabilities()[k] for k in ("avx2", "fma3", "avx512_f", "architecture")],
])
def test_matches_torch(fn):
    theirs, mine = _both(fn)
    assert mine == theirs


def test_cpu_amp_autocast_is_the_deprecated_spelling():
    for lib in (torch, jtorch):
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
            ctx = lib.cpu.amp.autocast()
        with ctx:
            assert lib.is_autocast_enabled("cpu")
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = lib.cpu.amp.GradScaler()
        assert scaler.is_enabled() == torch.cpu.amp.GradScaler().is_enabled()
    with jtorch.cpu.stream(jtorch.Stream()) as s:
        assert isinstance(s, jtorch.cpu.StreamContext)
