"""A LlamaIndex ``NodeParser`` that splits with a chunkproof config, spans and breadcrumbs kept,
and a node postprocessor that applies the chosen retrieval mode.

    from chunkproof.integrations.llamaindex import ChunkproofModePostprocessor, ChunkproofNodeParser
    parser = ChunkproofNodeParser.from_config("results/run/chosen_config.yaml")
    nodes = parser.get_nodes_from_documents(documents)
    mode = ChunkproofModePostprocessor(chunks=parser.chunks_of(documents), budget=1024,
                                     mode="results/run/chosen_config.yaml")
    engine = index.as_query_engine(node_postprocessors=[mode])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict, PrivateAttr, field_validator

from ..chunking.build import chunk_text
from ..chunking.config import ChunkerConfig
from ..chunking.records import Chunk
from ..errors import MissingExtraError
from ..evaluation.retrieval.modes import ModeReader
from .common import (
    ConfigLike,
    Content,
    as_config,
    chunk_metadata,
    content_of,
    held_chunk,
    mode_reader,
)

try:
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import (
        BaseNode,
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        TextNode,
    )
except ImportError:  # pragma: no cover - the module is unusable without LlamaIndex
    raise MissingExtraError("chunkproof.integrations.llamaindex", "llamaindex",
                            "llama-index-core") from None


class ChunkproofNodeParser(NodeParser):
    """One TextNode per chunkproof chunk of each input node (its ``content``: embed text by
    default), with ``start_char_idx`` / ``end_char_idx`` the chunk's span and the chunk's
    metadata (breadcrumb, lines, embed and context texts) beside the input's own; each node's
    source is the input node. ``config`` is anything ``as_config`` takes (a ChunkerConfig, the
    path of a chosen_config.yaml, a mapping).

    What a store embeds is the node's text alone, exactly what chunkproof scored: every metadata
    key is kept out of the embedding (a reader such as ``SimpleDirectoryReader`` adds file
    path, name, type, size and dates, which would otherwise be embedded with it). What the
    input kept from the LLM stays kept from it, and so does chunkproof's own metadata."""

    config: ChunkerConfig
    content: Content = "embed_text"

    @field_validator("config", mode="before")
    @classmethod
    def _any_config(cls, value: Any) -> ChunkerConfig:
        return as_config(value)

    @classmethod
    def from_config(cls, config: ConfigLike = None, *, content: Content = "embed_text",
                    **options: Any) -> ChunkproofNodeParser:
        return cls(config=as_config(config, **options), content=content)

    def chunks_of(self, nodes: Sequence[BaseNode]) -> list[Chunk]:
        """The chunkproof chunks of ``nodes``: those the parser makes nodes of."""
        return [chunk for _, chunk in self._chunks(nodes)]

    def _chunks(self, nodes: Sequence[BaseNode]) -> list[tuple[BaseNode, Chunk]]:
        found = []
        for index, node in enumerate(nodes):
            doc_id = str(node.metadata.get("source") or node.metadata.get("file_path")
                         or f"node-{index}.md")
            found += [(node, chunk) for chunk in chunk_text(node.get_content(), self.config,
                                                            doc_id=doc_id)]
        return found

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False,
                     **kwargs: Any) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        for node, chunk in self._chunks(nodes):
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


class ChunkproofModePostprocessor(BaseNodePostprocessor):
    """A node postprocessor that applies a chunkproof retrieval mode to the retrieved nodes:
    ``boost`` re-ranks them by heading-path match (their scores raised as the sweep scored it),
    ``expand=parent`` / ``expand=siblings`` hand over each hit's section and parent section, or its
    neighbouring parts; with ``budget``, what is handed over is cut to that many tokens. ``chunks``
    are the chunkproof chunks the index holds (``ChunkproofNodeParser.chunks_of``); a node's
    ``metadata["chunk_id"]`` names its chunk. ``mode`` is a mode name or a chosen_config.yaml (its
    ``retrieval_mode``). A retrieved node keeps its score (a missing one counts as 1/rank); a node
    handed over that was not retrieved carries the score of the node before it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chunks: list[Chunk]
    mode: str = "plain"
    budget: int | None = None
    content: Content = "embed_text"
    _reader: ModeReader = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._reader = mode_reader(self.chunks, self.mode, self.budget)
        self.mode = self._reader.mode

    @classmethod
    def class_name(cls) -> str:
        return "ChunkproofModePostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        query = query_bundle.query_str if query_bundle is not None else ""
        hits = [(held_chunk(self._reader, n.node.metadata.get("chunk_id")),
                 float(n.score if n.score is not None else 1.0 / rank))
                for rank, n in enumerate(nodes, start=1)]
        found = {chunk_id: n for (chunk_id, _), n in zip(hits, nodes, strict=True)}
        score = dict(hits)
        handed, last = [], 0.0
        for chunk in self._reader.hand_over(query, hits):
            last = score.get(chunk.id, last)
            node = found.get(chunk.id)
            metadata = {**(node.node.metadata if node else {}), **chunk_metadata(chunk)}
            handed.append(NodeWithScore(node=TextNode(
                id_=node.node.node_id if node else chunk.id,
                text=content_of(chunk, self.content), start_char_idx=chunk.start,
                end_char_idx=chunk.end, metadata=metadata,
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata)), score=last))
        return handed
