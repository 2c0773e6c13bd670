"""Your own embedding model: a local sentence-transformers folder (or an ONNX export of one)
that dense retrieval embeds with, whose tokenizer and window sizes are counted in unless
others are given, and whose name and digest key the embedding cache and the scored parts and
are recorded in run.json and chosen_config.yaml. The model is one the test builds itself
(tests/tiny_model.py): nothing is fetched."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from chunkproof.chunking import embedder, sizes
from chunkproof.chunking.config import recorded_embedder
from chunkproof.cli import main
from chunkproof.errors import ConfigError
from chunkproof.evaluation.choice.choose import choose
from chunkproof.evaluation.choice.export import export_choice
from chunkproof.evaluation.choice.rules import ChoiceRule
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from tiny_model import tiny_model

pytest.importorskip("tokenizers", reason="a model's tokenizer is read by the tokenizers package")

SECTION = ("The sync client (v2.4) reads `sync.yaml`, opens 3 sockets, and retries: "
           "wait=900; backoff=2.5; jitter=0.1; see [docs](a.md#b), {x: 1, y: 2}. ")
"""Text dense in tokens (numbers, punctuation, markup): a 1200-char chunk of it is longer
than the bundled model's 256-token window."""


@pytest.fixture(autouse=True)
def bundled(monkeypatch, tmp_path):
    """Each test starts, and leaves, with the bundled model and tokenizer, and an embedding
    cache of its own."""
    monkeypatch.setenv("CHUNKPROOF_CACHE", str(tmp_path / "cache"))
    embedder.use_embedder(None)
    yield
    embedder.use_embedder(None)


def write_corpus(folder):
    folder.mkdir()
    for page in range(3):
        body = "\n\n".join(f"## Part {part}\n\n" + SECTION * 12 for part in range(3))
        (folder / f"page{page}.md").write_text(f"# Page {page}\n\n{body}\n", encoding="utf-8")
    queries = [{"id": f"q{page}", "query": f"How long does page {page} sync wait?",
                "sources": [f"page{page}.md"]} for page in range(3)]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny model over the corpus's words, reading 1024 tokens."""
    pytest.importorskip("sentence_transformers", reason="the model is built with it")
    folder = tmp_path_factory.mktemp("models") / "tiny-embedder"
    return tiny_model(folder, [SECTION, "Page Part How long does sync wait ?"], window=1024)


def fake_model(folder, *, model_max_length=8192, positions=512):
    """A folder that says what a model folder says (no weights: nothing is loaded)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir()
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "sync": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    (folder / "modules.json").write_text("[]")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"model_max_length": model_max_length}))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": positions}))
    return folder


def test_a_model_folder_gives_its_tokenizer_window_name_and_digest(tmp_path):
    folder = fake_model(tmp_path / "my-model")
    chosen = embedder.use_embedder(str(folder))
    assert (chosen.name, chosen.window, chosen.runtime) == ("my-model", 512, "torch")
    assert sizes.tokenizer_choice().file == str(folder.resolve() / "tokenizer.json")
    assert sizes.encoder_window() == 512  # the tokenizer's 8192 held to 512 positions
    assert chosen.cache_name() == f"my-model-{chosen.digest}"
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 2048}))
    again = embedder.choose(str(folder))
    assert again.digest != chosen.digest and again.window == 2048
    embedder.use_embedder(str(folder), window=300)  # given: it wins
    assert sizes.encoder_window() == 300
    assert embedder.embedder_choice().as_dict()["digest"] == again.digest


def test_the_environment_carries_the_model_to_the_processes_started(tmp_path, monkeypatch):
    folder = fake_model(tmp_path / "m")
    embedder.use_embedder(str(folder))
    import os

    assert os.environ[embedder.EMBEDDER_ENV] == str(folder.resolve())
    embedder._CHOICE.clear()  # as a fresh process sees it
    assert embedder.embedder_choice().path == str(folder.resolve())
    monkeypatch.setenv(embedder.EMBEDDER_ENV, str(tmp_path / "gone"))
    embedder._CHOICE.clear()
    with pytest.raises(ConfigError, match="CHUNKPROOF_EMBEDDER"):
        embedder.embedder_choice()
    embedder._CHOICE[:] = [embedder.Embedder()]


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p / "missing", "no such folder"),
    (lambda p: (p / "file.json").write_text("{}") and p / "file.json", "a file, not a folder"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "holds no modules.json"),
])
def test_a_folder_that_is_no_model_is_one_line_and_changes_nothing(tmp_path, make, message):
    with pytest.raises(ConfigError, match=message) as err:
        embedder.use_embedder(str(make(tmp_path)))
    assert "--embedder" in str(err.value) and "\n" not in str(err.value)
    assert embedder.embedder_choice().bundled and sizes.tokenizer_choice().path == ""


def test_the_cli_refuses_a_bad_embedder_in_one_line(tmp_path, capsys):
    code = main(["sweep", "--corpus", "data/sample", "--mine-queries", "--embedder",
                 str(tmp_path / "nope"), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--embedder" in err


def test_an_onnx_export_without_its_tokenizer_is_refused(tmp_path):
    folder = tmp_path / "onnx-model"
    (folder / "onnx").mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    (folder / "onnx" / "model.onnx").write_bytes(b"graph")
    with pytest.raises(ConfigError, match="holds no tokenizer.json"):
        embedder.choose(str(folder))


def sweep(corpus, out, retriever="dense"):
    params = SweepParams(corpus=str(corpus), queries=str(corpus / "queries.jsonl"),
                         strategies=("rct",), sizes=(300, 1200), retrievers=(retriever,),
                         budgets=(512,), contrasts=())
    return run_sweep(params, out, progress=False)


ENCODER_RULE = ChoiceRule(primary_metric="hit@b512", retriever="dense",
                          constraints=("over_encoder_limit <= 0.05",), )


@pytest.mark.needs("dense")
def test_a_dense_sweep_embeds_with_the_model_its_window_lets_long_chunks_in(tmp_path, model):
    corpus = write_corpus(tmp_path / "docs")
    bundled = sweep(corpus, tmp_path / "bundled")
    long = bundled.chunk_stats.set_index("size")["over_encoder_limit"]
    assert long[1200] > 0.05  # past the bundled model's 256 tokens
    shut_out = choose(bundled, ENCODER_RULE)
    assert any("size 1200" in e or "1200" in e for e in shut_out.excluded)

    chosen = embedder.use_embedder(str(model))
    mine = sweep(corpus, tmp_path / "mine")
    assert mine.chunk_stats.set_index("size")["over_encoder_limit"][1200] == 0.0
    assert choose(mine, ENCODER_RULE).excluded == []
    recorded = mine.run_info["embedder"]
    assert (recorded["name"], recorded["digest"], recorded["window"]) == (
        "tiny-embedder", chosen.digest, 1024)
    assert mine.run_info["tokenizer"]["encoder_window"] == 1024
    assert mine.run_info["embedding_cache"]["misses"] > 0
    cache = tmp_path / "cache" / "embeddings" / f"tiny-embedder-{chosen.digest}.sqlite"
    assert cache.is_file()
    ranked = mine.retrieved.groupby("query_id")["chunk_id"].first()
    assert set(ranked.index) == {"q0", "q1", "q2"}

    path = export_choice(choose(mine, ENCODER_RULE), tmp_path / "mine")
    written = yaml.safe_load(path.read_text())
    assert written["embedder"]["digest"] == chosen.digest
    assert written["embedder"]["name"] == "tiny-embedder"
    assert recorded_embedder(path) == str(model.resolve())

    embedder.use_embedder(None)  # a fresh process: the gate embeds with what the file records
    out = tmp_path / "gate.json"
    assert main(["gate", "--corpus", str(corpus), "--queries", str(corpus / "queries.jsonl"),
                 "--baseline", str(path), "--candidate", str(path), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["retriever"] == "dense"
    assert summary["context"]["embedder"]["digest"] == chosen.digest


@pytest.mark.needs("dense")
def test_scored_parts_are_keyed_by_the_model(tmp_path, model):
    corpus = write_corpus(tmp_path / "docs")
    embedder.use_embedder(str(model))
    sweep(corpus, tmp_path / "run")
    again = sweep(corpus, tmp_path / "run")
    assert again.run_info["reused_parts"] == 4  # 2 configs: chunks and scores
    other = tmp_path / "other-model"
    shutil.copytree(model, other)
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    embedder.use_embedder(str(other))  # the same tokenizer: the same sizes
    moved = sweep(corpus, tmp_path / "run")
    assert moved.run_info["reused_parts"] == 2  # the chunks only: the scores are the model's
    assert moved.run_info["embedder"]["digest"] != again.run_info["embedder"]["digest"]


@pytest.mark.needs("dense")
def test_the_cli_sweeps_with_the_model_and_counts_in_its_tokens(tmp_path, model, capsys):
    corpus = write_corpus(tmp_path / "docs")
    out = tmp_path / "run"
    assert main(["sweep", "--corpus", str(corpus), "--queries", str(corpus / "queries.jsonl"),
                 "--strategies", "rct", "--sizes", "1200", "--retrievers", "dense,hybrid",
                 "--budgets", "512", "--embedder", str(model), "--out", str(out)]) == 0
    info = json.loads((out / "run.json").read_text())
    assert info["embedder"]["name"] == "tiny-embedder"
    assert info["tokenizer"]["tokenizer"].endswith("tiny-embedder")
    assert info["tokenizer"]["encoder_window"] == 1024


@pytest.mark.needs("dense")
def test_the_notebook_parameter_chooses_the_model(tmp_path, model):
    from chunkproof.notebooks import strategy_sweep
    from chunkproof.notebooks.report import notebook_values

    corpus = write_corpus(tmp_path / "docs")
    setup = strategy_sweep.validate(
        CORPUS=str(corpus), QUERIES=str(corpus / "queries.jsonl"), STRATEGIES=["rct"],
        SIZES=[1200], RETRIEVERS=["dense"], METRICS=["hit@5"], OUT_DIR=str(tmp_path / "run"),
        EMBEDDER=str(model))
    assert embedder.embedder_choice().path == str(model.resolve())
    assert sizes.encoder_window() == 1024
    values = notebook_values(tmp_path / "run", setup.params, queries=setup.params.queries)
    assert values["EMBEDDER"] == str(model.resolve())  # what the report hands its notebooks
    with pytest.raises(ConfigError, match="EMBEDDER"):
        strategy_sweep.validate(CORPUS=str(corpus), QUERIES="", STRATEGIES=["rct"],
                                SIZES=[1200], RETRIEVERS=["dense"], METRICS=["hit@5"],
                                OUT_DIR=str(tmp_path / "run2"),
                                EMBEDDER=str(tmp_path / "docs"))


@pytest.mark.needs("dense")
def test_an_adapter_sizes_in_the_model_s_tokens(tmp_path, model):
    from chunkproof.integrations.common import as_config

    config = as_config({"strategy": "rct", "size": 40, "unit": "tokens"}, embedder=str(model))
    assert config.unit == "tokens" and sizes.tokenizer_choice().path == str(model.resolve())
    assert sizes.measure("sync wait", "tokens") == 2
    embedder.use_embedder(None)
    saved = tmp_path / "chosen_config.yaml"
    from chunkproof.chunking.config import save_config

    save_config(config, saved, tokenizer={"tokenizer": str(model), "encoder_window": 1024})
    as_config(str(saved))  # the tokenizer the run counted in: the chunks it scored
    assert sizes.tokenizer_choice().path == str(model.resolve())


@pytest.mark.needs("dense")
def test_an_onnx_export_embeds_as_the_model_does(tmp_path, model):
    import numpy as np

    from chunkproof.chunking.encoder import embedding_model
    from chunkproof.chunking.onnx_encoder import export

    folder = tmp_path / "tiny-onnx"
    shutil.copytree(model, folder, ignore=shutil.ignore_patterns("*.safetensors"))
    (folder / "onnx").mkdir()
    export(model, folder / "onnx" / "model.onnx")
    chosen = embedder.choose(str(folder))
    assert chosen.runtime == "onnx" and chosen.window == 1024
    texts = ["How long does sync wait?", SECTION]
    onnx = embedding_model(chosen).embed(texts, 2)
    torch = embedding_model(embedder.choose(str(model))).embed(texts, 2)
    assert np.allclose((onnx * torch).sum(axis=1), 1.0, atol=1e-4)
