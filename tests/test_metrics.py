"""Metrics: fence balance, file-level IR metrics, answer spans, bundles and chunk statistics."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest
import pytrec_eval

from chunkproof.chunking import sizes
from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.chunking.records import Chunk
from chunkproof.document.corpus import make_document
from chunkproof.errors import MetricError
from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.run.sweep import summary_table
from chunkproof.evaluation.scoring.bundles import fences_balanced
from chunkproof.evaluation.scoring.chunk_stats import chunk_stats, lost_characters
from chunkproof.evaluation.scoring.metrics import (
    answer_metrics,
    bundle_metrics,
    distinct_docs,
    file_metrics,
    score_run,
)

GUIDE = """\
# Uploading

Call upload with a bundle name and a folder.

```python
client.upload("field-readings", "./exports")
```

Uploads resume after an interruption.
"""


def make_chunk(doc_id, start, end, text, *, context=None, kind="prose", verbatim=True,
               embed=None, ordinal=0):
    """A Chunk with only what the metrics read filled in (``context``, ``embed``: what its
    renderings put before the text)."""
    return Chunk(
        id=f"{doc_id}:{start}-{end}", doc_id=doc_id, ordinal=ordinal, start=start, end=end,
        text=text, breadcrumb=(), part="", kind=kind, strategy="test", config_id="cfg",
        structure_source="explicit", verbatim=verbatim, start_line=1, end_line=1,
        embed_prefix=embed or "", context_prefix=context or "",
        applied_strategy="test", n_chars=len(text), n_words=len(text.split()),
        n_tokens=round(sizes.token_counts([text])[0][0]),
    )


def span_chunk(doc, start, end, **options):
    return make_chunk(doc.id, start, end, doc.text[start:end], **options)


# --- fences -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "balanced"),
    [
        ("plain prose", True),
        ("```python\nx = 1\n```", True),
        ("```python\nx = 1\n", False),
        ("x = 1\n```\n\nprose", False),
        ("~~~toml\na = 1\n~~~", True),
        ("~~~toml\na = 1\n", False),
        ("````markdown\n```python\nx\n```\n````", True),
        ("  ```\n  indented in a list\n  ```", True),
        ("Use ```inline``` spans freely", True),
        ("```\ncode\n```\n~~~\nopen tilde", False),
        ("```\na\n```\n```js\nb\n```", True),
        ("", True),
    ],
)
def test_fences_balanced(text, balanced):
    assert fences_balanced(text) is balanced


def test_a_fence_left_open_by_the_document_end_is_closed_by_it():
    assert fences_balanced("```json\n{", closed_by_end=True)
    assert not fences_balanced("```json\n{", closed_by_end=False)
    assert not fences_balanced("~~~\nopen\n```json\n{", closed_by_end=True)


# --- file level -------------------------------------------------------------------------


def test_distinct_docs_keeps_first_occurrence_order():
    chunks = [make_chunk(d, 0, 1, "x") for d in ["b", "a", "b", "c", "a"]]
    assert distinct_docs(chunks) == ["b", "a", "c"]


def test_file_metrics_by_hand():
    queries = [
        Query("q1", "x", ("a", "b")),
        Query("q2", "x", ("c",)),
        Query("q3", "x", ("d",)),
        Query("q4", "x", ("e",)),
    ]
    lists = {"q1": ["x", "b", "a"], "q2": [], "q3": ["f", "g", "h", "i", "j", "d"],
             "q4": ["e", "z"]}
    got = file_metrics(lists, queries, 5)
    assert got["q1"] == pytest.approx({
        "recall@5": 1.0, "hit@5": 1.0, "mrr@5": 0.5,
        "ndcg@5": (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3)),
    })
    assert got["q2"] == {"recall@5": 0.0, "hit@5": 0.0, "mrr@5": 0.0, "ndcg@5": 0.0}
    assert got["q3"] == {"recall@5": 0.0, "hit@5": 0.0, "mrr@5": 0.0, "ndcg@5": 0.0}
    assert got["q4"] == {"recall@5": 1.0, "hit@5": 1.0, "mrr@5": 1.0, "ndcg@5": 1.0}
    assert file_metrics(lists, queries, 2)["q1"]["recall@2"] == 0.5


def test_file_metrics_agree_with_pytrec_eval_and_plain_formulas():
    rng = random.Random(7)
    pool = [f"doc{i}" for i in range(12)]
    queries, lists = [], {}
    for n in range(40):
        gold = tuple(rng.sample(pool, rng.randint(1, 3)))
        queries.append(Query(f"q{n}", "x", gold))
        lists[f"q{n}"] = rng.sample(pool, rng.randint(0, 8))
    k = 5
    ours = file_metrics(lists, queries, k)
    qrels = {q.id: {d: 1 for d in q.sources} for q in queries}
    run = {qid: {d: 1.0 / (r + 1) for r, d in enumerate(docs[:k])} for qid, docs in lists.items()}
    direct = pytrec_eval.RelevanceEvaluator(
        qrels, {"recall.5", "success.5", "ndcg_cut.5", "recip_rank"}).evaluate(run)
    for q in queries:
        top = lists[q.id][:k]
        found = [r for r, d in enumerate(top, 1) if d in q.sources]
        plain_recall = len(found) / len(q.sources)
        assert ours[q.id]["recall@5"] == pytest.approx(plain_recall)
        assert ours[q.id]["hit@5"] == float(bool(found))
        assert ours[q.id]["mrr@5"] == pytest.approx(1 / found[0] if found else 0.0)
        trec = direct.get(q.id, {})
        assert ours[q.id]["ndcg@5"] == pytest.approx(trec.get("ndcg_cut_5", 0.0))
        assert ours[q.id]["recall@5"] == pytest.approx(trec.get("recall_5", 0.0))


# --- answer spans -----------------------------------------------------------------------


@pytest.fixture
def guide():
    return make_document("guides/upload.md", GUIDE)


def test_answer_split_across_two_chunks(guide):
    answer = "Call upload with a bundle name"
    start = guide.text.index(answer)
    cut = start + 10  # "Call uploa" | "d with ..."
    first = span_chunk(guide, 0, cut)
    second = span_chunk(guide, cut, len(guide.text))
    span = (guide.id, start, start + len(answer))

    both = answer_metrics([first, second], span, 5)
    assert both == pytest.approx({
        "answer_hit@5": 0.0, "answer_recall@5": 1.0,
        "answer_precision@5": len(answer) / len(guide.text), "answer_mrr@5": 0.0,
    })
    only_second = answer_metrics([second], span, 5)
    assert only_second["answer_recall@5"] == pytest.approx(20 / 30)
    assert only_second["answer_precision@5"] == pytest.approx(20 / len(second.text))


def test_answer_inside_a_fence(guide):
    answer = 'client.upload("field-readings", "./exports")'
    start = guide.text.index(answer)
    fence_start = guide.text.index("```python")
    fence_end = guide.text.index("```\n", fence_start + 3) + 3
    fence = span_chunk(guide, fence_start, fence_end)
    intro = span_chunk(guide, 0, fence_start)
    other = make_chunk("other.md", 0, 50, "y" * 50)
    got = answer_metrics([other, intro, fence], (guide.id, start, start + len(answer)), 5)
    assert got["answer_hit@5"] == 1.0
    assert got["answer_mrr@5"] == pytest.approx(1 / 3)
    assert got["answer_recall@5"] == 1.0
    assert got["answer_precision@5"] == pytest.approx(
        len(answer) / (50 + len(intro.text) + len(fence.text)))


def test_answer_span_in_another_document_does_not_count(guide):
    text = guide.text
    look_alike = make_chunk("copy.md", 0, len(text), text)
    got = answer_metrics([look_alike], (guide.id, 0, 11), 5)
    assert got["answer_hit@5"] == 0.0 and got["answer_recall@5"] == 0.0


# --- bundles ----------------------------------------------------------------------------


def test_bundle_efficiency_and_code_integrity_by_hand():
    top = [
        make_chunk("a.md", 0, 10, "```\nx\n```", context="A" * 21),  # 30 chars handed
        make_chunk("b.md", 0, 10, "```\ncut", context="B" * 3),  # 10
        make_chunk("a.md", 10, 20, "prose", context="A" * 15),  # 20
    ]
    assert [len(c.context_text) for c in top] == [30, 10, 20]
    got = bundle_metrics(top, ["a.md"], 5)
    assert math.isnan(got.pop("label_kept@5"))  # no document at hand: no container to see
    assert got == pytest.approx({"bundle_efficiency@5": 50 / 60, "code_integrity@5": 2 / 3})
    empty = bundle_metrics([], ["a.md"], 5)
    assert math.isnan(empty["bundle_efficiency@5"]) and math.isnan(empty["code_integrity@5"])


def test_code_integrity_accepts_a_fence_the_source_leaves_open():
    doc = make_document("tail.md", "# Tail\n\nText.\n\n```json\n{\n  \"a\": 1\n")
    start = doc.text.index("```")
    tail = span_chunk(doc, start, len(doc.text.rstrip()))
    middle = span_chunk(doc, start, start + 12)
    got = bundle_metrics([tail, middle], [doc.id], 5, docs={doc.id: doc})
    assert got["code_integrity@5"] == 0.5


def test_label_kept_of_a_bundle_counts_the_chunks_inside_labelled_containers():
    doc = make_document("tabs.md", '# Setup\n\n=== "Windows"\n\n    Run the installer.\n\n'
                                   '    Then restart.\n\nAfter the tabs.\n')
    inside = doc.text.index("Then restart.")
    labelled = span_chunk(doc, inside, inside + len("Then restart."))  # no label anywhere
    whole = span_chunk(doc, doc.text.index("==="), inside)  # its text holds the label
    outside = span_chunk(doc, doc.text.index("After"), len(doc.text.rstrip()))
    got = bundle_metrics([labelled, whole, outside], [doc.id], 5, docs={doc.id: doc})
    assert got["label_kept@5"] == 0.5


# --- a whole run ------------------------------------------------------------------------


@pytest.fixture
def run(guide):
    cut = guide.text.index("```python")
    chunks = [span_chunk(guide, 0, cut), span_chunk(guide, cut, len(guide.text), ordinal=1),
              make_chunk("other.md", 0, 20, "z" * 20)]
    answer = "Uploads resume after an interruption."
    queries = [
        Query("q1", "resume uploads", (guide.id,), answer, "manual"),
        Query("q2", "unrelated", ("missing.md",), None, "title"),
    ]
    results = [[(chunks[2].id, 3.0), (chunks[1].id, 2.0)], [(chunks[0].id, 1.0)]]
    return chunks, queries, results


def test_score_run_rows(run, guide):
    chunks, queries, results = run
    rows = score_run(results, queries, chunks, docs=[guide], config_id="cfgA")
    frame = pd.DataFrame(rows)
    assert list(frame.columns) == ["config_id", "query_id", "query_kind", "metric", "value"]
    assert set(frame["config_id"]) == {"cfgA"}
    values = frame.set_index(["query_id", "metric"])["value"]
    assert len(frame[frame.query_id == "q1"]) == 17 and len(frame[frame.query_id == "q2"]) == 9
    assert math.isnan(values["q1", "label_kept@5"])  # no chunk inside a labelled container
    assert values["q1", "mrr@5"] == 0.5
    assert values["q1", "answer_hit@5"] == 1.0
    assert values["q1", "answer_mrr@5"] == 0.5
    assert values["q1", "bundle_efficiency@5"] == pytest.approx(
        len(chunks[1].context_text) / (20 + len(chunks[1].context_text)))
    assert values["q2", "recall@5"] == 0.0
    assert frame.loc[frame.query_id == "q2", "query_kind"].unique().tolist() == ["title"]


def test_score_run_cuts_each_k(run, guide):
    chunks, queries, results = run
    rows = score_run(results, queries, chunks, docs=[guide], ks=(1, 5))
    values = {(r["query_id"], r["metric"]): r["value"] for r in rows}
    assert values["q1", "hit@1"] == 0.0 and values["q1", "hit@5"] == 1.0
    assert values["q1", "answer_recall@1"] == 0.0 and values["q1", "answer_recall@5"] == 1.0
    assert rows[0]["config_id"] == "cfg"  # taken from the chunks when not given


def test_score_run_rejects_bad_input(run, guide):
    chunks, queries, results = run
    with pytest.raises(MetricError, match="unknown chunk id"):
        score_run([[("nope", 1.0)], []], queries, chunks, docs=[guide])
    with pytest.raises(MetricError, match="1 rankings for 2 queries"):
        score_run(results[:1], queries, chunks, docs=[guide])
    with pytest.raises(MetricError, match="is not among the documents"):
        score_run(results, queries, chunks)
    bad = [Query("q1", "x", (guide.id,), "not in the guide")]
    with pytest.raises(MetricError, match="is not in 'guides/upload.md'"):
        score_run(results[:1], bad, chunks, docs=[guide])


def test_summary_table_means_per_config(run, guide):
    chunks, queries, results = run
    rows = score_run(results, queries, chunks, docs=[guide], config_id="A")
    rows += score_run([[], []], queries, chunks, docs=[guide], config_id="B")
    config = {"strategy": "s", "size": 1, "unit": "chars", "options": "{}", "retriever": "bm25"}
    table = summary_table(pd.DataFrame([{**config, **r} for r in rows]))
    table = table[table["split"] == "all"].set_index(["config_id", "metric"])
    assert table.loc[("A", "hit@5"), "mean"] == 0.5
    assert table.loc[("A", "hit@5"), "n"] == 2
    assert table.loc[("B", "hit@5"), "mean"] == 0.0
    assert table.loc[("B", "bundle_efficiency@5"), "n"] == 0  # NaN on empty bundles


# --- chunk statistics -------------------------------------------------------------------


def test_chunk_stats_by_hand(monkeypatch):
    text = "# Title\n\nalpha beta gamma\n\nLOST\n\n```\ncode\n```\n"
    doc = make_document("d.md", text)
    heading = span_chunk(doc, 0, 7, kind="heading")
    para = span_chunk(doc, 9, 25)
    fence = span_chunk(doc, text.index("```"), len(text) - 1, embed="word " * 300)
    rewritten = make_chunk("d.md", 9, 25, "alpha beta", verbatim=False)
    config = make_config(strategy="ast_merge", size=15, unit="chars")
    monkeypatch.setattr(sizes, "tokens_available", lambda: False)
    stats = chunk_stats([heading, para, fence, rewritten], config, docs=[doc])
    assert stats.chunks == 4 and stats.documents == 1
    assert stats.size_max == 16 and stats.chars_max == 16
    assert stats.size_p50 == 11.0  # sizes 7, 10, 12, 16
    assert stats.heading_only == 1 and stats.heading_only_share == 0.25
    assert stats.oversize == 1  # only the 16-char paragraph exceeds 15
    assert stats.lost_chars == 4  # "LOST"
    solid = sum(not ch.isspace() for ch in text)
    assert stats.lost_share == pytest.approx(4 / solid)
    assert stats.verbatim_share == 0.75
    assert stats.code_integrity == 1.0
    assert stats.over_encoder_limit == 0.25  # 300 words * 1.3 > 256
    assert stats.over_encoder_limit_method == "estimate"
    assert stats.config_id == config.config_id and stats.unit == "chars"


@pytest.mark.needs("tokenizer")
def test_chunk_stats_counts_tokens_with_the_tokenizer():
    doc = make_document("d.md", "short text\n")
    long = make_chunk("d.md", 0, 10, "short text", embed="token " * 300)
    short = make_chunk("d.md", 0, 10, "short text")
    config = make_config(strategy="ast_merge", size=50, unit="tokens")
    stats = chunk_stats([long, short], config, docs=[doc])
    assert stats.over_encoder_limit == 0.5
    assert stats.over_encoder_limit_method == "tokenizer"
    assert stats.size_max == 2  # "short text" is two word pieces


def test_chunk_stats_on_a_real_strategy(guide):
    config = make_config(strategy="ast_merge", size=60)
    chunks = chunk_document(guide, config)
    stats = chunk_stats(chunks, config, docs=[guide])
    assert stats.lost_chars == 0
    assert stats.code_integrity == 1.0
    assert stats.verbatim_share == 1.0
    assert stats.chunks == len(chunks)


def test_lost_characters_counts_documents_without_chunks(guide):
    empty = make_document("empty.md", "  \n")
    other = make_document("other.md", "ab cd\n")
    lost, total = lost_characters([span_chunk(guide, 0, len(guide.text))], {
        guide.id: guide, empty.id: empty, other.id: other})
    assert lost == 4
    assert total == sum(not ch.isspace() for ch in guide.text) + 4
    with pytest.raises(MetricError, match="belongs to 'x.md'"):
        lost_characters([make_chunk("x.md", 0, 1, "x")], {guide.id: guide})


def test_code_integrity_at_a_budget_judges_the_chunk_as_cut_not_as_truncated(guide):
    """A budget that truncates a whole code block's chunk inside its fence leaves the chunk
    intact: code integrity judges the chunker's boundaries, not the budget's cut."""
    from chunkproof.evaluation.retrieval.budget import budget_name

    cut = guide.text.index("```python")
    chunks = [span_chunk(guide, 0, cut), span_chunk(guide, cut, len(guide.text), ordinal=1)]
    answer = "Uploads resume after an interruption."
    query = Query("q1", "resume uploads", (guide.id,), answer, "manual")
    rows = score_run([[(chunks[1].id, 1.0)]], [query], chunks, docs=[guide], budgets=(6,))
    values = {r["metric"]: r["value"] for r in rows}
    at = budget_name(6)
    assert values[f"answer_recall@{at}"] == 0.0  # truncated before the answer, in the fence
    assert values[f"code_integrity@{at}"] == 1.0
    assert values["code_integrity@5"] == 1.0
