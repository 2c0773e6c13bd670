"""The LangChain retriever wrapper and the LlamaIndex node postprocessor apply a retrieval mode
as the sweep scored it: the same hand-computed rankings and budgets as tests/test_modes.py."""

from __future__ import annotations

import pytest
import yaml

from chunkproof.errors import ConfigError
from test_modes import page_chunks

QUERY = "installing the configured tool"


def ranked(chunks):
    """The wrapped retriever's answer: parts 0, 4 and 2 with falling scores."""
    return [(chunks[0], 3.0), (chunks[4], 2.9), (chunks[2], 2.8)]


def langchain_retriever(found):
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from chunkproof.integrations.common import chunk_metadata

    class Fixed(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            return [Document(page_content=c.text, metadata={**chunk_metadata(c), "score": s,
                                                            "mine": c.ordinal})
                    for c, s in found]

    return Fixed()


@pytest.mark.needs("langchain")
@pytest.mark.parametrize(("mode", "budget", "expected"), [
    ("plain", None, [0, 4, 2]),
    ("boost", None, [4, 2, 0]),            # 2.9 and 2.8 raised by a twelfth pass 3.0
    ("expand=parent", None, [0, 4, 2, 3, 1]),
    ("expand=parent", 35, [0, 4, 2, 3]),   # 10 + 10 + 10 + the fourth cut to 5 tokens
    ("expand=siblings", 35, [0, 4, 2, 3]),
    ("plain", 35, [0, 4, 2]),              # the ranking runs out at 30 tokens
])
def test_the_langchain_wrapper_hands_over_what_the_mode_does(mode, budget, expected):
    from chunkproof.integrations.langchain import ChunkproofModeRetriever

    _, chunks = page_chunks()
    wrapper = ChunkproofModeRetriever(retriever=langchain_retriever(ranked(chunks)), chunks=chunks,
                                    mode=mode, budget=budget, content="text")
    docs = wrapper.invoke(QUERY)
    assert [d.metadata["start"] for d in docs] == [chunks[i].start for i in expected]
    if budget and len(expected) == 4:
        assert len(docs[-1].page_content) < len(chunks[expected[-1]].text)
    assert docs[0].metadata["mine"] == expected[0]  # a retrieved one keeps its own metadata


@pytest.mark.needs("langchain")
def test_the_langchain_wrapper_reads_the_chosen_mode_and_refuses_unknown_pieces(tmp_path):
    from chunkproof.integrations.langchain import ChunkproofModeRetriever

    _, chunks = page_chunks()
    chosen = tmp_path / "chosen_config.yaml"
    chosen.write_text(yaml.safe_dump({"chunker": {"strategy": "rct"},
                                      "retrieval_mode": "expand=siblings"}))
    base = langchain_retriever(ranked(chunks))
    assert ChunkproofModeRetriever(retriever=base, chunks=chunks, mode=str(chosen)).mode == (
        "expand=siblings")
    partial = ChunkproofModeRetriever(retriever=base, chunks=chunks[:3], mode="boost")
    with pytest.raises(ConfigError, match="not among the 3 chunks given"):
        partial.invoke(QUERY)


@pytest.mark.needs("llamaindex")
@pytest.mark.parametrize(("mode", "budget", "expected"), [
    ("boost", None, [4, 2, 0]),
    ("expand=parent", 35, [0, 4, 2, 3]),
    ("expand=siblings", None, [0, 4, 2, 3, 1]),
])
def test_the_llamaindex_postprocessor_hands_over_what_the_mode_does(mode, budget, expected):
    from llama_index.core.schema import NodeWithScore, TextNode

    from chunkproof.integrations.common import chunk_metadata
    from chunkproof.integrations.llamaindex import ChunkproofModePostprocessor

    _, chunks = page_chunks()
    nodes = [NodeWithScore(node=TextNode(text=c.text, metadata=chunk_metadata(c)), score=s)
             for c, s in ranked(chunks)]
    post = ChunkproofModePostprocessor(chunks=chunks, mode=mode, budget=budget)
    handed = post.postprocess_nodes(nodes, query_str=QUERY)
    assert [n.node.metadata["start"] for n in handed] == [chunks[i].start for i in expected]
    retrieved = {n.node.node_id for n in nodes}
    assert [n.node.node_id in retrieved for n in handed] == [
        i in (0, 2, 4) for i in expected]
