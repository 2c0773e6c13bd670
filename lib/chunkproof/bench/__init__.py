"""Benchmarks: throughput (``python -m chunkproof.bench``), scale and the sweep's costs."""
