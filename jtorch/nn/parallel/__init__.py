"""torch.nn.parallel: data parallelism over devices. Without accelerators ``DataParallel``
runs its module as it is (torch does the same when no GPU is visible)."""

from __future__ import annotations

from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim
        self.output_device = output_device

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    def __init__(self, module: Module, *args, **kwargs) -> None:
        raise RuntimeError("Default process group has not been initialized, please make sure to "
                           "call init_process_group.")


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
