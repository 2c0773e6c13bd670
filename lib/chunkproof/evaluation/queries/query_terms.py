"""Terms as the BM25 retriever sees them (bm25s's tokenizer, English stop words dropped,
PyStemmer's English stems), their rarity across a corpus's sections, and a text with chosen
terms removed."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=1)
def stemmer():
    """PyStemmer's English stemmer, made once: the one the BM25 retriever and these terms use."""
    import Stemmer

    return Stemmer.Stemmer("english")


def surface_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Each text's words as bm25s tokenizes them for BM25 (lowercased, stop words dropped),
    not stemmed."""
    import bm25s

    if not texts:
        return []
    return bm25s.tokenize(list(texts), stopwords="en", stemmer=None, return_ids=False,
                          show_progress=False)


def stems(words: Iterable[str]) -> list[str]:
    """The English stems of ``words`` (lowercased tokens), the retriever's stemmer."""
    return list(stemmer().stemWords(list(words)))


def terms(text: str) -> list[tuple[str, str]]:
    """(surface word, stem) of each BM25 term of ``text``, in order."""
    words = surface_tokens([text])[0]
    return list(zip(words, stems(words), strict=True))


def stem_set(texts: Iterable[str]) -> frozenset[str]:
    """Every stem of every text."""
    texts = [t for t in texts if t]
    return frozenset(s for words in surface_tokens(texts) for s in stems(words))


def without_terms(text: str, banned: frozenset[str]) -> str:
    """``text`` with each whitespace-separated word dropped that holds a banned stem (its
    punctuation goes with it) or no word character, the rest in order, single-spaced."""
    words = [w for w in text.split() if any(ch.isalnum() for ch in w)]
    kept = []
    for word, found in zip(words, surface_tokens(words), strict=True):
        if not banned.intersection(stems(found)):
            kept.append(word)
    return " ".join(kept)


@dataclass(frozen=True, slots=True)
class Rarity:
    """Inverse document frequency of each stem over a corpus's sections (the text from one
    heading to the next, and a document's text before its first heading)."""

    df: dict[str, int]
    sections: int

    def idf(self, stem: str) -> float:
        """log(N / df); a stem never seen counts as seen once."""
        return math.log(self.sections / max(self.df.get(stem, 0), 1))


def rarity(texts: Iterable[str]) -> Rarity:
    """Section frequencies of every stem of ``texts`` (a site's sections)."""
    texts = list(texts)
    df: Counter[str] = Counter()
    for words in surface_tokens(texts):
        df.update(set(stems(words)))
    return Rarity(dict(df), max(len(texts), 1))
