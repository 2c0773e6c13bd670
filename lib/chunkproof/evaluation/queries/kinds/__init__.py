"""The mined kinds, each a module choosing queries from a document's reading (``reading``):
``<kind>_queries(reading, site)`` yields what it found, in the document's order. ``headings`` and
``body`` share gold by text across documents (one query per heading text or symbol, every page
defining it a source); the free kinds carry an answer span each and are mined after them (the
identifier kind looks up the symbols the headings kind found)."""

FREE_KINDS = ("keyword", "partial", "xref", "identifier")
