"""Stage 5, the notebooks' own code: one module per notebook (its parameters validated into a
Setup record, its tables and its export) and the report that runs all six."""
