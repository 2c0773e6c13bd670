"""A LangChain ``TextSplitter`` that splits with a chunklab config, spans and breadcrumbs kept.

    from chunklab.integrations.langchain import ChunklabTextSplitter
    splitter = ChunklabTextSplitter("results/run/chosen_config.yaml")
    pieces = splitter.split_documents(docs)   # metadata: source, start, end, breadcrumb, ...
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..chunking.build import chunk_text
from ..chunking.records import Chunk
from ..chunking.sizes import length_function
from ..errors import MissingExtraError
from .common import ConfigLike, Content, as_config, chunk_metadata, content_of

try:
    from langchain_core.documents import Document as LangChainDocument
    from langchain_text_splitters import TextSplitter
except ImportError:  # pragma: no cover - the module is unusable without LangChain
    raise MissingExtraError("chunklab.integrations.langchain", "langchain",
                            "langchain-text-splitters") from None

DEFAULT_ID = "text.md"
"""The document id a bare string is chunked under (``.md``: read as Markdown)."""


class ChunklabTextSplitter(TextSplitter):
    """``split_text`` gives chunklab's chunks (``content``: their embed text by default, the
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
        """The chunklab chunks of ``text`` read as document ``doc_id``."""
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
