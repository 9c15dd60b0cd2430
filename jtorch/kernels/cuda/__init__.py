"""CUDA kernels generated from the OpDefs: pointwise ops (``pointwise``) and reductions
(``reduce``), staged as grid-stride kernels around the same SSA lines the CPU loops inline.
Every CUDA import goes through ``target``."""
