"""torch.mps: no Apple GPU."""


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Nothing to seed."""


def empty_cache() -> None:
    """Nothing cached."""


def synchronize() -> None:
    raise RuntimeError("MPS backend is not available")
