"""torch.nn.parallel.replicate: one copy of a module per device, sharing the original's
submodule structure (``Module._replicate_for_data_parallel``) with its parameters and
buffers broadcast to each device. Without an accelerator the broadcast raises torch's
CPU-only error; a module with no tensors replicates as in torch."""

from __future__ import annotations

from collections import OrderedDict

from ._devices import device_index, refuse_cpu

__all__ = ["replicate"]


def _broadcast(tensors: list, devices: list) -> None:
    """torch's Broadcast / broadcast_coalesced of ``tensors`` to ``devices``: nothing to do
    for none, torch's CPU-only error for any (there is no device to copy them to)."""
    if tensors:
        refuse_cpu("Broadcast", tensors)


def replicate(network, devices, detach: bool = False) -> list:
    """``len(devices)`` replicas of ``network`` (none for no devices).

    >>> jtorch.nn.parallel.replicate(jtorch.nn.ReLU(), [0, 1])
    [ReLU(), ReLU()]
    """
    if not devices:
        return []
    devices = [device_index(d) for d in devices]
    _broadcast(list(network.parameters()), devices)
    _broadcast(list(network.buffers()), devices)
    # past the broadcasts the network holds no tensors: a replica is its module structure
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    for replicas in copies:
        for module, replica in zip(modules, replicas):
            replica._former_parameters = OrderedDict()
            for key, child in module._modules.items():
                if child is None:
                    replica._modules[key] = None
                else:
                    setattr(replica, key, replicas[index[id(child)]])
            for key in module._parameters:
                replica._parameters[key] = None
            for key in module._buffers:
                replica._buffers[key] = None
    return [replicas[0] for replicas in copies]
