"""A sentence-transformers model small enough to build in a test: a one-layer BERT of random
weights (seeded) over a vocabulary made from the words given, mean pooling and Normalize, saved
as a model folder like any downloaded one (modules.json, weights, tokenizer.json and the
``max_seq_length`` of sentence_bert_config.json). Nothing is fetched."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs("dense")
"""Everything here builds the model with torch and sentence-transformers (the tests that call
it are marked the same)."""

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
WIDTH = 16


def vocabulary(texts: Iterable[str]) -> list[str]:
    """The special tokens, then every lower-cased word and punctuation mark of ``texts``."""
    words = {w for text in texts for w in re.findall(r"\w+|[^\w\s]", text.lower())}
    return [*SPECIAL, *sorted(words)]


def tiny_model(folder: Path, texts: Iterable[str], *, window: int = 1024) -> Path:
    """Build the model in ``folder`` (reading ``window`` tokens) and return the folder."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    with warnings.catch_warnings():  # the module's new home differs between versions
        warnings.simplefilter("ignore", DeprecationWarning)
        from sentence_transformers import models

    parts = folder.parent / f"{folder.name}-parts"
    parts.mkdir(parents=True)
    vocab = parts / "vocab.txt"
    vocab.write_text("\n".join(vocabulary(texts)) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=WIDTH, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=2 * WIDTH,
                        max_position_embeddings=window)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(parts)
    tokenizer.save_pretrained(parts)
    transformer = models.Transformer(str(parts), max_seq_length=window)
    pooling = models.Pooling(WIDTH, pooling_mode="mean")
    model = SentenceTransformer(modules=[transformer, pooling, models.Normalize()], device="cpu")
    model.save(str(folder))
    return folder
