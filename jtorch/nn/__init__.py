"""jtorch.nn: neural-network building blocks (``functional`` holds the stateless ops)."""

from . import functional

__all__ = ["functional"]
