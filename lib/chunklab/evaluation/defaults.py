"""The default grid, in one place: what a sweep, ``chunklab sweep``, ``chunklab report``,
``make run`` and notebook 03 run when not told otherwise (a test keeps the Makefile and the
notebook's literals equal to these)."""

DEFAULT_STRATEGIES = ("rct", "mhs_rct", "ast_merge", "ast_breadcrumb")
DEFAULT_SIZES = (300, 600, 1200)
DEFAULT_RETRIEVERS = ("bm25",)
DEFAULT_K = 5
DEFAULT_CORPUS = "data/sample"
