"""Queries: loaded, mined, written and checked, split into tuning and held-out sets."""
