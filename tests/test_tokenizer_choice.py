"""Sizes and the encoder window in another model's tokens: any tokenizer.json (or a
sentence-transformers model folder holding one), chosen for the whole process."""

from __future__ import annotations

import json

import pytest

from chunkproof import cli
from chunkproof.chunking import sizes
from chunkproof.chunking.build import chunk_text
from chunkproof.chunking.config import make_config
from chunkproof.errors import ConfigError

pytest.importorskip("tokenizers", reason="another tokenizer is read by the tokenizers package")

TEXT = ("# Guide\n\nInstall the package, then configure it. " * 3
        + "\n\n## Options\n\nEvery option has a default; set the ones you need.\n")


@pytest.fixture(autouse=True)
def bundled():
    """Each test starts, and leaves, with the bundled tokenizer."""
    sizes.use_tokenizer(None)
    yield
    sizes.use_tokenizer(None)


def word_level(path, vocab=("install", "the", "package,")) -> str:
    """A tokenizer.json splitting at whitespace only, one token per word: sizes in its tokens
    are word counts."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, **{w: n + 1 for n, w in enumerate(vocab)}},
                                     unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(path))
    return str(path)


def byte_level(path) -> str:
    """A small byte-level BPE (GPT-2's kind of pre-tokenizer: a word's leading space is part
    of its first token, so counts made word by word would be wrong)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([TEXT] * 5, trainer)
    tok.save(str(path))
    return str(path)


def test_sizes_are_counted_in_the_chosen_tokenizer_s_tokens(tmp_path):
    before = sizes.count_tokens(["Install the package, then configure it."])
    sizes.use_tokenizer(word_level(tmp_path / "tokenizer.json"))
    assert sizes.count_tokens(["Install the package, then configure it."]) == [6] != before
    chunks = chunk_text(TEXT, make_config(strategy="ast_merge", size=12, unit="tokens"))
    assert chunks and all(c.n_tokens == c.n_words <= 12 for c in chunks)
    assert sizes.tokenizer_choice().path.endswith("tokenizer.json")


def test_a_tokenizer_whose_words_do_not_add_up_is_counted_whole(tmp_path):
    sizes.use_tokenizer(byte_level(tmp_path / "bpe.json"))
    assert not sizes.words_add_up()
    texts = [TEXT, "Install the package,  then\n\nconfigure it.", "x"]
    whole = [len(sizes.tokenizer().encode(t, add_special_tokens=False).ids) for t in texts]
    assert sizes.count_tokens(texts) == whole
    assert [s[2] for s in sizes.all_sizes(texts)] == whole


def test_the_window_is_given_or_read_from_a_model_folder(tmp_path):
    assert sizes.encoder_window() == sizes.ENCODER_WINDOW
    sizes.use_tokenizer(None, window=512)
    assert sizes.encoder_window() == 512
    model = tmp_path / "model"
    model.mkdir()
    word_level(model / "tokenizer.json")
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 384}))
    sizes.use_tokenizer(str(model))
    assert sizes.encoder_window() == 384 and sizes.count_tokens(["a b"]) == [2]
    sizes.use_tokenizer(str(model), window=128)
    assert sizes.encoder_window() == 128


@pytest.mark.parametrize("make, message", [
    (lambda p: str(p / "missing.json"), "no such file"),
    (lambda p: (p / "bad.json").write_text("{not json") and str(p / "bad.json"),
     "not a tokenizer file"),
    (lambda p: str(p), "holds no tokenizer.json"),
])
def test_a_missing_or_bad_file_is_one_line(tmp_path, make, message):
    with pytest.raises(ConfigError, match=message) as err:
        sizes.use_tokenizer(make(tmp_path))
    assert "\n" not in str(err.value)
    assert sizes.tokenizer_choice().path == ""  # the bundled one is kept


def test_a_bad_window_is_one_line():
    with pytest.raises(ConfigError, match="encoder window"):
        sizes.use_tokenizer(None, window=0)


def test_the_cli_chunks_in_the_tokenizer_s_tokens_and_says_what_is_wrong(tmp_path, capsys):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "guide.md").write_text(TEXT, encoding="utf-8")
    tok = word_level(tmp_path / "tokenizer.json")
    out = tmp_path / "chunks.jsonl"
    assert cli.main(["chunk", "--corpus", str(corpus), "--strategy", "ast_merge", "--unit",
                     "tokens", "--size", "12", "--tokenizer", tok, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["n_tokens"] == r["n_words"] for r in rows)
    code = cli.main(["chunk", "--corpus", str(corpus), "--strategy", "ast_merge",
                     "--tokenizer", str(tmp_path / "no.json"),
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--tokenizer" in err


def test_a_sweep_records_the_tokenizer_and_chunk_config_uses_it(tmp_path, capsys):
    from chunkproof.evaluation.choice.choose import ChoiceRule, choose
    from chunkproof.evaluation.choice.export import export_choice
    from chunkproof.evaluation.run.runs import SweepParams
    from chunkproof.evaluation.run.sweep import run_sweep
    from conftest import FIXTURES

    mini = FIXTURES / "mini_corpus"
    tok = word_level(tmp_path / "tokenizer.json")
    sizes.use_tokenizer(tok, window=64)
    params = SweepParams(corpus=str(mini), queries=str(mini / "queries.jsonl"),
                         strategies=("ast_merge",), sizes=(40, 80), unit="tokens")
    result = run_sweep(params, tmp_path / "run", progress=False)
    recorded = result.run_info["tokenizer"]
    assert recorded["encoder_window"] == 64 and recorded["tokenizer"].endswith("tokenizer.json")
    chunks = result.chunks
    assert (chunks["n_tokens"] == chunks["n_words"]).all()
    exported = export_choice(choose(result, ChoiceRule(primary_metric="hit@5"), study=None),
                             tmp_path / "chosen_config.yaml")
    sizes.use_tokenizer(None)  # a fresh process: the bundled tokenizer until the file says
    out = tmp_path / "chunks.jsonl"
    assert cli.main(["chunk", "--corpus", str(mini), "--config", str(exported),
                     "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == chunks[chunks["config_id"] == rows[0]["config_id"]][
        "id"].tolist()
    assert all(r["n_tokens"] == r["n_words"] for r in rows)
    assert sizes.tokenizer_choice().window == 64


def test_a_named_dense_model_s_own_tokenizer_is_the_one_to_count_in(tmp_path):
    from chunkproof.evaluation.retrieval.retrieve import DenseRetriever

    model = tmp_path / "my-model"
    model.mkdir()
    word_level(model / "tokenizer.json")
    with pytest.warns(RuntimeWarning, match="reads its own tokenizer"):
        DenseRetriever(model_path=str(model), cache_dir=str(tmp_path / "cache"))
    sizes.use_tokenizer(str(model))
    assert sizes.counts_in_model(str(model)) and not sizes.counts_in_model(None)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DenseRetriever(model_path=str(model), cache_dir=str(tmp_path / "cache"))
    sizes.use_tokenizer(None)
    assert sizes.counts_in_model(None) and sizes.counts_in_model(str(sizes.model_dir()))
