"""``jtorch.compiler``: torch.compiler's functions over ``jtorch/compile``."""

from ..compile import Unsupported, config, disable, explain, is_compiling, reset  # noqa: F401
from ..compile.backends import list_backends  # noqa: F401
from ..compile.errors import RecompileLimitExceeded  # noqa: F401
from ..compile.logs import set_logs  # noqa: F401


def is_dynamo_compiling() -> bool:
    return is_compiling()
