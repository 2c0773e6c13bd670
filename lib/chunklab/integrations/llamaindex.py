"""A LlamaIndex ``NodeParser`` that splits with a chunklab config, spans and breadcrumbs kept.

    from chunklab.integrations.llamaindex import ChunklabNodeParser
    parser = ChunklabNodeParser.from_config("results/run/chosen_config.yaml")
    nodes = parser.get_nodes_from_documents(documents)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import field_validator

from ..chunking.build import chunk_text
from ..chunking.config import ChunkerConfig
from ..errors import MissingExtraError
from .common import ConfigLike, Content, as_config, chunk_metadata, content_of

try:
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.schema import BaseNode, NodeRelationship, TextNode
except ImportError:  # pragma: no cover - the module is unusable without LlamaIndex
    raise MissingExtraError("chunklab.integrations.llamaindex", "llamaindex",
                            "llama-index-core") from None


class ChunklabNodeParser(NodeParser):
    """One TextNode per chunklab chunk of each input node (its ``content``: embed text by
    default), with ``start_char_idx`` / ``end_char_idx`` the chunk's span and the chunk's
    metadata (breadcrumb, lines, embed and context texts) beside the input's own; each node's
    source is the input node. ``config`` is anything ``as_config`` takes (a ChunkerConfig, the
    path of a chosen_config.yaml, a mapping).

    What a store embeds is the node's text alone, exactly what chunklab scored: every metadata
    key is kept out of the embedding (a reader such as ``SimpleDirectoryReader`` adds file
    path, name, type, size and dates, which would otherwise be embedded with it). What the
    input kept from the LLM stays kept from it, and so does chunklab's own metadata."""

    config: ChunkerConfig
    content: Content = "embed_text"

    @field_validator("config", mode="before")
    @classmethod
    def _any_config(cls, value: Any) -> ChunkerConfig:
        return as_config(value)

    @classmethod
    def from_config(cls, config: ConfigLike = None, *, content: Content = "embed_text",
                    **options: Any) -> ChunklabNodeParser:
        return cls(config=as_config(config, **options), content=content)

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False,
                     **kwargs: Any) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        for index, node in enumerate(nodes):
            doc_id = str(node.metadata.get("source") or node.metadata.get("file_path")
                         or f"node-{index}.md")
            for chunk in chunk_text(node.get_content(), self.config, doc_id=doc_id):
                extra = chunk_metadata(chunk)
                metadata = {**node.metadata, **extra}
                parsed.append(TextNode(
                    text=content_of(chunk, self.content), start_char_idx=chunk.start,
                    end_char_idx=chunk.end, metadata=metadata,
                    excluded_embed_metadata_keys=list(metadata),
                    excluded_llm_metadata_keys=list(dict.fromkeys(
                        [*node.excluded_llm_metadata_keys, *extra])),
                    relationships={NodeRelationship.SOURCE: node.as_related_node_info()},
                ))
        return parsed
