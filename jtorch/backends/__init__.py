"""torch.backends: the flags programs read and set for each backend. jtorch's CPU kernels are
Numba's (no cuDNN, oneDNN or MPS); the flags are kept so that code setting them runs, and
``cuda.matmul.allow_tf32`` is ``set_float32_matmul_precision`` seen from the old API."""

from . import cpu, cuda, cudnn, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
