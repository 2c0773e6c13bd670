"""Retrievers over chunks' embed text: BM25 (default), dense with an embedding cache, hybrid RRF."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ...chunking.embedder import Embedder, choose, embedder_choice
from ...chunking.encoder import embedding_model
from ...chunking.sizes import ENCODER, counts_in_model, tokenizer_choice
from ...errors import CacheWarning, RetrieverError, UnknownRetrieverError
from ...util.cache import cache_root
from ...util.code_version import code_version, package_version
from ...util.content_cache import ContentCache, digest, move_aside, text_value
from ...util.progress import progress_bar, redraws
from ..queries.query_terms import stemmer

RRF_K = 60
Hits = list[tuple[str, float]]


@runtime_checkable
class Retriever(Protocol):
    """Index chunks once, then rank them for many queries."""

    name: str

    def index(self, chunks: list) -> None:
        """Index ``chunk.embed_text`` of every chunk (replacing any earlier index)."""

    def search(self, queries: list[str], k: int) -> list[Hits]:
        """For each query, up to ``k`` (chunk id, score) pairs, best first."""


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first; ties broken by lower index."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if k < len(scores):
        kth = np.partition(-scores, k - 1)[k - 1]
        candidates = np.flatnonzero(-scores <= kth)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise RetrieverError(f"k must be a positive integer, got {k!r}")


# Runs of Han, kana and Hangul: these scripts write words without spaces between them.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")


def cjk_bigrams(text: str) -> str:
    """Each CJK run becomes its overlapping character bigrams, separated by spaces, so a
    word tokenizer can match Japanese or Chinese text (English text is left as it is, an ASCII
    text without a look)."""
    if text.isascii():
        return text
    return _CJK_RUN.sub(lambda m: " ".join(m[0][i : i + 2] for i in range(len(m[0]) - 1)), text)


def _stored_terms(found: Iterator[object]) -> list[str]:
    """A text's terms as ``TOKENS`` keeps them (joined by spaces), split once per text."""
    return text_value(found).split()


TOKENS = ContentCache("bm25-tokens", decode=_stored_terms)
"""BM25 tokenisations of earlier runs, by text and ``tokenizer_version``."""


@functools.cache
def tokenizer_version() -> str:
    """What a text's BM25 tokens depend on besides the text: chunkproof's code, bm25s and the
    stemmer (their versions), English stop words and stemming."""
    return (f"{code_version()} bm25s {package_version('bm25s')} "
            f"PyStemmer {package_version('PyStemmer')} stopwords=en stemmer=english")


QUERY_TERMS: dict[str, list[str]] = {}
"""The terms of the query texts this process searched last (``Retriever.search``): a sweep
searches the same queries once per config."""


def query_terms(queries: list[str]) -> list[list[str]]:
    """``lexical_terms`` of ``queries``, kept for the next search of the same query texts."""
    missing = [q for q in dict.fromkeys(queries) if q not in QUERY_TERMS]
    if missing:
        if len(QUERY_TERMS) + len(missing) > MAX_QUERY_TERMS:
            QUERY_TERMS.clear()
        QUERY_TERMS.update(zip(missing, lexical_terms(missing), strict=True))
    return [QUERY_TERMS[q] for q in queries]


MAX_QUERY_TERMS = 100_000
"""Query texts whose terms ``QUERY_TERMS`` keeps at most (emptied when more come)."""


def lexical_terms(texts: list[str]) -> list[list[str]]:
    """Each text's terms as the BM25 retriever indexes and queries them (bm25s's tokenizer
    over ``cjk_bigrams`` of the text, English stop words dropped, PyStemmer's English stems),
    read from ``TOKENS`` where an earlier run made them (kept joined by spaces: a token is a
    run of word characters)."""
    if not texts:
        return []
    if TOKENS.disabled:
        return _tokenize(texts)
    keys = [digest(tokenizer_version(), text) for text in texts]
    found = TOKENS.get_many(keys)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        where = dict(zip(keys, texts, strict=True))
        made = dict(zip(missing, _tokenize([where[k] for k in missing]), strict=True))
        TOKENS.put_many({k: " ".join(tokens) for k, tokens in made.items()})
        return [made[k] if k in made else found[k] for k in keys]
    return [found[k] for k in keys]


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize([cjk_bigrams(t) for t in texts], stopwords="en", stemmer=stemmer(),
                          return_ids=False, show_progress=False)


class BM25Retriever:
    """bm25s over English-stemmed tokens without stop words; zero-score chunks are not returned."""

    name = "bm25"

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        import bm25s

        self._bm25s = bm25s
        self.params = {"k1": k1, "b": b, "method": method}
        self.ids: list[str] | None = None
        self.model: Any = None

    def index(self, chunks: list) -> None:
        self.ids = [c.id for c in chunks]
        self.model = None
        if chunks:
            self.model = self._bm25s.BM25(**self.params)
            self.model.index(lexical_terms([c.embed_text for c in chunks]), show_progress=False)

    def scores(self, query: list[str]) -> np.ndarray:
        """BM25 score of every indexed chunk for one tokenised query."""
        known = [t for t in query if t in self.model.vocab_dict]
        if not known:
            return np.zeros(len(self.ids or ()), dtype=np.float32)
        return self.model.get_scores(known)

    def search(self, queries: list[str], k: int) -> list[Hits]:
        _check_k(k)
        if self.ids is None:
            raise RetrieverError("bm25: search() called before index()")
        if self.model is None:
            return [[] for _ in queries]
        ids = np.asarray(self.ids, dtype=object)
        results = []
        for tokens in query_terms(list(queries)):
            scores = self.scores(tokens)
            best = top_k(scores, k)
            best = best[scores[best] > 0]
            results.append(list(zip(ids[best].tolist(), scores[best].tolist(), strict=True)))
        return results


def default_cache_dir() -> Path:
    """``embeddings/`` of the cache root (``util.cache``): ``$CHUNKPROOF_CACHE/embeddings``, else
    ``$XDG_CACHE_HOME/chunkproof/embeddings``, else ``~/.cache/chunkproof/embeddings``."""
    return cache_root() / "embeddings"


class EmbeddingCache:
    """Vectors keyed by (model name, sha256 of the text) in one sqlite file per model, each
    stored with its model id, dimension and checksum. A vector that fails any of the three,
    or a file sqlite cannot read, is reported in one line (CacheWarning), the file moved
    aside and the cache rebuilt: nothing is served that was not written for this model.
    A cache that cannot be written (a read-only or full disk) is reported and left unused."""

    LAYOUT = 2
    """``PRAGMA user_version`` of the current layout (1: vectors without checks)."""

    def __init__(self, directory: str | os.PathLike, model: str):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        slug = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
        self.path = self.directory / f"{slug}.sqlite"
        self.model = model
        self.disabled = ""
        """Why the cache is not used (it cannot be written), else ""."""
        self._guard(self._open)

    def _open(self) -> None:
        with self._connect() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            old = db.execute("SELECT name FROM sqlite_master WHERE name = 'vectors'").fetchone()
            if old and version != self.LAYOUT:
                raise _Unsound(f"written in an older layout (layout {version or 1}, no "
                               "checksums)")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, "
                       "model TEXT NOT NULL, dim INTEGER NOT NULL, checksum TEXT NOT NULL, "
                       "vec BLOB NOT NULL)")
            db.execute(f"PRAGMA user_version = {self.LAYOUT}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        try:
            with db:  # commits, or rolls back on error
                yield db
        finally:
            db.close()

    def _guard(self, action: Callable[[], Any], default: Any = None) -> Any:
        """Run ``action``; an unsound or unreadable file is moved aside and rebuilt (then
        ``default`` is returned), a cache that cannot be written is reported and disabled."""
        if self.disabled:
            return default
        try:
            return action()
        except _Unsound as err:
            self._rebuild(str(err))
        except sqlite3.OperationalError as err:  # read-only, full, locked: not the file's fault
            self.disabled = f"cannot be used ({err}); vectors are embedded without it"
            _warn(f"embedding cache {self.path}: {self.disabled}")
        except sqlite3.DatabaseError as err:
            self._rebuild(f"unreadable ({err})")
        return default

    def _rebuild(self, reason: str) -> None:
        aside = move_aside(self.path)
        _warn(f"embedding cache {self.path}: {reason}; moved aside to {aside.name} and rebuilt "
              "(its texts are embedded again)")
        self._guard(self._open)

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model}\0{text}".encode()).hexdigest()

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        """The sound vectors stored for ``keys``; {} after a mismatch (the file is rebuilt)."""
        return self._guard(lambda: self._read(keys), {})

    def _read(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        dims: set[int] = set()
        with self._connect() as db:
            for start in range(0, len(keys), 500):
                batch = keys[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = db.execute("SELECT key, model, dim, checksum, vec FROM vectors WHERE key "
                                  f"IN ({marks})", batch)
                for key, model, dim, checksum, blob in rows:
                    _check_vector(model, dim, checksum, blob, self.model)
                    dims.add(dim)
                    found[key] = np.frombuffer(blob, dtype=np.float32)
            stored = {d for (d,) in db.execute("SELECT DISTINCT dim FROM vectors LIMIT 2")}
        if len(dims | stored) > 1:
            raise _Unsound(f"holds vectors of dimensions {sorted(dims | stored)} for one model "
                           "(dimension mismatch)")
        return found

    def put(self, items: dict[str, np.ndarray]) -> None:
        rows = []
        for key, vector in items.items():
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            rows.append((key, self.model, len(blob) // 4, _checksum(blob), blob))

        def write() -> None:
            with self._connect() as db:
                db.executemany("INSERT OR REPLACE INTO vectors (key, model, dim, checksum, vec) "
                               "VALUES (?, ?, ?, ?, ?)", rows)

        self._guard(write)


class _Unsound(Exception):
    """A cache file that holds what this model's cache must not serve."""


def _checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()[:16]


def _check_vector(model: str, dim: int, checksum: str, blob: bytes, expected: str) -> None:
    if model != expected:
        raise _Unsound(f"holds vectors of model {model!r} in the file of {expected!r} "
                       "(model mismatch)")
    if len(blob) != 4 * dim:
        raise _Unsound(f"holds a vector of {len(blob) // 4} values recorded as {dim} "
                       "(dimension mismatch)")
    if _checksum(blob) != checksum:
        raise _Unsound("holds a vector whose checksum does not match its values")


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)


class MemoryCache(EmbeddingCache):
    """An embedding cache held in memory: the vectors a retriever on another machine is
    handed (keys as ``EmbeddingCache.key``), and any it embeds itself."""

    def __init__(self, model: str, vectors: dict[str, np.ndarray] | None = None):
        self.model = model
        self.vectors = dict(vectors or {})

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        return {k: self.vectors[k] for k in keys if k in self.vectors}

    def put(self, items: dict[str, np.ndarray]) -> None:
        self.vectors.update(items)


EMBED_BATCHES_PER_STEP = 16
"""Encoder batches per progress update while embedding."""


class DenseRetriever:
    """Normalised sentence embeddings, exact top-k by dot product, every vector cached on disk."""

    name = "dense"

    def __init__(
        self,
        *,
        embedder: Embedder | str | os.PathLike | None = None,
        cache_dir: str | None = None,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        progress: bool | None = None,
    ):
        self.embedder = embedder if isinstance(embedder, Embedder) else (
            choose(embedder, where="dense retriever") if embedder else embedder_choice())
        """The model it embeds with (a model folder, or None: this process's choice)."""
        folder = self.embedder.path or None
        if not counts_in_model(folder):
            counted = tokenizer_choice().path or f"the bundled {ENCODER} tokenizer"
            fix = (f"give --embedder {folder} alone (sizes.use_tokenizer({folder!r})) to count "
                   "in its tokens" if folder else "its chunks were sized in another model's "
                   "tokens")
            warnings.warn(f"the dense model {folder or ENCODER} reads its own tokenizer, "
                          f"but sizes and the encoder window are counted in {counted}: {fix}",
                          RuntimeWarning, stacklevel=2)
        self.progress = progress
        """A bar counting texts embedded (with texts/s): None shows it on a terminal only."""
        self.model_name = self.embedder.cache_name()
        self.batch_size = batch_size
        self.cache = cache or EmbeddingCache(cache_dir or default_cache_dir(), self.model_name)
        self.cache_stats = {"hits": 0, "misses": 0}
        """Texts that needed no embedding (cached or repeated) and distinct texts embedded."""
        self._encoder: Any = None
        self.ids: list[str] | None = None
        self.matrix: np.ndarray | None = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._encoder is None:
            self._encoder = embedding_model(self.embedder)
        step = self.batch_size * EMBED_BATCHES_PER_STEP
        parts = []
        shown = redraws() if self.progress is None else self.progress
        with progress_bar(total=len(texts), desc="embed", unit="text", enabled=shown,
                          unit_scale=False, leave=False, mininterval=0,
                          miniters=1) as bar:  # a step: 16 batches
            for start in range(0, len(texts), step):
                part = texts[start : start + step]
                parts.append(self._encoder.embed(part, self.batch_size))
                bar.update(len(part))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (rows in order); each distinct text is embedded once ever."""
        keys = [self.cache.key(t) for t in texts]
        found = self.cache.get(list(dict.fromkeys(keys)))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        self.cache_stats["hits"] += len(keys) - len(missing)
        self.cache_stats["misses"] += len(missing)
        if missing:
            fresh = dict(zip(missing, self._encode(list(missing.values())), strict=True))
            self.cache.put(fresh)
            found.update(fresh)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def index(self, chunks: list) -> None:
        self.ids = [c.id for c in chunks]
        self.matrix = self.embed([c.embed_text for c in chunks]) if chunks else None

    def search(self, queries: list[str], k: int) -> list[Hits]:
        _check_k(k)
        if self.ids is None:
            raise RetrieverError("dense: search() called before index()")
        if self.matrix is None or not queries:
            return [[] for _ in queries]
        scores = self.embed(list(queries)) @ self.matrix.T
        return [
            [(self.ids[i], float(row[i])) for i in top_k(row, k)] for row in scores
        ]


class HybridRetriever:
    """Reciprocal-rank fusion (k=60) of BM25 and dense rankings."""

    name = "hybrid"

    def __init__(self, *, depth: int = 100, rrf_k: int = RRF_K, **dense_opts):
        self.depth = depth
        self.rrf_k = rrf_k
        self.bm25 = BM25Retriever()
        self.dense = DenseRetriever(**dense_opts)
        self.order: dict[str, int] = {}

    @property
    def cache_stats(self) -> dict:
        return self.dense.cache_stats

    def index(self, chunks: list) -> None:
        self.order = {c.id: i for i, c in enumerate(chunks)}
        self.bm25.index(chunks)
        self.dense.index(chunks)

    def search(self, queries: list[str], k: int) -> list[Hits]:
        _check_k(k)
        depth = max(k, self.depth)
        lexical = self.bm25.search(queries, depth)
        semantic = self.dense.search(queries, depth)
        return [self.fuse([a, b], k) for a, b in zip(lexical, semantic, strict=True)]

    def fuse(self, rankings: list[Hits], k: int) -> Hits:
        """RRF: sum of 1/(rrf_k + rank) over the rankings (rank 1-based); ties by index order."""
        fused: dict[str, float] = {}
        for ranking in rankings:
            for rank, (chunk_id, _) in enumerate(ranking, start=1):
                fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (self.rrf_k + rank)
        best = sorted(fused.items(), key=lambda item: (-item[1], self.order.get(item[0], 0)))
        return best[:k]


RETRIEVERS: dict[str, Callable[..., Retriever]] = {
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
    "hybrid": HybridRetriever,
}


def retriever_names() -> list[str]:
    """The retrievers ``make_retriever`` makes: bm25, dense, hybrid (the last two need the
    dense extra)."""
    return list(RETRIEVERS)


def make_retriever(name: str = "bm25", **opts) -> Retriever:
    """A new retriever by registry name; options go to its constructor."""
    if name not in RETRIEVERS:
        raise UnknownRetrieverError(name, retriever_names())
    return RETRIEVERS[name](**opts)
