"""torch.backends.cuda: whether this build has CUDA, and the matmul precision flags."""

from .. import _settings


def is_built() -> bool:
    """Whether jtorch was built with CUDA support (its CUDA kernels are not available yet)."""
    return False


class _Matmul:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` is the float32 matmul precision read
    and set through the old flag (True: "high", False: "highest")."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _settings.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()
