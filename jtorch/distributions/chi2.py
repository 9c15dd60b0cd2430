"""The chi-squared distribution: Gamma(df / 2, 1 / 2)."""

from __future__ import annotations

from typing import ClassVar

from jtorch.tensor import Tensor

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom.

    >>> Chi2(jtorch.tensor(3.0)).mean
    tensor(3.)
    """

    arg_constraints: ClassVar[dict] = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
