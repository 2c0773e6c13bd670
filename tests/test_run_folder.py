"""A run folder never serves stale or foreign parts: an edited document, a killed sweep of
another corpus and another query set are each recomputed; a second writer is refused."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from chunkproof import ConfigError
from chunkproof.evaluation.run import sweep as sweep_module
from chunkproof.evaluation.run.run_folder import writing
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from conftest import FIXTURES, SAMPLE

MINI = FIXTURES / "mini_corpus"
GRID = {"strategies": ("rct", "ast_breadcrumb"), "sizes": (300,), "budgets": ()}


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "docs"
    shutil.copytree(MINI, root)
    (root / "queries.jsonl").unlink()
    shutil.copy(MINI / "queries.jsonl", tmp_path / "queries.jsonl")
    return root


def params_for(root, queries, **extra) -> SweepParams:
    return SweepParams(corpus=str(root), queries=str(queries), **{**GRID, **extra})


def part_files(out) -> list[str]:
    return sorted(p.name for p in (out / "parts").iterdir())


def test_an_edited_document_is_chunked_and_scored_again(corpus, tmp_path):
    params, out = params_for(corpus, tmp_path / "queries.jsonl"), tmp_path / "run"
    first = run_sweep(params, out, progress=False)
    before = part_files(out)
    guide = corpus / "guide.md"
    guide.write_text(guide.read_text() + "\n## Added later\n\nA sentence that was never "
                     "chunked before: the quokka protocol.\n", encoding="utf-8")
    again = run_sweep(params, out, progress=False)
    assert again.run_info["reused_parts"] == 0
    assert again.run_info["corpus"]["fingerprint"] != first.run_info["corpus"]["fingerprint"]
    chunks = pd.read_parquet(out / "chunks.parquet")
    assert set(chunks["config_id"]) == {c.config_id for c in params.configs()}
    for config_id, rows in chunks.groupby("config_id"):
        assert rows["text"].str.contains("quokka protocol").any(), config_id
    after = part_files(out)
    assert len(after) == len(before) and not set(after) & set(before)  # stale parts removed


def test_a_killed_sweep_of_corpus_a_is_never_reused_for_corpus_b(corpus, tmp_path,
                                                                monkeypatch):
    params, out = params_for(corpus, tmp_path / "queries.jsonl"), tmp_path / "run"

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # as if the sweep died after scoring, before run.json

    with monkeypatch.context() as patch:
        patch.setattr(sweep_module, "summary_table", killed)
        with pytest.raises(KeyboardInterrupt):
            run_sweep(params, out, progress=False)
    assert not (out / "run.json").exists() and part_files(out)
    (out / ".summary.csv.a1b2c3.tmp").write_text("half")  # what a kill mid-write leaves
    (out / "parts" / ".x.chunks.parquet.d4e5f6.tmp").write_text("half")

    other = tmp_path / "other"
    shutil.copytree(corpus, other)
    with pytest.raises(ConfigError, match="holds an unfinished other run .*params.json"):
        run_sweep(params_for(other, tmp_path / "queries.jsonl"), out, progress=False)

    # Corpus B under corpus A's path: the same parameters, other content.
    guide = corpus / "guide.md"
    guide.write_text("Corpus B opens its guide here.\n\n" + guide.read_text(), encoding="utf-8")
    result = run_sweep(params, out, progress=False)
    assert result.run_info["reused_parts"] == 0
    chunks = pd.read_parquet(out / "chunks.parquet").query("doc_id == 'guide.md'")
    assert chunks.groupby("config_id")["text"].apply(
        lambda t: t.str.contains("Corpus B opens").any()).all()
    assert not list(out.rglob("*.tmp"))


def test_two_query_sets_never_share_one_folder(tmp_path):
    queries = tmp_path / "queries.jsonl"
    lines = (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries.write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    params, out = params_for(SAMPLE, queries), tmp_path / "run"
    run_sweep(params, out, progress=False)

    elsewhere = tmp_path / "sixty.jsonl"
    elsewhere.write_text("\n".join(lines[:60]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds another run"):
        run_sweep(params_for(SAMPLE, elsewhere), out, progress=False)

    queries.write_text("\n".join(lines[:60]) + "\n", encoding="utf-8")  # same file, edited
    result = run_sweep(params, out, progress=False)
    retrieval_parts = len(params.configs()) * len(params.retrievers)
    assert result.run_info["reused_parts"] == len(params.configs())  # chunks only
    assert result.run_info["reused_parts"] < len(params.configs()) + retrieval_parts
    summary = pd.read_csv(out / "summary.csv")
    blended = summary[(summary["split"] == "all") & (summary["metric"] == "recall@5")]
    assert set(blended["n"]) == {60}
    info = json.loads((out / "run.json").read_text())
    assert info["queries"] == 60 and info["queries_fingerprint"] == (
        result.run_info["queries_fingerprint"])


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    out = tmp_path / "run"
    params = params_for(MINI, MINI / "queries.jsonl")
    with writing(out), pytest.raises(ConfigError, match="being written by another chunkproof "
                                                        "sweep.*wait for it"):
        run_sweep(params, out, progress=False)
    assert run_sweep(params, out, progress=False).run_info["configs"] == 2  # lock released


def test_an_output_folder_that_is_a_file_is_refused(tmp_path):
    out = tmp_path / "run"
    out.write_text("not a folder")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        run_sweep(params_for(MINI, MINI / "queries.jsonl"), out, progress=False)


def test_parts_made_by_other_code_are_made_again(corpus, tmp_path, monkeypatch):
    """Parts were keyed by the package's static version (the same across commits): a rerun
    after a change to the chunking code reused chunks the old code made."""
    from chunkproof.evaluation.run import runs

    params, out = params_for(corpus, tmp_path / "queries.jsonl"), tmp_path / "run"
    run_sweep(params, out, progress=False)
    assert run_sweep(params, out, progress=False).run_info["reused_parts"] > 0
    monkeypatch.setattr(runs, "code_version", lambda: "other-code")
    again = run_sweep(params, out, progress=False)
    assert again.run_info["reused_parts"] == 0


def test_the_code_version_is_a_digest_of_the_code_and_the_parser():
    from chunkproof.evaluation.run import runs
    from chunkproof.util.code_version import CODE_STAGES, KEY_PACKAGES

    runs.code_version.cache_clear()
    first = runs.code_version()
    assert first == runs.code_version() and first != runs.versions()["chunkproof"]
    assert runs.versions()["chunkproof_code"] == first
    assert "markdown-it-py" in KEY_PACKAGES and "chunking" in CODE_STAGES
