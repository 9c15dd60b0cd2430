"""torch.backends.openmp."""


def is_available() -> bool:
    """Whether the CPU kernels can run on an OpenMP thread pool (Numba's ``omp`` layer)."""
    import importlib.util

    return importlib.util.find_spec("numba.np.ufunc.omppool") is not None
