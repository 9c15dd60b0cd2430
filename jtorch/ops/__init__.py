"""torch-named public functions and Tensor methods, one file per op family.

Each module defines ``__all__`` (re-exported by ``jtorch``) and attaches its Tensor methods
with ``tensor_method``.
"""
