"""The run: parameters, the sweep, its units of work and engines, result tables and folder."""
