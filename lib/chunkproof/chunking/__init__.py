"""Stage 2, chunking: a Document and a ChunkerConfig in, Chunk records out.

Importing the package registers the built-in strategies, so a name given by a user (a CLI
flag, a notebook parameter) finds its strategy.
"""

from . import strategies

__all__ = ["strategies"]
