"""A site's evidence: every written question's 0/1 value under each config, retriever and
metric of the study, with the page it asks about and the kind of section it lies in, and what
each config's index costs. Read from the site's run; written to and read from the study's
results file as plain values, each checked when read."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ...errors import StudyError
from ..retrieval.modes import PLAIN
from ..scoring.clustered import cluster_codes

METRICS = ("answer_hit@b512", "answer_hit@b1024", "answer_hit@b2048")
"""The 0/1 metrics the study keeps per question: the answer within each reader budget."""
_CODES = {"0": 0.0, "1": 1.0, "n": np.nan}
_VALUE_TEXT = re.compile(r"^[01n]*$")


def config_key(strategy: str, size: int, unit: str = "chars", options: str | dict = "") -> str:
    """The name a config has in the study: ``strategy/size``, the unit when not chars and the
    options when any (``ast_merge/600``, ``rct/256 tokens``, ``rct/600 {"overlap": 50}``)."""
    text = options if isinstance(options, str) else json.dumps(options, sort_keys=True)
    extra = "" if text in ("", "{}") else f" {text}"
    unit_text = "" if unit == "chars" else f" {unit}"
    return f"{strategy}/{int(size)}{unit_text}{extra}"


def pair_name(retriever: str, metric: str) -> str:
    return f"{retriever} {metric}"


@dataclass(frozen=True)
class SiteEvidence:
    """One site's written questions: their ids, pages and section kinds, each (retriever,
    metric)'s questions x configs table of 0/1 values (NaN: not scored), and each config's
    index tokens and top-k bundle."""

    name: str
    questions: tuple[str, ...]
    pages: tuple[str, ...]
    kinds: tuple[str, ...]
    values: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    index_tokens: dict[str, int] = field(default_factory=dict)
    bundle_tokens: dict[str, float] = field(default_factory=dict)
    """Each config's mean top-k bundle under BM25, in tokens: the former rule's cost, kept to
    measure that rule against the new one."""

    @cached_property
    def page_codes(self) -> np.ndarray:
        """Each question's page as a cluster number (``clustered.cluster_codes``)."""
        return cluster_codes(self.pages)[0]

    def table(self, retriever: str, metric: str) -> pd.DataFrame:
        """questions x configs of one retriever and metric (StudyError when not studied)."""
        found = self.values.get((retriever, metric))
        if found is None:
            raise StudyError(f"site {self.name!r} has no {pair_name(retriever, metric)} values")
        return found

    def as_dict(self) -> dict:
        return {"questions": list(self.questions), "pages": list(self.pages),
                "kinds": list(self.kinds), "index_tokens": dict(sorted(self.index_tokens.items())),
                "bundle_tokens": {c: round(v, 3) for c, v in sorted(self.bundle_tokens.items())},
                "values": {pair_name(r, m): {c: _encode(frame[c]) for c in frame.columns}
                           for (r, m), frame in sorted(self.values.items())}}

    @classmethod
    def from_dict(cls, name: str, data: dict) -> SiteEvidence:
        """A site read back from ``as_dict``; StudyError naming the site and the first value
        that is not what it must be."""
        try:
            questions, pages, kinds = (tuple(str(v) for v in data[k])
                                       for k in ("questions", "pages", "kinds"))
            if not len(questions) == len(pages) == len(kinds):
                raise ValueError("questions, pages and kinds differ in length")
            values = {}
            for key, columns in data["values"].items():
                retriever, metric = key.split(" ", 1)
                values[(retriever, metric)] = pd.DataFrame(
                    {c: _decode(text, len(questions)) for c, text in columns.items()},
                    index=pd.Index(questions, name="query_id"))
            tokens = {str(c): int(v) for c, v in data["index_tokens"].items()}
            bundle = {str(c): float(v) for c, v in data["bundle_tokens"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise StudyError(f"study results: site {name!r} is malformed ({err})") from None
        return cls(name, questions, pages, kinds, values, tokens, bundle)


def _encode(values: pd.Series) -> str:
    out = []
    for v in values.to_numpy(dtype=float):
        if np.isnan(v):
            out.append("n")
        elif v in (0.0, 1.0):
            out.append(str(int(v)))
        else:
            raise StudyError(f"the study keeps 0/1 values per question; got {v}")
    return "".join(out)


def _decode(text: str, length: int) -> np.ndarray:
    if not isinstance(text, str) or not _VALUE_TEXT.match(text) or len(text) != length:
        raise ValueError(f"values must be {length} of 0, 1 or n")
    return np.array([_CODES[c] for c in text], dtype=float)


def site_evidence(name: str, run, *, metrics: Sequence[str] = METRICS,
                  bundle_tokens: dict[str, float] | None = None) -> SiteEvidence:
    """The evidence of a site's finished run of written questions (plain retrieval mode):
    every question of every kind, in the order of the run's queries; ``bundle_tokens`` by
    config id (the former rule's cost, ``candidates.bundle_tokens``)."""
    rows = run.per_query[(run.per_query["mode"] == PLAIN)
                         & run.per_query["metric"].isin(metrics)]
    keyed = rows.assign(config=[config_key(s, z, u, o) for s, z, u, o in zip(
        rows["strategy"], rows["size"], rows["unit"], rows["options"], strict=True)])
    firsts = rows.drop_duplicates("query_id")
    questions = tuple(firsts["query_id"])
    values = {}
    for (retriever, metric), group in keyed.groupby(["retriever", "metric"], sort=True):
        wide = group.pivot(index="query_id", columns="config", values="value")
        values[(retriever, metric)] = wide.reindex(index=list(questions),
                                                   columns=sorted(wide.columns))
    stats = run.chunk_stats
    keys = {i: config_key(s, z, u, o) for i, s, z, u, o in zip(
        stats["config_id"], stats["strategy"], stats["size"], stats["unit"], stats["options"],
        strict=True)}
    tokens = {keys[i]: int(t) for i, t in zip(stats["config_id"], stats["index_tokens"],
                                               strict=True)}
    bundle = {keys[i]: float(v) for i, v in (bundle_tokens or {}).items() if i in keys}
    return SiteEvidence(name, questions, tuple(firsts["source"].astype(str)),
                        tuple(firsts["query_kind"].astype(str)), values, tokens, bundle)
