"""torch.utils.deterministic: while ``use_deterministic_algorithms(True)`` is on and this is
set (the default), ``empty`` and its kin fill their memory with NaN (the largest integer for
integer dtypes, True for bool) instead of leaving whatever was there."""

fill_uninitialized_memory = True
