"""CPU loop templates (Numba) that the registry's OpDefs are compiled into."""
