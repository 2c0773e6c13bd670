"""Benchmarks: throughput (``python -m chunklab.bench``), scale and the sweep's costs."""
