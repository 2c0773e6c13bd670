"""Standalone pages for ``chunkproof view``: one document's chunks, or two configs side by side."""

from __future__ import annotations

from pathlib import Path

from ..chunking.build import chunk_document
from ..chunking.config import load_config, make_config
from ..document.corpus import load_corpus, make_document
from ..errors import ConfigError
from .boundaries import BoundaryView, find_document
from .side_by_side import SideBySide


def view_config(strategy=None, config_path=None, size=None, unit=None):
    """A config from a strategy name (with size and unit) or from a saved YAML file."""
    if bool(strategy) == bool(config_path):
        raise ConfigError("give exactly one of a strategy or a config file")
    if config_path:
        if size is not None or unit is not None:
            raise ConfigError("a config file cannot be combined with size or unit")
        return load_config(config_path)
    values = {"strategy": strategy, "size": size, "unit": unit}
    return make_config({k: v for k, v in values.items() if v is not None})


def render_view(corpus_dir, doc_id, *, strategy=None, config_path=None, size=None, unit=None,
                vs_strategy=None, vs_config=None, out) -> Path:
    """Write the boundary view of one document (or a side-by-side of two configs) to ``out``."""
    config = view_config(strategy, config_path, size, unit)
    corpus = load_corpus(corpus_dir, infer_headings=config.infer_headings)
    doc = find_document(corpus, doc_id)
    chunks = chunk_document(doc, config)
    if vs_strategy and vs_config:
        raise ConfigError("give vs_strategy or vs_config, not both")
    if not (vs_strategy or vs_config):
        return BoundaryView(doc, chunks, config).save(out)
    other = load_config(vs_config) if vs_config else config.replace(strategy=vs_strategy)
    other_doc = doc
    if other.infer_headings != config.infer_headings:
        other_doc = make_document(doc.id, doc.text, path=doc.path,
                                  infer_headings=other.infer_headings)
    view = SideBySide(doc, chunks, config, chunk_document(other_doc, other), other)
    return view.save(out)
