"""jtorch's performance regression suite: ``python -m perf run | compare | report | list``.

``harness`` holds the method (blocked rotated rounds, pairwise ratios, foreign-load
accounting) and the contenders; ``benchmarks/`` registers the cases, one file per area;
``limits`` measures the machine's bandwidth and sgemm ceilings in the same run. One area
alone: ``python -m perf run --filter conv/`` (``--threads 1`` pins every pool to one thread).
"""
