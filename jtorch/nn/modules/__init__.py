"""nn modules, one file per layer family; each file's ``__all__`` is re-exported by ``nn``.
(``utils`` is not imported here: ``from .modules import *`` would put it over ``nn.utils``.)"""

from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .instancenorm import *
from .linear import *  # noqa: F401,F403
from .linear_cross_entropy import *  # noqa: F401,F403
from .linear_cross_entropy_options import *
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
