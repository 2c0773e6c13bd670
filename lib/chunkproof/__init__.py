"""chunkproof: compare ways of splitting Markdown for retrieval, with exact provenance.

The public API is declared once, in ``__init__.pyi``: lazy_loader reads it, so ``import
chunkproof`` imports nothing heavy and each name is imported from its stage the first time
it is used. docs/api.md lists every name with its signature and docstring.
"""

import lazy_loader

__version__ = "0.2.0"

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
