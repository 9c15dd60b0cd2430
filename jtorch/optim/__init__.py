"""``jtorch.optim``: optimizers whose per-parameter update is one compiled kernel, and
learning-rate schedulers, with torch's API and semantics."""

from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer, register_optimizer_step_post_hook, \
    register_optimizer_step_pre_hook
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler",
           "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]
