"""The base class of every distribution (torch.distributions.Distribution): shapes, argument
and sample validation with torch's messages, ``expand``'s common body, ``sample`` as
``rsample`` without grad."""

from __future__ import annotations

import warnings

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_SCALAR = Size()  # the shape of a single draw


class Distribution:
    """A parameterised probability distribution: ``batch_shape`` (independent, not identical
    distributions) and ``event_shape`` (the shape of one sample).

    >>> from jtorch.distributions import Normal
    >>> Normal(jtorch.zeros(3), 1.0).sample((2,)).shape
    torch.Size([2, 3])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made later (on by
        default, off under ``python -O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=_SCALAR, event_shape=_SCALAR,
                 validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_args()
        super().__init__()

    def _check_args(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          f"`arg_constraints = {{}}` or initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                         lazy_property):
                continue  # a lazily derived parameter
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the batch dims expanded to ``batch_shape`` (the parameters
        are expanded views; arguments are not checked again)."""
        raise NotImplementedError

    def _expand_params(self, cls, batch_shape, _instance, names=(), event_shape=None):
        """expand()'s common body: a new ``cls`` whose parameters ``names`` (those set on
        self) are expanded to ``batch_shape`` followed by their own trailing dims."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        nb = len(self._batch_shape)
        for name in names:
            v = self.__dict__.get(name)
            if v is not None:
                setattr(new, name, v.expand(batch_shape + v.shape[nb:]))
        if "_param" in self.__dict__:  # probs or logits, whichever the others derive from
            new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        event = self._event_shape if event_shape is None else event_shape
        Distribution.__init__(new, batch_shape, event, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Each tensor parameter's constraint, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint that values of the distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with jtorch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution along dim 0, in lock-step over the batch
        (shape ``(cardinality,) + batch_shape + event_shape``; singleton batch dims
        without ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return jtorch.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """torch's checks of a value scored by log_prob/cdf/icdf: a tensor whose rightmost
        dims are the event shape, broadcastable with the batch shape, in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")  # noqa: TRY004
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          f"validation. Please initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return self.__class__.__name__ + "(" + args + ")"
