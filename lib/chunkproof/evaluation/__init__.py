"""Stage 3, evaluation: queries, retrieval, metrics, invariants, statistics, the sweep, its run
folder and the choice of a config. Nothing here is imported until it is used."""
