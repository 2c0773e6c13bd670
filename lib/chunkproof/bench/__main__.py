"""``python -m chunkproof.bench``: the throughput benchmark (``throughput.main``)."""

from .throughput import main

raise SystemExit(main())
