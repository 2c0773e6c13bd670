"""Adapters that put a chunklab config into another framework's ingest: a LangChain
TextSplitter and a LlamaIndex NodeParser, each producing exactly chunklab's chunks."""
