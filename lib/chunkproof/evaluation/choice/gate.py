"""The gate: a candidate config against a baseline on the same questions, at the baseline's
primary metric, retriever and budget, with the verdict's paired test; it fails when the
candidate is worse by more than a margin and the test says so."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ...chunking.build import chunk_corpus
from ...chunking.config import ChunkerConfig, load_config, read_yaml
from ...chunking.embedder import embedder_choice
from ...chunking.sizes import tokenizer_choice
from ...document.corpus import Corpus, load_corpus
from ...errors import ConfigError
from ...util.values import plain
from ..queries.queries import Query, load_queries
from ..retrieval.modes import MODES, PLAIN
from ..run.defaults import DEFAULT_K, default_primary_metric
from ..run.units import ScoreJob, score_config
from ..scoring import stats
from .rules import ChoiceRule

PASS, FAIL = 0, 1
"""The gate's exit codes (bad input is 2, as every command's)."""
_CUT = re.compile(r"^(?P<metric>[a-z_]+)@(?P<budget>b)?(?P<n>\d+)$")


@dataclass(frozen=True)
class Side:
    """One config the gate scores: the config, its retrieval mode and where it was read."""

    path: str
    config: ChunkerConfig
    mode: str = PLAIN


@dataclass
class GateResult:
    """What the gate found: the verdict, the exit code, and what it was measured on."""

    verdict: str
    """``fail`` (worse by more than the margin, significantly) or ``pass``."""
    exit_code: int
    metric: str
    retriever: str
    margin: float
    alpha: float
    baseline: dict[str, Any]
    candidate: dict[str, Any]
    test: dict[str, Any]
    """The paired test of candidate - baseline (``stats.PairedResult``) and the clusters."""
    questions: int
    pages: int
    """Source pages the questions are grouped by (the test's clusters)."""
    context: dict[str, Any] = field(default_factory=dict)
    """The corpus fingerprint, the tokenizer and dense model, chunkproof's version."""

    def as_dict(self) -> dict[str, Any]:
        return plain_json(asdict(self))

    def line(self, out: str = "") -> str:
        """The gate in one line."""
        test = self.test
        diff, low, high = test["mean_diff"], test["ci_low"], test["ci_high"]
        said = ("worse than the baseline by more than the margin" if self.verdict == "fail"
                else "not worse than the baseline by more than the margin with significance")
        return (f"gate: {self.verdict}: candidate {self.candidate['name']} is {said} "
                f"({self.metric} on {self.retriever}: {self.candidate['mean']:.3f} against "
                f"{self.baseline['mean']:.3f}, difference {diff:+.3f}, 95% interval "
                f"[{low:+.3f}, {high:+.3f}], p = {test['p_value']:.3g}, {self.questions} "
                f"questions on {self.pages} pages; margin {self.margin:g})"
                + (f" -> {out}" if out else ""))


def plain_json(value: Any) -> Any:
    """``value`` with every number a plain float or int (NaN as None)."""
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return plain(value)


def read_side(path: str | os.PathLike) -> Side:
    """The config a YAML file holds (a chosen_config.yaml, or a bare mapping of fields) and
    the retrieval mode it records (plain when none)."""
    config = load_config(path)
    data = read_yaml(path)
    mode = data.get("retrieval_mode", PLAIN) if isinstance(data, dict) else PLAIN
    if mode not in MODES:
        raise ConfigError(f"{path}: retrieval_mode must be one of {', '.join(MODES)}; got "
                          f"{mode!r}")
    return Side(str(path), config, mode)


def recorded_rule(path: str | os.PathLike, *, answers: bool) -> ChoiceRule:
    """The choice rule a chosen_config.yaml records (its primary metric, retriever and
    alpha), else the default one for questions with (``answers``) or without answers."""
    data = read_yaml(path)
    rule = data.get("rule") if isinstance(data, dict) else None
    if not isinstance(rule, dict):
        return ChoiceRule(primary_metric=default_primary_metric(answers=answers))
    kept = {k: rule[k] for k in ("primary_metric", "retriever", "alpha") if k in rule}
    try:
        return ChoiceRule(**kept)
    except ValueError as err:
        raise ConfigError(f"{path}: its rule cannot be used ({err})".replace("\n", " ")) \
            from None


def metric_cut(metric: str) -> tuple[int, tuple[int, ...]]:
    """(k, budgets) a metric name asks to be scored at: ``answer_hit@b1024`` the budget 1024
    (and the default k), ``hit@5`` k 5."""
    match = _CUT.match(metric)
    if match is None:
        raise ConfigError(f"primary metric {metric!r}: expected name@k or name@b<budget>, "
                          "e.g. answer_hit@b1024")
    n = int(match["n"])
    return (DEFAULT_K, (n,)) if match["budget"] else (n, ())


def paired_test(candidate: np.ndarray, baseline: np.ndarray, clusters: Sequence[str], *,
                alpha: float) -> dict[str, Any]:
    """The verdict's paired test of candidate - baseline over the same questions, grouped by
    source page (``clusters``): questions about one page move together, so the test and its
    interval are the cluster-aware ones the choice uses (``stats.paired_comparison``)."""
    result = stats.paired_comparison(candidate.tolist(), baseline.tolist(),
                                     confidence=1 - alpha, clusters=list(clusters))
    return {**result.as_dict(), "clusters": len(set(clusters)), "clustered": True}


def run_gate(corpus: str | os.PathLike, queries: str | os.PathLike,
             baseline: str | os.PathLike, candidate: str | os.PathLike, *,
             margin: float = 0.02) -> GateResult:
    """Score ``candidate`` and ``baseline`` (config YAML files) on ``queries`` over ``corpus``
    at the baseline's primary metric, retriever and budget, each in its own retrieval mode,
    and test the difference; the verdict is ``fail`` when the candidate's mean is below the
    baseline's by more than ``margin`` and the paired test rejects equality at the rule's
    alpha. Bad input (a file, a margin, a metric the questions cannot give) is a ConfigError
    in one line."""
    if isinstance(margin, bool) or not isinstance(margin, int | float) or \
            not 0 <= margin < 1 or margin != margin:
        raise ConfigError(f"--margin: a difference of the primary metric between 0 and 1; got "
                          f"{margin!r}")
    sides = read_side(baseline), read_side(candidate)
    docs = _corpus(corpus, sides)
    asked = load_queries(queries, docs[False])
    rule = recorded_rule(baseline, answers=any(q.answer is not None for q in asked))
    k, budgets = metric_cut(rule.primary_metric)
    values = [_scores(side, docs[side.config.infer_headings], asked, rule.retriever, k, budgets,
                      rule.primary_metric) for side in sides]
    both = values[0].keys() & values[1].keys()
    ids = [q.id for q in asked if q.id in both]
    if not ids:
        raise ConfigError(f"{rule.primary_metric}: no question of {queries} has it for both "
                          "configs (a metric of answers needs questions with answers)")
    pages = {q.id: q.sources[0] for q in asked}
    base, cand = (np.array([v[i] for i in ids], dtype=float) for v in values)
    test = paired_test(cand, base, [pages[i] for i in ids], alpha=rule.alpha)
    worse = test["mean_diff"] < -margin and test["p_value"] < rule.alpha
    return GateResult(
        "fail" if worse else "pass", FAIL if worse else PASS, rule.primary_metric,
        rule.retriever, margin, rule.alpha, _described(sides[0], base),
        _described(sides[1], cand), test, len(ids), len({pages[i] for i in ids}),
        {"corpus": docs[False].fingerprint, "tokenizer": tokenizer_choice().as_dict(),
         "embedder": embedder_choice().as_dict(),
         "chunkproof_version": metadata.version("chunkproof")})


def _corpus(path: str | os.PathLike, sides: Sequence[Side]) -> dict[bool, Corpus]:
    """The corpus read as each side's config reads it (with or without inferred headings)."""
    flags = {False, *(side.config.infer_headings for side in sides)}
    return {flag: load_corpus(path, infer_headings=flag).require_documents() for flag in flags}


def _scores(side: Side, corpus: Corpus, queries: list[Query], retriever: str, k: int,
            budgets: tuple[int, ...], metric: str) -> dict[str, float]:
    """Question id -> the side's value of ``metric`` (questions it is not defined for left
    out)."""
    chunks = chunk_corpus(corpus, side.config)
    job = ScoreJob(side.config, retriever, k, budgets, (side.mode,))
    rows = score_config(job, chunks, queries, list(corpus)).per_query
    rows = rows[(rows["metric"] == metric) & (rows["mode"] == side.mode)].dropna(
        subset=["value"])
    return dict(zip(rows["query_id"], rows["value"].astype(float), strict=True))


def _described(side: Side, values: np.ndarray) -> dict[str, Any]:
    config = side.config
    return {"file": side.path, "config_id": config.config_id, "strategy": config.strategy,
            "size": config.size, "unit": config.unit, "mode": side.mode,
            "name": f"{config.strategy} {config.size} {config.unit}"
                    + ("" if side.mode == PLAIN else f" ({side.mode})"),
            "mean": float(values.mean())}


def write_summary(result: GateResult, out: str | os.PathLike) -> Path:
    """The gate's JSON summary, written atomically."""
    import json

    from ...util.atomic import write_text_atomic

    return write_text_atomic(out, json.dumps(result.as_dict(), indent=2) + "\n")
