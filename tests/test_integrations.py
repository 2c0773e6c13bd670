"""The LangChain splitter and the LlamaIndex node parser give exactly chunklab's chunks."""

from __future__ import annotations

import pytest

from chunklab import chunk_corpus, chunk_text, load_corpus, make_config, save_config
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
def test_langchain_splitter_documents_carry_chunklab_spans_and_texts(corpus):
    import langchain_core.documents as langchain

    from chunklab.integrations.langchain import ChunklabTextSplitter

    splitter = ChunklabTextSplitter(CONFIG)
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
    from chunklab.integrations.langchain import ChunklabTextSplitter

    doc = corpus.get("guides/getting-started.md")
    expected = chunk_text(doc.text, CONFIG)
    config_file = save_config(CONFIG, tmp_path / "chosen_config.yaml")
    plain = ChunklabTextSplitter(config_file, content="text")  # a chosen_config.yaml works
    assert plain.split_text(doc.text) == [c.text for c in expected]
    assert ChunklabTextSplitter(CONFIG).split_text(doc.text) == [c.embed_text for c in expected]
    with pytest.raises(ValueError, match="content must be one of"):
        ChunklabTextSplitter(CONFIG, content="nope").split_text(doc.text)


@pytest.mark.needs("llamaindex")
def test_llamaindex_nodes_carry_chunklab_spans_and_texts(corpus):
    import llama_index.core.schema as schema

    from chunklab.integrations.llamaindex import ChunklabNodeParser

    parser = ChunklabNodeParser.from_config(CONFIG, content="text")
    documents = [schema.Document(text=d.text, metadata={"source": d.id}) for d in corpus]
    nodes = parser.get_nodes_from_documents(documents)
    expected = chunk_corpus(corpus, CONFIG)
    assert [n.get_content() for n in nodes] == [c.text for c in expected]
    assert [(n.metadata["source"], n.start_char_idx, n.end_char_idx) for n in nodes] == [
        (c.doc_id, c.start, c.end) for c in expected]
    assert nodes[0].source_node.node_id == documents[0].doc_id
