"""torch.backends.cpu."""


def get_cpu_capability() -> str:
    """The vector instruction set the CPU kernels are compiled for ("AVX2", "AVX512",
    "DEFAULT"), as LLVM sees this machine."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return "AVX512"
    if features.get("avx2"):
        return "AVX2"
    return "DEFAULT"
