"""Adapters that put a chunkproof config into another framework's ingest: a LangChain
TextSplitter and a LlamaIndex NodeParser, each producing exactly chunkproof's chunks."""
