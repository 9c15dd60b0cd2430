"""Reductions with indices, statistics, scans, sorts and layer norm on CUDA."""
