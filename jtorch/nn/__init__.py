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
from .parameter import Buffer, Parameter, UninitializedParameter  # noqa: F401
