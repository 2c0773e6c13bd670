"""chunkproof chunk --out DIR/: Parquet shards and a manifest holding the chunks the JSONL output
holds, field for field, chunked in this process or with Ray Data on a local instance; the
folder appears whole or not at all; a bad Ray address or a missing Ray is one line."""

from __future__ import annotations

import json
import operator
import sys
from pathlib import Path

import pandas as pd
import pytest

from chunkproof import load_corpus, make_config, save_config
from chunkproof.chunking import shards
from chunkproof.cli import main
from chunkproof.document.corpus import MAX_FILE_ENV
from test_ray import local_ray  # noqa: F401  (the local Ray instance fixture)

PAGES = {
    "guide/install.md": """---
title: Installing the tool
description: How to install and check it.
---

# Install

Pick the package for your system, then check the install.

- Get the package:

  ```bash
  pip install thetool
  # not a heading
  ```

- Check it:

  ```bash
  thetool --version
  ```

## Upgrade

Run the same command with `--upgrade`; your settings are kept.
""",
    "guide/配置.md": """# 安装指南

## 准备工作

本节介绍如何安装本工具。请先确认系统满足要求，并备份现有的配置文件。

## 配置

设置完成后，重新启动服务。日志文件位于数据目录中，可以随时查看。

| 选项 | 含义 |
|---|---|
| 端口 | 服务监听的端口 |
""",
    "notes.txt": "RELEASE NOTES\n\nVersion 2 reads settings from one file.\n\nVersion 1 "
                 "was the first.\n",
    "faq.md": "# FAQ\n\n## Why?\n\nBecause a chunk should hold a whole answer.\n",
    "legacy.rst": "Legacy\n======\n\nNot read.\n",
}
BROKEN = b"# Broken\n\n\xff\xfe not UTF-8\n"
MAX_FILE_MIB = "0.002"
"""2 KiB: the fixture pages fit, ``big.md`` (3 KB) is skipped unread, on every engine."""


@pytest.fixture(autouse=True)
def file_limit_restored(monkeypatch):
    """``--max-file-mib`` sets ``CHUNKPROOF_MAX_FILE_MIB`` for the whole process (and the
    notebooks it runs): as it was before each test, after it."""
    monkeypatch.setenv(MAX_FILE_ENV, "8")  # the default, recorded so that it is undone


def write_corpus(root: Path) -> Path:
    for name, text in PAGES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "broken.md").write_bytes(BROKEN)
    (root / "big.md").write_text("# Big\n\n" + "words " * 500, encoding="utf-8")
    return root


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def config_file(tmp_path) -> Path:
    config = make_config(strategy="ast_breadcrumb", size=60, number_parts=True)
    return save_config(config, tmp_path / "chosen_config.yaml")


@pytest.fixture
def small_shards(monkeypatch):
    """Two files a shard, so the corpus is cut into several shards."""
    monkeypatch.setattr(shards, "SHARD_FILES", 2)


def chunk(corpus: Path, config: Path, out: str, *extra: str) -> int:
    return main(["chunk", "--corpus", str(corpus), "--config", str(config), "--out", out,
                 "--max-file-mib", MAX_FILE_MIB, *extra])


def jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def folder_rows(folder: Path) -> list[dict]:
    """The shards read as docs/scale.md says (pandas on the folder), lists as lists."""
    frame = pd.read_parquet(folder)
    return [{k: v.tolist() if hasattr(v, "tolist") else v for k, v in row.items()}
            for row in frame.to_dict("records")]


def by_chunk(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["doc_id"], r["ordinal"]))


def assert_same_chunks(expected: list[dict], found: list[dict]) -> None:
    """Every field of every chunk equal, whatever the order of the rows."""
    assert len(expected) >= 10
    assert {r["doc_id"] for r in expected} == {"guide/install.md", "guide/配置.md",
                                               "notes.txt", "faq.md"}
    assert list(found[0]) == list(expected[0])  # the same columns, in the same order
    assert by_chunk(found) == by_chunk(expected)


def reference(tmp_path: Path, corpus: Path, config: Path, capsys) -> tuple[list[dict], str]:
    """The JSONL output of the local engine (today's path) and what it printed to stderr."""
    assert chunk(corpus, config, str(tmp_path / "chunks.jsonl")) == 0
    return jsonl_rows(tmp_path / "chunks.jsonl"), capsys.readouterr().err


def test_a_folder_holds_the_chunks_the_jsonl_holds(tmp_path, corpus, config_file, capsys,
                                                   small_shards):
    expected, skipped_lines = reference(tmp_path, corpus, config_file, capsys)
    out = tmp_path / "chunks"
    assert chunk(corpus, config_file, f"{out}/") == 0
    assert_same_chunks(expected, folder_rows(out))
    made = shards.read_manifest(out)
    loaded = load_corpus(corpus, max_bytes=int(float(MAX_FILE_MIB) * 2**20))
    assert made["skipped"] == [s.as_dict() for s in loaded.skipped]
    assert {s["path"] for s in made["skipped"]} == {"big.md", "broken.md", "legacy.rst"}
    order = operator.itemgetter("doc_id", "kind", "line")  # the manifest's: shard by shard
    assert sorted(made["warnings"], key=order) == sorted(loaded.warning_rows(), key=order)
    shown = [w for w in made["warnings"] if w["doc_id"] not in {"big.md", "broken.md",
                                                                 "legacy.rst"}]
    assert shown and all(f"warning {w['doc_id']}" in skipped_lines for w in shown)
    assert made["corpus"]["fingerprint"] == loaded.fingerprint
    assert made["corpus"]["documents"] == len(loaded) == 4
    assert made["chunks"] == len(expected) == sum(s["rows"] for s in made["shards"])
    assert len(made["shards"]) > 1 and made["engine"] == "local"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [shards.MANIFEST, *(s["file"] for s in made["shards"])])
    assert capsys.readouterr().err == skipped_lines  # the same files reported
    assert [c.as_dict() for c in shards.read_chunk_folder(out)] == expected  # corpus order


def test_a_shard_is_written_a_batch_at_a_time(tmp_path, corpus, config_file, capsys,
                                              monkeypatch):
    """A shard's chunks go to its file in row groups of ``BATCH_ROWS`` as they are made, and
    each chunk written is held no more: the folder holds what the JSONL holds."""
    import pyarrow.parquet as pq

    expected, _ = reference(tmp_path, corpus, config_file, capsys)
    monkeypatch.setattr(shards, "BATCH_ROWS", 3)
    out = tmp_path / "chunks"
    assert chunk(corpus, config_file, f"{out}/") == 0
    [shard] = shards.read_manifest(out)["shards"]
    assert pq.ParquetFile(out / shard["file"]).num_row_groups == -(-len(expected) // 3)
    assert [c.as_dict() for c in shards.read_chunk_folder(out)] == expected
    taken = list(shards.read_chunk_folder(out))
    with shards.ShardWriter(tmp_path / "one.parquet") as writer:
        writer.take(taken)
    assert taken == [] and writer.rows == len(expected)


def test_the_jsonl_is_written_one_document_at_a_time(tmp_path, corpus, config_file):
    """``chunk_to_jsonl`` reads the next document only once the chunks of the one before are
    written to the temporary file."""
    from chunkproof import load_config
    from chunkproof.chunking.apply import chunk_to_jsonl

    docs = list(load_corpus(corpus))
    out = tmp_path / "chunks.jsonl"
    seen: list[int] = []

    def lazily():
        for doc in docs:
            written = [p for p in tmp_path.iterdir() if p.name.startswith(".chunks.jsonl.")]
            seen.append(sum(len(p.read_text(encoding="utf-8").splitlines()) for p in written))
            yield doc

    count = chunk_to_jsonl(lazily(), load_config(config_file), out)
    assert count == len(out.read_text(encoding="utf-8").splitlines())
    assert seen[0] == 0 and all(b > a for a, b in zip(seen, seen[1:], strict=False))


def test_a_chunk_folder_is_replaced_whole_and_nothing_is_left_beside_it(tmp_path, corpus,
                                                                       config_file):
    out = tmp_path / "chunks"
    assert chunk(corpus, config_file, f"{out}/") == 0
    other = save_config(make_config(strategy="rct", size=300), tmp_path / "other.yaml")
    assert chunk(corpus, other, f"{out}/") == 0
    assert shards.read_manifest(out)["config"]["strategy"] == "rct"
    assert {r["strategy"] for r in folder_rows(out)} == {"rct"}
    assert {p.name for p in tmp_path.iterdir()} == {
        "chunks", "chosen_config.yaml", "corpus", "other.yaml"}


def test_a_folder_of_other_files_is_refused_and_kept(tmp_path, corpus, config_file, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    assert chunk(corpus, config_file, f"{out}/") == 2
    err = capsys.readouterr().err
    assert "not a chunk folder" in err and len(err.splitlines()) == 1
    assert [p.name for p in out.iterdir()] == ["notes.md"]


def test_a_corpus_of_bad_files_makes_no_folder(tmp_path, config_file, capsys):
    corpus = tmp_path / "bad"
    corpus.mkdir()
    (corpus / "broken.md").write_bytes(BROKEN)
    assert chunk(corpus, config_file, f"{tmp_path / 'chunks'}/") == 2
    assert "holds no documents" in capsys.readouterr().err
    assert {p.name for p in tmp_path.iterdir()} == {"bad", "chosen_config.yaml"}


@pytest.mark.parametrize("args, message", [
    (["--engine", "ray", "--out", "{tmp}/chunks.jsonl"], "end --out with /"),
    (["--address", "auto", "--out", "{tmp}/chunks.jsonl"], "give it with --engine ray"),
])
def test_engine_options_that_do_not_fit_are_one_line(tmp_path, corpus, config_file, capsys,
                                                     args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    assert main(["chunk", "--corpus", str(corpus), "--config", str(config_file), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_ray_missing_is_one_line(tmp_path, corpus, config_file, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    assert chunk(corpus, config_file, f"{tmp_path / 'chunks'}/", "--engine", "ray") == 2
    err = capsys.readouterr().err
    assert "needs the optional extra 'ray'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "chunks").exists()


@pytest.mark.needs("ray")
@pytest.mark.parametrize("address", ["127.0.0.1:1", "no port", "ray://127.0.0.1:1"])
def test_a_bad_address_is_one_line(tmp_path, corpus, config_file, capsys, address):
    code = chunk(corpus, config_file, f"{tmp_path / 'chunks'}/", "--engine", "ray",
                 "--address", address)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"cannot join the Ray cluster at {address!r}" in err and "ray start --head" in err
    assert not (tmp_path / "chunks").exists()


@pytest.mark.slow
@pytest.mark.needs("ray")
@pytest.mark.usefixtures("local_ray")
def test_ray_data_writes_the_chunks_of_the_local_run(tmp_path, corpus, config_file, capsys,
                                                     small_shards):
    import ray

    expected, skipped_lines = reference(tmp_path, corpus, config_file, capsys)
    on_ray, local = tmp_path / "on-ray", tmp_path / "local"
    assert chunk(corpus, config_file, f"{on_ray}/", "--engine", "ray") == 0
    ours = ("skipped ", "warning ", "chunkproof: ")  # (Ray Data logs too)
    reported = [line for line in capsys.readouterr().err.splitlines() if line.startswith(ours)]
    # bad, oversized, unsupported files and the load's warnings: reported as the local run does
    assert reported == skipped_lines.splitlines()
    assert_same_chunks(expected, folder_rows(on_ray))
    assert chunk(corpus, config_file, f"{local}/") == 0
    made, made_here = shards.read_manifest(on_ray), shards.read_manifest(local)
    assert made["engine"] == "ray" and len(made["shards"]) > 1
    assert {**made, "engine": "local"} == made_here
    for shard in made["shards"]:  # the same bytes, whoever wrote them
        assert (on_ray / shard["file"]).read_bytes() == (local / shard["file"]).read_bytes()
    assert ray.is_initialized()  # a running instance is joined, not shut down
