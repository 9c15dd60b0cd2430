"""torch.xpu: no Intel GPU."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Nothing to seed."""


def manual_seed_all(seed: int) -> None:
    """Nothing to seed."""


def empty_cache() -> None:
    """Nothing cached."""
