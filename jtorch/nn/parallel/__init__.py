"""torch.nn.parallel: data parallelism over devices. Without an accelerator (jtorch has none)
``DataParallel`` runs its module as it is, as torch does when no GPU is visible; the steps it
would take with devices (scatter, replicate, parallel_apply, gather) are torch's functions,
which raise torch's no-accelerator errors once a tensor would have to move."""

from __future__ import annotations

from ...autograd.grad_mode import is_grad_enabled
from ..modules.module import Module
from .parallel_apply import get_a_var, parallel_apply  # noqa: F401
from .replicate import replicate
from .scatter_gather import gather, scatter, scatter_kwargs


class DataParallel(Module):
    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []  # no accelerator: torch keeps none
        self.dim = dim
        self.output_device = output_device

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def replicate(self, module: Module, device_ids) -> list:
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids) -> tuple:
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


class DistributedDataParallel(Module):
    def __init__(self, module: Module, *args, **kwargs) -> None:
        raise RuntimeError("Default process group has not been initialized, please make sure to "
                           "call init_process_group.")


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """torch's functional DataParallel: it needs an accelerator's device type, so without
    one it raises (the DataParallel module instead runs its module as it is)."""
    raise RuntimeError("device type could not be determined")


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather",
           "parallel_apply", "replicate", "scatter"]
