"""Convolution and pooling kernels on CUDA."""
