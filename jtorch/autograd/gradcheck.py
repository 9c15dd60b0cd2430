"""Numerical gradient checks (filled in below)."""

__all__ = ["gradcheck", "gradgradcheck"]


def gradcheck(*args, **kwargs):
    raise NotImplementedError


def gradgradcheck(*args, **kwargs):
    raise NotImplementedError
