"""torch.nn.utils: gradient clipping, parameter/vector conversion and packed sequences (``rnn``).

>>> import jtorch
>>> lin = jtorch.nn.Linear(3, 1)
>>> jtorch.nn.utils.parameters_to_vector(lin.parameters()).shape
torch.Size([4])
"""

from . import clip_grad, convert_parameters, rnn  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
