"""torch-named public functions and Tensor methods, one file per op family.

Each module defines ``__all__`` (re-exported by ``jtorch``) and the functions behind its
Tensor methods; ``tensor_methods.py`` is the one table of those methods (torch name ->
function) and attaches them to ``Tensor``.
"""
