"""jtorch: PyTorch's API over Numba-compiled kernels.

>>> import jtorch as torch
>>> torch.tensor([1.0, 2.0]) * 2
tensor([2., 4.])
"""

from __future__ import annotations

import numba as _numba  # (first: its long-lived objects are frozen with Python's below)

from . import _gc

_gc.freeze_import()  # (jtorch's import walks fewer objects in its collections)
_gc.pause_in_compiles()

from . import dtypes as _dtypes_mod
from ._tensor_str import get_printoptions, set_printoptions
from ._threads import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from ._settings import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,  # noqa: F401
                        get_float32_matmul_precision,
                        is_deterministic_algorithms_warn_only_enabled, is_warn_always_enabled,
                        set_deterministic_debug_mode, set_float32_matmul_precision,
                        set_warn_always, use_deterministic_algorithms)
from .device import device, get_device_module  # noqa: F401
from ._streams import Event, Stream  # noqa: F401
from .dtypes import (bfloat16, bool, can_cast, cdouble, cfloat, chalf, channels_last, channels_last_3d,
                     complex64, complex128, contiguous_format, double, dtype, finfo, float, float16,
                     float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64,
                     layout, long, memory_format, preserve_format, promote_types, result_type, short,
                     set_default_dtype, sparse_coo, strided, uint8)
from .shape import Size, broadcast_shapes
from ._tensor_types import *  # noqa: F401,F403  (FloatTensor, LongTensor, ...)
from .tensor import Tensor
from .kernels import defs as _defs  # noqa: F401  (fills the registry)
from .ops import conversion as _conversion
from .ops import creation as _creation
from .ops import pointwise as _pointwise
from .ops.conversion import *  # noqa: F401,F403
from .ops.creation import *  # noqa: F401,F403
from .ops.pointwise import *  # noqa: F401,F403
from .ops.views import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from .ops.random_dists import *  # noqa: F401,F403
from .ops.random_dists import (_dirichlet_grad, _sample_dirichlet, _standard_gamma,  # noqa: F401
                               _standard_gamma_grad)
from .ops.reduction import *  # noqa: F401,F403
from .ops.sort import *  # noqa: F401,F403
from .ops.softmax import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.linalg import tensordot  # noqa: F401
from .ops.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                       conv_transpose3d)
from .ops.distance import cdist, cosine_similarity, pairwise_distance  # noqa: F401
from .ops.pooling import TOP_LEVEL as _pool_top; globals().update(_pool_top)  # noqa: E702
from .ops.extras import *  # noqa: F401,F403
from .ops.numeric import *  # noqa: F401,F403
from .ops.control_flow import *  # noqa: F401,F403
from .ops.misc_numeric import *  # noqa: F401,F403
from .ops.special import *  # noqa: F401,F403
from .ops.segment import segment_reduce  # noqa: F401
from .ops.lobpcg import lobpcg  # noqa: F401
from .ops.linalg_decomp import TOP_LEVEL as _linalg_top; globals().update(_linalg_top)  # noqa: E702
from .ops.aten import *  # noqa: F401,F403
from .sparse import dsmm, hspmm, smm, sparse_coo_tensor, spmm, sspaddmm  # noqa: F401
saddmm = sspaddmm  # (torch's undocumented alias)
from . import linalg  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from .fft._stft import istft, stft  # noqa: E402,F401
from . import autograd  # noqa: E402
from .ops import tensor_methods as _tensor_methods  # noqa: F401  (attaches Tensor's op methods)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from .autograd.anomaly_mode import set_detect_anomaly as set_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from . import nn  # noqa: E402,F401
from .compile import api as _compile_api  # noqa: E402
from ._sym import (SymBool, SymFloat, _assert, compiled_with_cxx11_abi, sym_float,  # noqa: E402,F401
                   sym_int, sym_ite, sym_max, sym_min, sym_not)
from .compile.symbolic import SymInt  # noqa: E402,F401

# ``jtorch.compile`` is the decorator; the package ``jtorch/compile`` stays importable by path
compile = _compile_api.compile

__version__ = "0.1.0"

_ = (_dtypes_mod, _conversion, _creation, _pointwise, _numba)


def is_floating_point(input: Tensor) -> builtins_bool:  # noqa: F821
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> builtins_bool:  # noqa: F821
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> builtins_bool:  # noqa: F821
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins_bool(input.item())  # noqa: F821


import builtins as _builtins  # noqa: E402
import importlib as _importlib  # noqa: E402

builtins_bool = _builtins.bool

# Loaded at first use (PEP 562), so that ``import jtorch`` does not pay for what a script may
# never touch: ``jtorch.optim.Adam``, ``jtorch.utils.data``, ``jtorch.save`` and
# ``from jtorch.utils.data import DataLoader`` work as before, and ``dir(jtorch)`` lists them.
# tests/test_import_time.py checks that ``import jtorch`` leaves them unimported.
_LAZY_SUBMODULES = frozenset({"_dynamo", "accelerator", "amp", "backends", "compiler", "cpu", "cuda",
                              "distributions", "func", "fx", "mps", "onnx", "optim",
                              "serialization", "signal", "testing", "utils", "version", "xpu"})
_LAZY_NAMES = {"load": "serialization", "save": "serialization", "vmap": "func",
               "autocast": "amp"}


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")  # also binds it here
    if name in _LAZY_NAMES:
        value = getattr(_importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_NAMES))


_gc.freeze_import()  # everything import made: later collections do not walk it (jtorch/_gc.py)
