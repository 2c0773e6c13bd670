"""The LangChain splitter and the LlamaIndex node parser give exactly chunkproof's chunks."""

from __future__ import annotations

import pytest

from chunkproof import chunk_corpus, chunk_text, load_corpus, make_config, save_config
from conftest import SAMPLE

CONFIG = make_config(strategy="ast_breadcrumb", size=400, min_size=100)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(SAMPLE)


def test_chunk_text_is_chunk_document_of_one_string(corpus):
    doc = corpus.get("api/auth.md")
    chunks = chunk_text(doc.text, CONFIG, doc_id=doc.id)
    expected = [c for c in chunk_corpus(corpus, CONFIG) if c.doc_id == doc.id]
    assert [c.as_dict() for c in chunks] == [c.as_dict() for c in expected]


@pytest.mark.needs("langchain")
def test_langchain_splitter_documents_carry_chunkproof_spans_and_texts(corpus):
    import langchain_core.documents as langchain

    from chunkproof.integrations.langchain import ChunkproofTextSplitter

    splitter = ChunkproofTextSplitter(CONFIG)
    docs = [langchain.Document(page_content=d.text, metadata={"source": d.id, "team": "x"})
            for d in corpus]
    pieces = splitter.split_documents(docs)
    expected = chunk_corpus(corpus, CONFIG)
    assert [p.page_content for p in pieces] == [c.embed_text for c in expected]
    assert [(p.metadata["source"], p.metadata["start"], p.metadata["end"]) for p in pieces] == [
        (c.doc_id, c.start, c.end) for c in expected]
    assert [p.metadata["breadcrumb"] for p in pieces] == [list(c.breadcrumb) for c in expected]
    assert all(p.metadata["team"] == "x" for p in pieces)  # the input's metadata is kept


@pytest.mark.needs("langchain")
def test_langchain_split_text_and_content_choice(corpus, tmp_path):
    from chunkproof.integrations.langchain import ChunkproofTextSplitter

    doc = corpus.get("guides/getting-started.md")
    expected = chunk_text(doc.text, CONFIG)
    config_file = save_config(CONFIG, tmp_path / "chosen_config.yaml")
    plain = ChunkproofTextSplitter(config_file, content="text")  # a chosen_config.yaml works
    assert plain.split_text(doc.text) == [c.text for c in expected]
    assert ChunkproofTextSplitter(CONFIG).split_text(doc.text) == [c.embed_text for c in expected]
    with pytest.raises(ValueError, match="content must be one of"):
        ChunkproofTextSplitter(CONFIG, content="nope").split_text(doc.text)


@pytest.mark.needs("llamaindex")
def test_llamaindex_nodes_carry_chunkproof_spans_and_texts(corpus):
    import llama_index.core.schema as schema

    from chunkproof.integrations.llamaindex import ChunkproofNodeParser

    parser = ChunkproofNodeParser.from_config(CONFIG, content="text")
    documents = [schema.Document(text=d.text, metadata={"source": d.id}) for d in corpus]
    nodes = parser.get_nodes_from_documents(documents)
    expected = chunk_corpus(corpus, CONFIG)
    assert [n.get_content() for n in nodes] == [c.text for c in expected]
    assert [(n.metadata["source"], n.start_char_idx, n.end_char_idx) for n in nodes] == [
        (c.doc_id, c.start, c.end) for c in expected]
    assert nodes[0].source_node.node_id == documents[0].doc_id


def recorded_embeddings():
    """A LangChain ``Embeddings`` that records every text it is asked to embed."""
    embeddings = pytest.importorskip(
        "langchain_core.embeddings",
        reason="needs the langchain extra: pip install -e '.[langchain]'")

    class Recorder(embeddings.Embeddings):
        def __init__(self):
            self.texts: list[str] = []

        def embed_documents(self, texts):
            self.texts += texts
            return [[float(len(t)), 1.0] for t in texts]

        def embed_query(self, text):
            return [float(len(text)), 1.0]

    return Recorder()


def scored_embed_texts(folder, config) -> list[str]:
    """What chunkproof's index scored for the .md files of ``folder`` under ``config``."""
    pages = [doc for doc in load_corpus(folder) if doc.id.endswith(".md")]
    return sorted(c.embed_text for c in chunk_corpus(pages, config))


@pytest.mark.needs("langchain")
def test_a_langchain_store_embeds_exactly_what_chunkproof_scored(tmp_path):
    recorder = recorded_embeddings()
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from chunkproof.integrations.langchain import ChunkproofTextSplitter

    config_path = save_config(CONFIG, tmp_path / "chosen_config.yaml")
    try:  # LangChain's own loader where installed; else the document it makes
        from langchain_community.document_loaders import DirectoryLoader, TextLoader

        loaded = DirectoryLoader(str(SAMPLE), glob="**/*.md", loader_cls=TextLoader).load()
    except ImportError:
        loaded = [Document(page_content=p.read_text(encoding="utf-8"),
                           metadata={"source": str(p)}) for p in sorted(SAMPLE.rglob("*.md"))]
    pieces = ChunkproofTextSplitter(config_path).split_documents(loaded)
    InMemoryVectorStore.from_documents(pieces, embedding=recorder)
    # what chunkproof scores for the text as the loader read it (it reads CRLF as LF)
    scored = [c.embed_text for d in loaded
              for c in chunk_text(d.page_content, CONFIG, doc_id=d.metadata["source"])]
    assert sorted(recorder.texts) == sorted(scored)
    assert recorder.texts == [piece.metadata["embed_text"] for piece in pieces]


@pytest.mark.needs("llamaindex")
def test_a_llamaindex_store_embeds_exactly_what_chunkproof_scored(tmp_path):
    import llama_index.core as core
    from llama_index.core.embeddings import MockEmbedding

    from chunkproof.integrations.llamaindex import ChunkproofNodeParser

    class Recorder(MockEmbedding):
        texts: list = []

        def _get_text_embeddings(self, texts):
            self.texts.extend(texts)
            return [self._get_vector() for _ in texts]

    config_path = save_config(CONFIG, tmp_path / "chosen_config.yaml")
    documents = core.SimpleDirectoryReader(str(SAMPLE), recursive=True,
                                           required_exts=[".md"]).load_data()
    assert "file_path" in documents[0].metadata  # the reader's metadata, which is not embedded
    parser = ChunkproofNodeParser(config=config_path)  # a path, as the LangChain splitter takes
    nodes = parser.get_nodes_from_documents(documents)
    recorder = Recorder(embed_dim=2)
    core.VectorStoreIndex(nodes, embed_model=recorder)
    assert sorted(recorder.texts) == scored_embed_texts(SAMPLE, CONFIG)
    assert all(n.get_content(metadata_mode=core.schema.MetadataMode.EMBED)
               == n.metadata["embed_text"] for n in nodes)
