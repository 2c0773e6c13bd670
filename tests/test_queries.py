"""Query records, validated JSONL loading, atomic saving and query mining."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkproof.document.corpus import make_document
from chunkproof.errors import ChunkproofError, FileReadError, QueryValidationError
from chunkproof.evaluation.queries.mining import mine_queries
from chunkproof.evaluation.queries.queries import (
    Query,
    given_split,
    load_queries,
    save_queries,
    split_queries,
)
from chunkproof.evaluation.queries.query_text import heading_symbols, heading_text, is_navigational

CLIENT = """\
---
title: Client reference
---

# Client reference

## Overview

The client holds one session with a workspace.

## Installation

Run `pip install tern`.

## `Client.upload()`

Uploads a directory as a new bundle version.

```python
client.upload("field-readings", "./exports")
# Not a heading: a comment inside a fence
```

### Return value

A `Version` with its number and digest.

## See also

- [Retry policies](retry.md)
"""

CLI = """\
# Command-line reference

## `tern sync`

### Options

#### `--timeout`

Seconds to wait for one response.

## 2. Installation

Download the binary.

## Notes

Nothing here.
"""

RETRY = """\
# Retry policies

## Configuring `retry_policy` from a file

Read the policy from TOML.

## Summary

Retries back off exponentially.
"""


@pytest.fixture
def corpus():
    return [
        make_document("api/client.md", CLIENT),
        make_document("cli/commands.md", CLI),
        make_document("api/retry.md", RETRY),
    ]


def write_lines(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the record -------------------------------------------------------------------------


def test_query_round_trips_through_dict():
    query = Query("q1", "how to upload", ("api/client.md", "cli/commands.md"), "Uploads", "manual")
    data = query.as_dict()
    assert data == {
        "id": "q1",
        "query": "how to upload",
        "sources": ["api/client.md", "cli/commands.md"],
        "answer": "Uploads",
        "kind": "manual",
        "gold_spans": [],
    }
    assert Query.from_dict(data) == query


def test_from_dict_accepts_a_single_source_and_defaults():
    query = Query.from_dict({"id": "q", "query": "x", "source": "api/client.md"})
    assert query.sources == ("api/client.md",)
    assert query.answer is None
    assert query.kind == "manual"


# --- loading ----------------------------------------------------------------------------


def test_load_valid_file(tmp_path, corpus):
    path = write_lines(tmp_path, [
        json.dumps({"id": "q1", "query": "upload a folder", "source": "api/client.md",
                    "answer": "Uploads a directory as a new bundle version."}),
        "",
        json.dumps({"id": "q2", "query": "sync timeout",
                    "sources": ["cli/commands.md", "api/retry.md"], "kind": "symbol"}),
    ])
    queries = load_queries(path, corpus)
    assert [q.id for q in queries] == ["q1", "q2"]
    assert queries[0].answer == "Uploads a directory as a new bundle version."
    assert queries[0].kind == "manual"
    assert queries[1].sources == ("cli/commands.md", "api/retry.md")
    assert queries[1].kind == "symbol"


def test_load_lists_every_bad_line(tmp_path, corpus):
    good = {"id": "ok", "query": "upload", "source": "api/client.md"}
    path = write_lines(tmp_path, [
        json.dumps(good),                                                        # 1 fine
        '{"id": "broken", "query": ',                                            # 2 bad JSON
        json.dumps({"id": "q3", "source": "api/client.md"}),                      # 3 no query
        json.dumps({"id": "q4", "query": "x", "source": "api/clinet.md"}),        # 4 typo
        json.dumps({"id": "q5", "query": "x", "source": "api/client.md",
                    "answer": "not in the text"}),                                # 5 answer
        json.dumps(good),                                                        # 6 duplicate
        json.dumps(["id", "query"]),                                             # 7 not object
        json.dumps({"id": "q8", "query": "x"}),                                  # 8 no source
        json.dumps({"id": "q9", "query": "x", "source": "api/retry.md",
                    "answr": "Read"}),                                           # 9 unknown field
    ])
    with pytest.raises(QueryValidationError) as caught:
        load_queries(path, corpus)
    problems = caught.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 8", "line 9",
    ]
    assert "not valid JSON" in problems[0]
    assert "missing field 'query'" in problems[1]
    assert "'api/clinet.md' is not a document" in problems[2]
    assert "did you mean 'api/client.md'" in problems[2]
    assert "not an exact substring of source 'api/client.md'" in problems[3]
    assert "duplicate id 'ok' (first used on line 1)" in problems[4]
    assert "expected a JSON object, got list" in problems[5]
    assert "missing field 'source'" in problems[6]
    assert "unknown field(s) 'answr'" in problems[7]
    message = str(caught.value)
    assert str(path) in message and "8 bad line(s)" in message
    assert isinstance(caught.value, ChunkproofError) and isinstance(caught.value, ValueError)


def test_one_line_can_have_several_problems(tmp_path, corpus):
    path = write_lines(tmp_path, [json.dumps({"id": 7, "query": "", "sources": []})])
    with pytest.raises(QueryValidationError) as caught:
        load_queries(path, corpus)
    assert len(caught.value.problems) == 3
    assert all(p.startswith("line 1: ") for p in caught.value.problems)


def test_answer_is_checked_against_the_first_source_only(tmp_path, corpus):
    path = write_lines(tmp_path, [json.dumps({
        "id": "q", "query": "x", "sources": ["api/retry.md", "api/client.md"],
        "answer": "Uploads a directory",  # in client.md, the second source
    })])
    with pytest.raises(QueryValidationError, match="substring of source 'api/retry.md'"):
        load_queries(path, corpus)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_a_file_without_queries_is_an_error(tmp_path, corpus, content):
    path = tmp_path / "queries.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QueryValidationError, match="holds no queries"):
        load_queries(path, corpus)


def test_missing_file_is_reported(tmp_path, corpus):
    with pytest.raises(FileReadError,
                       match="^cannot read query file '.*absent.jsonl': no such file$"):
        load_queries(tmp_path / "absent.jsonl", corpus)


def test_save_then_load_round_trips(tmp_path, corpus):
    queries = [
        Query("q1", "upload", ("api/client.md",), "Uploads a directory", "manual"),
        Query("q2", "タイムアウト", ("cli/commands.md", "api/retry.md"), None, "symbol"),
    ]
    path = save_queries(queries, tmp_path / "out" / "queries.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1]) == {
        "id": "q2", "query": "タイムアウト",
        "sources": ["cli/commands.md", "api/retry.md"], "kind": "symbol",
    }
    assert "タイムアウト" in lines[1]  # written as UTF-8, not escaped
    assert load_queries(path, corpus) == queries
    assert [p.name for p in path.parent.iterdir()] == ["queries.jsonl"]  # no temp file left


# --- mining -----------------------------------------------------------------------------


def test_mining_titles_sections_and_symbols(corpus):
    mined = [(q.kind, q.query, q.sources) for q in mine_queries(corpus) if q.kind != "body"]
    assert mined == [
        ("title", "Client reference", ("api/client.md",)),
        ("title", "Command-line reference", ("cli/commands.md",)),
        ("title", "Retry policies", ("api/retry.md",)),
        ("section", "Installation", ("api/client.md", "cli/commands.md")),
        ("section", "Return value", ("api/client.md",)),
        ("section", "Options", ("cli/commands.md",)),
        ("section", "Configuring retry_policy from a file", ("api/retry.md",)),
        ("symbol", "Client.upload()", ("api/client.md",)),
        ("symbol", "tern sync", ("cli/commands.md",)),
        ("symbol", "--timeout", ("cli/commands.md",)),
        ("symbol", "retry_policy", ("api/retry.md",)),
    ]


def test_mining_skips_navigational_headings_and_fenced_comments(corpus):
    texts = {q.query for q in mine_queries(corpus)}
    for skipped in ("Overview", "See also", "Notes", "Summary"):
        assert skipped not in texts
    assert not any("Not a heading" in t for t in texts)


def test_mined_ids_are_deterministic_and_numbered_per_kind(corpus):
    first = mine_queries(corpus)
    again = mine_queries(list(reversed(corpus)))
    assert [q.id for q in first][:4] == [
        "mined-title-0001", "mined-title-0002", "mined-title-0003", "mined-section-0001",
    ]
    assert [q.id for q in first if q.kind == "symbol"][-1] == "mined-symbol-0004"
    assert all(q.answer is None for q in first)
    assert mine_queries(corpus) == first
    assert {q.query for q in again} == {q.query for q in first}


def test_mined_queries_validate_after_saving(tmp_path, corpus):
    path = save_queries(mine_queries(corpus), tmp_path / "mined.jsonl")
    assert load_queries(path, corpus) == mine_queries(corpus)


def test_punctuation_only_headings_are_not_mined():
    doc = make_document("misc/odd.md", "# Odd page\n\n## ???\n\nText.\n\n## !!!\n\nMore.\n")
    assert [(q.kind, q.query) for q in mine_queries([doc])] == [("title", "Odd page")]


def test_title_from_file_stem_reads_as_words():
    doc = make_document("misc/q2-planning_notes.md", "Just text, no headings.\n")
    assert [(q.kind, q.query) for q in mine_queries([doc])] == [("title", "q2 planning notes")]


def test_heading_repeating_the_title_with_other_punctuation_is_not_a_section():
    text = "---\ntitle: Runbook - red builds\n---\n\n# Runbook: red builds\n\nText.\n"
    doc = make_document("ops/runbook.md", text)
    assert [(q.kind, q.query) for q in mine_queries([doc])] == [("title", "Runbook - red builds")]


@pytest.mark.parametrize(
    ("heading", "symbols"),
    [
        ("`Client.upload()`", ["Client.upload()"]),
        ("`--pull-only`", ["--pull-only"]),
        ("Configuring `retry_policy` from a file", ["retry_policy"]),
        ("Using Client.upload with retries", ["Client.upload"]),
        ("Calling upload() twice", ["upload()"]),
        ("The max_connections setting", ["max_connections"]),
        ("Passing --dry-run first", ["--dry-run"]),
        ("Out-of-warranty repairs", []),
        ("5.9.1 Derived bundles", []),
        ("Perch-200 gateways, e.g. outdoors", []),
    ],
)
def test_heading_symbols(heading, symbols):
    assert heading_symbols(heading) == symbols


@pytest.mark.parametrize(
    ("heading", "navigational"),
    [("Overview", True), ("See also", True), ("1 INTRODUCTION", True), ("Notes:", True),
     ("Examples", True), ("Changelog", True), ("Exit status", False), ("Scope", False)],
)
def test_is_navigational(heading, navigational):
    assert is_navigational(heading) is navigational


@pytest.mark.parametrize(
    ("heading", "text"),
    [("2. Installation", "Installation"), ("5.9.1 Derived bundles", "Derived bundles"),
     ("`tern sync`", "tern sync"), ("Step  by   step", "Step by step")],
)
def test_heading_text(heading, text):
    assert heading_text(heading) == text


def test_mining_the_sample_corpus_gives_valid_unique_queries():
    root = Path(__file__).resolve().parents[1] / "data" / "sample"
    if not root.is_dir():
        pytest.skip("data/sample is not present")
    from chunkproof.document.corpus import load_corpus

    corpus = load_corpus(root)
    queries = mine_queries(corpus)
    ids = {d.id for d in corpus}
    assert len({q.id for q in queries}) == len(queries)
    assert {q.kind for q in queries} == {"title", "section", "symbol", "body"}
    assert all(set(q.sources) <= ids for q in queries)
    assert not any(is_navigational(q.query) for q in queries if q.kind != "symbol")


# --- tuning and held-out sets -------------------------------------------------------------


def _queries(counts: dict[str, int]) -> list[Query]:
    return [Query(f"{kind}-{i}", f"question {i}", ("a.md",), kind=kind)
            for kind, n in counts.items() for i in range(n)]


def test_the_split_is_seeded_and_stratified_by_kind():
    queries = _queries({"renewal": 10, "ambiguous": 21, "title": 19})
    split = split_queries(queries, seed=3)
    assert split.method == "seeded" and split.count("tuning") + split.count("held_out") == 50
    assert split.count("held_out") == 25
    for kind, n in (("renewal", 10), ("ambiguous", 21), ("title", 19)):
        held = sum(split.sets[q.id] == "held_out" for q in queries if q.kind == kind)
        assert abs(held - n / 2) <= 1, kind  # every kind split in half
    assert split_queries(queries, seed=3) == split
    assert split_queries(queries, seed=4).sets != split.sets
    assert "25 tuning and 25 held-out queries (seed 3" in split.note


def test_too_few_queries_are_not_split():
    split = split_queries(_queries({"manual": 39}))
    assert split.method == "none" and set(split.sets.values()) == {"all"}
    assert "too few to split" in split.note and "chosen on all of them" in split.note


def test_two_files_make_the_split_and_may_not_share_ids():
    tuning, held = _queries({"a": 3}), _queries({"b": 2})
    split = given_split(tuning, held)
    assert (split.count("tuning"), split.count("held_out")) == (3, 2)
    with pytest.raises(QueryValidationError, match="'a-0' is also a tuning query id"):
        given_split(tuning, tuning[:1])
