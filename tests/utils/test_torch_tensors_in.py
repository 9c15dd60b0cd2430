"""Tensors of the installed torch entering jtorch (a torchvision transform's output in a jtorch
DataLoader, ``jtorch.tensor(t)``) are converted to jtorch tensors, not refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch.utils.data import DataLoader, Dataset, default_collate, default_convert


class _TorchSamples(Dataset):
    """What torchvision's datasets return under ``transforms.ToTensor()``."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.full((1, 2, 2), float(i)), i


def test_a_dataloader_batches_torch_tensors_as_jtorch_tensors():
    x, y = next(iter(DataLoader(_TorchSamples(), batch_size=4)))
    assert isinstance(x, jtorch.Tensor) and isinstance(y, jtorch.Tensor)
    assert x.shape == (4, 1, 2, 2) and x.dtype == jtorch.float32
    np.testing.assert_array_equal(x.numpy()[:, 0, 0, 0], [0, 1, 2, 3])
    out = jtorch.nn.Linear(2, 3)(x)  # and they run through jtorch modules
    assert out.shape == (4, 1, 2, 3)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.bool, torch.complex64])
def test_tensor_and_as_tensor_take_torch_tensors(dtype):
    t = (torch.arange(6).reshape(2, 3) % 2).to(dtype)
    for f in (jtorch.tensor, jtorch.as_tensor):
        j = f(t)
        assert j.dtype == getattr(jtorch, str(dtype).split(".")[1])
        np.testing.assert_array_equal(j.numpy(), t.numpy())
    view = torch.arange(6.0).reshape(2, 3).t()  # non-contiguous, grad-requiring, conjugated
    np.testing.assert_array_equal(jtorch.tensor(view.requires_grad_()).numpy(),
                                  view.detach().numpy())
    np.testing.assert_array_equal(jtorch.tensor(torch.tensor([1j]).conj()).numpy(), [-1j])
    assert isinstance(default_convert(torch.ones(2)), jtorch.Tensor)
    assert default_collate([torch.ones(2), torch.zeros(2)]).shape == (2, 2)
