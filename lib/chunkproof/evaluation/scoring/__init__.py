"""Scoring: per-query metrics, spans, invariants, structure scores and paired statistics."""
