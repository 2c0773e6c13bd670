"""A LangChain ``TextSplitter`` that splits with a chunkproof config, spans and breadcrumbs kept,
and a retriever wrapper that applies the chosen retrieval mode.

    from chunkproof.integrations.langchain import ChunkproofModeRetriever, ChunkproofTextSplitter
    splitter = ChunkproofTextSplitter("results/run/chosen_config.yaml")
    pieces = splitter.split_documents(docs)   # metadata: source, start, end, breadcrumb, ...
    retriever = ChunkproofModeRetriever(retriever=store.as_retriever(), chunks=chunks,
                                      mode="results/run/chosen_config.yaml", budget=1024)
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..chunking.build import chunk_text
from ..chunking.records import Chunk
from ..chunking.sizes import length_function
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
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LangChainDocument
    from langchain_core.retrievers import BaseRetriever
    from langchain_text_splitters import TextSplitter
except ImportError:  # pragma: no cover - the module is unusable without LangChain
    raise MissingExtraError("chunkproof.integrations.langchain", "langchain",
                            "langchain-text-splitters") from None

DEFAULT_ID = "text.md"
"""The document id a bare string is chunked under (``.md``: read as Markdown)."""


class ChunkproofTextSplitter(TextSplitter):
    """``split_text`` gives chunkproof's chunks (``content``: their embed text by default, the
    breadcrumb prefix included where the strategy adds one); ``split_documents`` and
    ``create_documents`` give LangChain Documents whose metadata carries the span, lines,
    breadcrumb, embed and context texts of each chunk (``metadata["source"]`` names the
    document: the input's own ``source`` metadata when it has one)."""

    def __init__(self, config: ConfigLike = None, *, content: Content = "embed_text",
                 **options: Any):
        self.config = as_config(config, **options)
        self.content = content
        super().__init__(chunk_size=self.config.size, chunk_overlap=self.config.overlap,
                         length_function=length_function(self.config.unit),
                         strip_whitespace=False)

    def chunks(self, text: str, doc_id: str = DEFAULT_ID) -> list[Chunk]:
        """The chunkproof chunks of ``text`` read as document ``doc_id``."""
        return chunk_text(text, self.config, doc_id=doc_id)

    def split_text(self, text: str) -> list[str]:
        return [content_of(chunk, self.content) for chunk in self.chunks(text)]

    def create_documents(self, texts: list[str],
                         metadatas: list[dict[Any, Any]] | None = None) -> list[Any]:
        metadatas = metadatas or [{}] * len(texts)
        documents = []
        for index, (text, metadata) in enumerate(zip(texts, metadatas, strict=True)):
            doc_id = str(metadata.get("source") or f"text-{index}.md")
            for chunk in self.chunks(text, doc_id):
                extra = {**copy.deepcopy(metadata), **chunk_metadata(chunk)}
                documents.append(LangChainDocument(page_content=content_of(chunk, self.content),
                                                   metadata=extra))
        return documents

    def split_documents(self, documents: Iterable[Any]) -> list[Any]:
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents],
                                     [dict(d.metadata) for d in documents])


class ChunkproofModeRetriever(BaseRetriever):
    """A retriever that applies a chunkproof retrieval mode to another retriever's results:
    ``boost`` re-ranks by heading-path match, ``expand=parent`` / ``expand=siblings`` hand over each
    hit's section and parent section, or its neighbouring parts; with ``budget``, what is handed
    over is cut to that many tokens as the sweep scored it. ``chunks`` are the chunkproof chunks the
    wrapped retriever's index holds (each of its documents carries their ``chunk_id``); a document's
    ``metadata["score"]`` is its score when present, else 1/rank. ``mode`` is a mode name or a
    chosen_config.yaml (its ``retrieval_mode``)."""

    retriever: BaseRetriever
    chunks: list[Chunk]
    mode: str = "plain"
    budget: int | None = None
    content: Content = "embed_text"
    reader: ModeReader | None = None

    model_config = {"arbitrary_types_allowed": True}

    def model_post_init(self, context: Any) -> None:
        self.reader = mode_reader(self.chunks, self.mode, self.budget)
        self.mode = self.reader.mode

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Any]:
        assert self.reader is not None
        found = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        hits = [(held_chunk(self.reader, d.metadata.get("chunk_id")),
                 float(d.metadata.get("score", 1.0 / rank)))
                for rank, d in enumerate(found, start=1)]
        extra = {d.metadata["chunk_id"]: d.metadata for d in found}
        return [LangChainDocument(page_content=content_of(c, self.content),
                                  metadata={**extra.get(c.id, {}), **chunk_metadata(c)})
                for c in self.reader.hand_over(query, hits)]
