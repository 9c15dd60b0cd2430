"""jtorch's performance regression suite: ``python -m perf run | compare | report | list``.

``harness`` holds the method (blocked rotated rounds, pairwise ratios, foreign-load
accounting) and the contenders; ``benchmarks/`` registers the cases, one file per area;
``limits`` measures the machine's bandwidth and sgemm ceilings in the same run. The older
``bench_*.py`` scripts still run standalone for a quick look at one area.
"""
