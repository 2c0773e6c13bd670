"""Splitters of your own, named by their import path ``package.module:function`` or by a name of
the ``chunkproof.strategies`` entry-point group, and measured as the peers are.

A plug-in is a function ``(text, config)``, or ``(text, config, doc)`` when it asks for the
parsed Document (a parameter named ``doc``), returning the document's chunks as texts or as
``(start, end)`` character spans. Texts are aligned back to their spans searching forward
(``baselines.aligned_pieces``, as the peers' are); spans are taken as they are. Either way the
chunks are built as everyone's are, so verbatim provenance, lost characters, cut fences and
tables and every other invariant are counted, never assumed; a plug-in supplies no heading
path. Its config records the import path, so chosen_config.yaml loads it wherever the module
can be imported."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

from ...document.corpus import Document
from ...errors import PluginError
from ..config import ChunkerConfig
from ..records import Chunk, Piece
from ..registry import RESOLVERS, Strategy
from .baselines import _build, aligned_pieces, overlap_share

FAMILY = "plugin"
GROUP = "chunkproof.strategies"
"""The entry-point group a package names its splitters in (``name = "package.module:function"``)."""
_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
HOW = ("a plug-in is named package.module:function and must be importable here (installed, "
       "or on PYTHONPATH)")


def entry_points() -> dict[str, str]:
    """Name -> import path of every splitter the ``chunkproof.strategies`` group names."""
    return {ep.name: ep.value for ep in metadata.entry_points(group=GROUP)}


def resolve(name: str) -> Strategy | None:
    """The plug-in ``name`` stands for (an import path, or an entry point's name), imported;
    None for a name that is neither; PluginError when it names one that cannot be used."""
    path = name if _IMPORT_PATH.match(name) else entry_points().get(name)
    if path is None:
        return None
    if not _IMPORT_PATH.match(path):
        raise PluginError(f"strategy {name!r}: entry point {GROUP} names {path!r}; {HOW}")
    function = _imported(path)
    summary = (inspect.getdoc(function) or "").strip().split("\n\n")[0]
    return Strategy(path, splitter(path, function),
                    " ".join(summary.split()) or f"plug-in {path}", False, FAMILY)


def _imported(path: str) -> Callable[..., Any]:
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise PluginError(f"strategy {path!r}: cannot import {module_name} ({err}); "
                          f"{HOW}") from None
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise PluginError(f"strategy {path!r}: {module_name} has no function {attribute}; "
                          f"{HOW}")
    return found


def splitter(path: str, function: Callable[..., Any]) -> Callable[[Document, ChunkerConfig],
                                                                  list[Chunk]]:
    """The strategy of plug-in ``function``: its output made chunks as the peers' are."""
    wants_doc = _asks_for_doc(function)

    def split(doc: Document, config: ChunkerConfig) -> list[Chunk]:
        try:
            found = function(doc.text, config, doc=doc) if wants_doc else \
                function(doc.text, config)
        except Exception as err:
            raise PluginError(f"strategy {path!r} failed on {doc.id}: "
                              f"{type(err).__name__}: {err}") from err
        return _build(doc, config, pieces(doc, config, found, path), path)

    return split


def _asks_for_doc(function: Callable[..., Any]) -> bool:
    try:
        return "doc" in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature: text and config only
        return False


def pieces(doc: Document, config: ChunkerConfig, found: Any, path: str) -> list[Piece]:
    """The Pieces of what plug-in ``path`` returned for ``doc``: texts aligned forward (the
    config's overlap let back in), spans checked against the text, in document order."""
    items = list(found) if isinstance(found, list | tuple) else None
    if items is None:
        raise PluginError(f"strategy {path!r} returned {type(found).__name__} for {doc.id}; "
                          f"{CONTRACT}")
    if all(isinstance(item, str) for item in items):
        return aligned_pieces(doc, items, [()] * len(items), overlap_share(config))
    spans = [_span(item, len(doc.text), doc.id, path) for item in items]
    return [Piece(start, end, breadcrumb=()) for start, end in sorted(spans)]


CONTRACT = ("a plug-in returns a list of chunk texts (str) or of (start, end) character "
            "spans of the document text")


def _span(item: Any, length: int, doc_id: str, path: str) -> tuple[int, int]:
    pair = tuple(item) if isinstance(item, list | tuple) else ()
    if len(pair) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair):
        raise PluginError(f"strategy {path!r} returned {item!r} among the chunks of {doc_id}; "
                          f"{CONTRACT}")
    start, end = pair
    if not 0 <= start <= end <= length:
        raise PluginError(f"strategy {path!r} returned the span {pair!r} for {doc_id}, whose "
                          f"text has {length} characters: a span is 0 <= start <= end <= "
                          f"{length}")
    return start, end


RESOLVERS.append(resolve)
