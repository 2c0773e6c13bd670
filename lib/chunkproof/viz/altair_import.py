"""altair, imported without jsonschema's optional IRI grammar, which costs every kernel more
CPU than altair itself.

jsonschema imports ``rfc3987_syntax`` when it is installed (the notebook tools install it) and
builds an Earley grammar from it: ``import altair`` took 1.6-1.8 CPU-s with it and 0.3-0.4 s
without on a 2-core machine, paid by every notebook kernel. chunkproof's charts never validate an
IRI, so unless something imported the grammar already, it is marked absent (jsonschema then
leaves the ``iri`` formats unchecked, as it does when the package is not installed).
"""

from __future__ import annotations

import sys

IRI_GRAMMAR = "rfc3987_syntax"
sys.modules.setdefault(IRI_GRAMMAR, None)  # type: ignore[arg-type]

import altair as alt  # noqa: E402

__all__ = ["alt"]
