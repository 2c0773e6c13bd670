"""``python -m chunklab.bench``: the throughput benchmark (``throughput.main``)."""

from .throughput import main

raise SystemExit(main())
