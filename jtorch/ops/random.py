"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, the
``*_like`` variants and the in-place ``Tensor.uniform_``/``normal_``/``random_``/... methods.

Every sample comes from the Philox kernels of ``kernels/cpu/random.py`` driven by a
``jtorch.Generator`` (``jtorch/random.py``), through the OpDefs of ``kernels/defs/random.py``
(argument checks and error messages follow torch's ``DistributionTemplates.h``). The
factories are ``empty`` followed by an in-place sampler, so on meta tensors they give the
geometry and draw nothing. Numbers differ from torch's (its CPU generator is an mt19937) but
the same seed gives the same numbers in every run, process and thread count.
"""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from .. import random as _random
from ..device import to_device
from ..kernels.defs import random as R
from ..shape import as_shape
from ..tensor import Tensor
from .creation import _sizes, deliver, factory_device, factory_dtype, like
from .creation import require_grad as _require_grad

Generator = _random.Generator
default_generator = _random.default_generator
manual_seed = _random.manual_seed
seed = _random.seed
initial_seed = _random.initial_seed
get_rng_state = _random.get_rng_state
set_rng_state = _random.set_rng_state
thread_safe_generator = _random.thread_safe_generator

__all__ = [
    "Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed",
    "manual_seed", "multinomial", "normal", "rand", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "randperm", "seed", "set_rng_state", "thread_safe_generator",
]

_call = dispatch.call

# the records (their old home was this module)
uniform_op, normal_op, random_op = R.uniform_op, R.normal_op, R.random_op
bernoulli_op, exponential_op, cauchy_op = R.bernoulli_op, R.exponential_op, R.cauchy_op
log_normal_op, geometric_op = R.log_normal_op, R.geometric_op
randperm_op, multinomial_op = R.randperm_op, R.multinomial_op


def _int_arg(x, fn: str, name: str, pos: int) -> int:
    if isinstance(x, (bool, float)) or not hasattr(x, "__index__"):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(x).__name__}")
    v = x.__index__()
    if not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return v


# -- factories -------------------------------------------------------------------------------


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False, **kwargs) -> Tensor:
    """Uniform samples on [0, 1).

    >>> jtorch.manual_seed(0); jtorch.rand(2).shape
    torch.Size([2])
    """
    dev = factory_device(device, out)
    shape = _sizes(size, kwargs, "rand")
    gen = _random.resolve(generator, "rand")
    d = factory_dtype(dtype, out)
    return deliver(_call(R.rand_op, size=shape, dtype=d, device=dev, generator=gen), out,
                   requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False, pin_memory: bool = False, **kwargs) -> Tensor:
    """Standard normal samples (complex dtypes: variance 1/2 per part)."""
    dev = factory_device(device, out)
    shape = _sizes(size, kwargs, "randn")
    gen = _random.resolve(generator, "randn")
    d = factory_dtype(dtype, out)
    return deliver(_call(R.randn_op, size=shape, dtype=d, device=dev, generator=gen), out,
                   requires_grad)


def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> jtorch.randint(3, 5, (4,)).dtype
    torch.int64
    """
    dev = factory_device(device, out)
    pos = list(args)
    if size is None:
        if not pos:
            raise TypeError("randint() missing required argument 'size' (pos 2)")
        size = pos.pop()
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple "
                            f"of ints, not {type(size).__name__}")
    if len(pos) == 2:
        low, high = pos
    elif len(pos) == 1:
        if high is None:
            high = pos[0]
        else:
            low = pos[0]
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    low = 0 if low is None else _int_arg(low, "randint", "low", 1)
    high = _int_arg(high, "randint", "high", 2 if len(pos) == 2 else 1)
    shape = as_shape(tuple(size))
    gen = _random.resolve(generator, "randint")
    d = factory_dtype(dtype, out, _dt.int64)
    res = _call(R.randint_op, size=shape, low=low, high=high, dtype=d, device=dev,
                generator=gen)
    return deliver(res, out, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A uniformly random permutation of ``0 .. n-1`` (Fisher-Yates).

    >>> sorted(jtorch.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    dev = factory_device(device, out)
    n = _int_arg(n, "randperm", "n", 1)
    d = factory_dtype(dtype, out, _dt.int64)
    res = _call(R.randperm_op, n=n, dtype=d, device=dev, generator=generator)
    return deliver(res, out, requires_grad)


def _tensor_like(input, fn: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def rand_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    to_device(device)
    _tensor_like(input, "rand_like")
    gen = _random.resolve(generator, "rand_like")
    t = like(input, dtype, memory_format, device=device)
    R.check_uniform_dtype(t.dtype)
    return _require_grad(_call(R.uniform_op, t, frm=0.0, to=1.0, generator=gen), requires_grad)


def randn_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    to_device(device)
    _tensor_like(input, "randn_like")
    gen = _random.resolve(generator, "randn_like")
    t = like(input, dtype, memory_format, device=device)
    R.check_normal_dtype(t.dtype)
    return _require_grad(_call(R.normal_op, t, generator=gen), requires_grad)


def randint_like(input: Tensor, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Integers on [low, high) shaped like ``input`` (``randint_like(x, high)`` too)."""
    to_device(device)
    _tensor_like(input, "randint_like")
    if high is None:
        low, high = 0, low
    low = _int_arg(low, "randint_like", "low", 2)
    high = _int_arg(high, "randint_like", "high", 3)
    gen = _random.resolve(generator, "randint_like")
    t = like(input, dtype, memory_format, device=device)
    return _require_grad(_call(R.random_op, t, frm=low, to=high, generator=gen), requires_grad)


# -- normal ----------------------------------------------------------------------------------

def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples: ``normal(mean_tensor, std_tensor)`` (broadcast), ``normal(mean_tensor,
    std=1.0)``, ``normal(mean, std_tensor)`` or ``normal(mean, std, size)``. As in torch, the
    gradients with respect to tensor means and stds are zero.

    >>> jtorch.normal(0.0, 1.0, (3,)).shape
    torch.Size([3])
    """
    gen = _random.resolve(generator, "normal")
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None or not (mt or st):
        if mt or st or size is None:
            got = ", ".join(type(x).__name__ for x in (mean, std) + ((size,) if size else ()))
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({got}), but expected one of: (Tensor mean, Tensor std), (Tensor "
                            f"mean, float std), (float mean, Tensor std), (float mean, float "
                            f"std, tuple of ints size)")
        dev = factory_device(device, out)
        mean, std = float(mean), float(std)
        d = factory_dtype(dtype, out)
        res = _call(R.randn_op, size=as_shape(tuple(size)), dtype=d, device=dev, mean=mean,
                    std=std, generator=gen)
        return deliver(res, out, requires_grad)
    res = _call(R.normal_tensor_op, mean if mt else None, std if st else None,
                mean=0.0 if mt else float(mean), std=1.0 if st else float(std), generator=gen)
    if out is not None and out._a.shape != res._a.shape and out._a.size:
        dispatch.resize_out(out, res._a.shape)  # torch warns here (resize_output)
    return deliver(res, out)


# -- bernoulli / multinomial -----------------------------------------------------------------

def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """Draw 0/1 with probabilities ``input`` (or the float ``p``), in ``input``'s dtype.

    >>> jtorch.bernoulli(jtorch.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    _tensor_like(input, "bernoulli")
    return deliver(_call(R.bernoulli_tensor_op, input, p=p, generator=generator), out)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None,
                out=None) -> Tensor:
    """Sample category indices from the rows of ``input`` (weights, need not sum to one);
    without replacement each draw is proportional to the weights not yet drawn.

    >>> jtorch.multinomial(jtorch.tensor([0., 1., 0.]), 1).tolist()
    [1]
    """
    _tensor_like(input, "multinomial")
    k = _int_arg(num_samples, "multinomial", "num_samples", 2)
    res = _call(R.multinomial_op, input, num_samples=k, replacement=replacement,
                generator=generator)
    return deliver(res, out)


# -- in-place Tensor methods -----------------------------------------------------------------

def uniform_(self, a: float = 0.0, to: float = 1.0, *, generator=None, **kwargs) -> Tensor:
    """Fill with samples uniform on [from, to) (``from`` is accepted as a keyword too)."""
    return _call(R.uniform_op, self, frm=float(kwargs.pop("from", a)), to=float(to),
                 generator=generator)


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    return _call(R.normal_op, self, mean=float(mean), std=float(std), generator=generator)


def random_(self, *args, generator=None, **kwargs) -> Tensor:
    """``random_()``: the dtype's whole range; ``random_(to)``: [0, to);
    ``random_(from, to)``: [from, to) (``to=None``: up to the dtype's maximum)."""
    if len(args) > 2:
        raise TypeError(f"random_() takes from 0 to 2 positional arguments but {len(args)} "
                        f"were given")
    if len(args) == 1 and "to" not in kwargs:
        frm, to = kwargs.pop("from", 0), args[0]
    else:
        args = args + (None,) * (2 - len(args))
        frm = kwargs.pop("from", args[0])
        to = kwargs.pop("to", args[1])
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    frm = None if frm is None else _int_arg(frm, "random_", "from", 1)
    to = None if to is None else _int_arg(to, "random_", "to", 2)
    return _call(R.random_op, self, frm=frm, to=to, generator=generator)


def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 draws of probability ``p`` (a float or a tensor broadcast to self)."""
    if isinstance(p, Tensor):
        return _call(R.bernoulli_op, self, p, generator=generator)
    return _call(R.bernoulli_op, self, p=p, generator=generator)


def _bernoulli_method(self, p=None, *, generator=None) -> Tensor:
    return bernoulli(self, p, generator=generator)


def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    return _call(R.exponential_op, self, lambd=float(lambd), generator=generator)


def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    return _call(R.cauchy_op, self, median=float(median), sigma=float(sigma),
                 generator=generator)


def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    return _call(R.log_normal_op, self, mean=float(mean), std=float(std), generator=generator)


def geometric_(self, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    return _call(R.geometric_op, self, p=float(p), generator=generator)
