"""Retrieval: BM25, dense and hybrid rankings, and the token-budget bundles."""
