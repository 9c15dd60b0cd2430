"""torch.onnx: importable, so that programs which import it run; exporting is not supported."""

from __future__ import annotations


def export(*args, **kwargs):
    raise NotImplementedError("jtorch.onnx.export: exporting to ONNX is not supported")


def is_in_onnx_export() -> bool:
    return False
