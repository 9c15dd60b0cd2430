"""torch.backends.mkldnn: jtorch's kernels do not use oneDNN."""

enabled = True


def is_available() -> bool:
    return False
