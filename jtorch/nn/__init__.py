"""jtorch.nn: neural-network building blocks. ``functional`` holds the stateless ops,
``modules`` the layers, ``init`` the initialisers.

>>> import jtorch as torch
>>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
"""

from . import functional, init  # noqa: F401
from . import parallel, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .parameter import (  # noqa: F401
    Buffer, Parameter, UninitializedBuffer, UninitializedParameter,
)


def factory_kwargs(kwargs):
    """The canonical ``device``/``dtype``/``memory_format`` keywords of ``kwargs`` for factory
    calls; an explicit ``factory_kwargs`` entry resolves a clash with a module's own argument.

    >>> jtorch.nn.factory_kwargs({"dtype": jtorch.float64})
    {'dtype': torch.float64}
    """
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
