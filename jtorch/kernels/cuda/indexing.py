"""Indexing, scatter/gather and the losses that index (nll_loss) on CUDA."""
