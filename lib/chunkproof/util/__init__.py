"""Helpers every stage may use: atomic file writes and figures as plain values."""
