"""Counter-based random numbers on CUDA (Philox4x32-10)."""
