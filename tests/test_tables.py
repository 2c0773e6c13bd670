"""Every result file a sweep writes matches its declared schema, the records agree with the
schemas, and docs/results.md's table of files is the one the schemas make."""

from __future__ import annotations

import json
from dataclasses import fields

import pandas as pd
import pytest

from chunkproof.chunking.records import Chunk
from chunkproof.errors import SchemaError
from chunkproof.evaluation.run import tables
from chunkproof.evaluation.run.runs import RunInfo, SweepParams, load_run
from chunkproof.evaluation.run.sweep import run_sweep
from chunkproof.evaluation.scoring.chunk_stats import ChunkStats
from conftest import FIXTURES, ROOT

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tables") / "run"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400))
    run_sweep(params, out, progress=False)
    return out


@pytest.mark.parametrize("table", tables.RESULT_TABLES, ids=lambda t: t.file)
def test_every_written_file_matches_its_schema(run_dir, table):
    path = run_dir / table.file
    frame = pd.read_parquet(path) if table.file.endswith(".parquet") else pd.read_csv(path)
    assert len(frame) > 0
    assert table.problems(frame) == []


@pytest.mark.parametrize("table", tables.RESULT_TABLES, ids=lambda t: t.file)
def test_the_reader_gives_back_the_declared_columns(run_dir, table):
    assert list(table.read(run_dir).columns) == table.names


def test_a_frame_that_is_not_the_schema_is_refused():
    frame = pd.DataFrame([{"config_id": "a", "strategy": "rct"}])
    with pytest.raises(SchemaError, match="missing column"):
        tables.CHUNK_STATS.conform(frame)
    extra = tables.SUMMARY.frame([]).assign(surprise=1)
    assert "undeclared column(s) ['surprise']" in tables.SUMMARY.problems(extra)[0]
    wrong = pd.DataFrame({name: ["x"] for name in tables.SUMMARY.names})
    assert any("'mean' should be float" in p for p in tables.SUMMARY.problems(wrong))


def test_records_agree_with_the_schemas():
    chunk_fields = Chunk.column_names()
    assert set(tables.CHUNKS.names) == set(chunk_fields) | set(tables.CONFIG_NAMES)
    stats_fields = [f.name for f in fields(ChunkStats)]
    assert [n for n in tables.CHUNK_STATS.names if n != "options"] == stats_fields


def test_run_json_holds_the_declared_keys(run_dir):
    info = json.loads((run_dir / "run.json").read_text())
    assert list(info) == list(RunInfo.__annotations__)
    assert load_run(run_dir).run_info == info


def test_every_column_is_typed_and_explained():
    for table in tables.RESULT_TABLES:
        assert len(set(table.names)) == len(table.names), table.file
        for column in table.columns:
            assert column.kind in tables.KINDS and len(column.meaning) > 8, column


def test_the_results_page_lists_the_files_as_the_schemas_declare():
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert tables.markdown() in page, "docs/results.md: run python -m chunkproof.docs"


@pytest.mark.parametrize("strategy", ["ast_breadcrumb", "mhs_rct"])
def test_a_config_s_chunk_rows_made_a_column_at_a_time_are_the_rows_made_one_by_one(
        sample_corpus, strategy):
    from chunkproof import chunk_corpus, make_config
    from chunkproof.evaluation.run.runs import chunks_frame, config_columns

    config = make_config(strategy=strategy, size=300)
    chunks = chunk_corpus(sample_corpus, config)
    by_rows = tables.CHUNKS.frame({**config_columns(config), **c.as_dict()} for c in chunks)
    assert len(by_rows) == len(chunks) > 0
    pd.testing.assert_frame_equal(chunks_frame(config, chunks), by_rows)
    assert list(chunks_frame(config, []).columns) == tables.CHUNKS.names


def test_chunks_written_to_a_part_are_read_back_the_same(sample_corpus, tmp_path):
    from chunkproof import chunk_corpus, make_config
    from chunkproof.evaluation.run.runs import chunks_frame, read_chunks, write_part

    config = make_config(strategy="ast_breadcrumb", size=300)
    chunks = chunk_corpus(sample_corpus, config)
    write_part(tmp_path / "chunks.parquet", chunks_frame(config, chunks))
    back = read_chunks(tmp_path / "chunks.parquet")
    assert back == chunks
    assert {type(c.breadcrumb) for c in back} == {tuple} and any(c.breadcrumb for c in back)


def test_the_list_columns_are_the_chunk_fields_holding_tuples():
    from chunkproof.chunking.records import LIST_COLUMNS

    assert {f.name for f in fields(Chunk) if str(f.type).startswith("tuple")} == set(
        LIST_COLUMNS)


def test_the_load_s_warnings_are_written_with_their_counts_in_run_json(run_dir):
    warned = tables.DOCUMENT_WARNINGS.read(run_dir)
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["corpus"]["warnings"] == warned["kind"].value_counts().to_dict()
    assert ("flat.md", "no_headings") in set(zip(warned["doc_id"], warned["kind"], strict=True))
    assert "broken.md" in set(warned["doc_id"])  # a skipped file is listed too
    assert len(load_run(run_dir).document_warnings) == len(warned)
