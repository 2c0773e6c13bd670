"""A verdict on a run: the rule's three steps (``study.rule``) applied to the user's evidence
with the shipped study as the prior, the config it was chosen over, how sure it is (the
calibration row of the study's simulation for this many questions), how many questions would
settle it against that config and the smallest difference the questions can detect (both
from the exact test's power), each said in a sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..scoring import power
from ..study.evidence import config_key
from ..study.results import StudyResults
from ..study.rule import (
    COST,
    MINED_QUESTIONS,
    STUDY,
    TIE_MARGIN,
    YOUR_QUESTIONS,
    Evidence,
    Outcome,
    apply_rule,
)
from .calibration import WITHIN
from .mode_candidates import mode_suffix


def study_keys(table) -> dict[str, str]:
    """candidate id -> the name the study gives its config (a mode other than plain added,
    which the study never ran)."""
    return {row.config_id: config_key(row.strategy, row.size, row.unit, row.options)
            + mode_suffix(row.config_id) for row in table.itertuples()}


@dataclass
class Verdict:
    """The pick, what decided it, and how sure it is, in figures and sentences."""

    outcome: Outcome
    """The rule's outcome, configs named by candidate id."""
    labels: dict[str, str]
    """candidate id -> config name (``strategy/size``, mode when not plain)."""
    retriever: str
    metric: str
    evidence: str = ""
    """``your questions``, ``mined questions`` or "" (none)."""
    questions: int = 0
    pages: int = 0
    runner_up: str | None = None
    study: dict[str, Any] = field(default_factory=dict)
    confidence: dict[str, Any] = field(default_factory=dict)
    settle: power.Settling | None = None
    detectable: float | None = None
    margin: float = TIE_MARGIN

    @property
    def pick(self) -> str:
        return self.outcome.pick

    @property
    def decided_by(self) -> str:
        return self.outcome.decided_by

    def name(self, candidate: str | None) -> str:
        return "" if candidate is None else self.labels.get(candidate, candidate)

    def sentences(self) -> list[str]:
        """What decided the pick, then how sure, then what would settle it."""
        found = [self._decided()]
        if self.study.get("line"):
            found.append(self.study["line"])
        if self.confidence.get("text"):
            found.append(self.confidence["text"])
        if self.settle is not None and self.runner_up is not None:
            found.append(f"To settle {self.name(self.pick)} against "
                         f"{self.name(self.runner_up)}: {self.settle.text}.")
        if self.evidence:
            found.append(self._detectable())
        return found

    def _detectable(self) -> str:
        ask = (f"your {self.questions} questions" if self.evidence == YOUR_QUESTIONS else
               f"these {self.questions} mined questions")
        if self.detectable is None:
            return (f"No difference between these two is detectable with {ask} (exact sign "
                    "test, power 80%): too few of them answer differently.")
        return (f"The smallest difference {ask} can detect between these two is "
                f"{self.detectable:.2f} (exact sign test, power 80%).")

    def _decided(self) -> str:
        inseparable = [self.name(c) for c in self.outcome.inseparable]
        ask = (f"your {self.questions} questions" if self.evidence == YOUR_QUESTIONS else
               f"the {self.questions} mined questions of the kinds the study admits")
        if len(self.outcome.cost) == 1:
            return f"{self.name(self.pick)} is the only config that meets the rule."
        if self.decided_by in (YOUR_QUESTIONS, MINED_QUESTIONS):
            return (f"Decided by {self.evidence}: on {ask} (over {self.pages} pages), "
                    f"{self.name(self.pick)} is better than every other config by at least "
                    f"the tie margin ({self.margin:g}), each paired test grouped by page.")
        why = (f"{ask[0].upper()}{ask[1:]} cannot separate {len(inseparable)} configs "
               f"({', '.join(inseparable)})" if self.evidence else
               "No written question, and no mined kind the study admits, decides between "
               f"the {len(inseparable)} configs")
        if self.decided_by == STUDY:
            return f"Decided by the study: {why}, so the study's pooled result chose among them."
        tied = self.outcome.study_tied or self.outcome.inseparable
        return (f"Decided by cost: {why}, and "
                + ("the study ranks " + ", ".join(self.name(c) for c in tied) + " equal"
                   if self.outcome.study_tied else "the study knows none of them")
                + f"; of those, {self.name(self.pick)} has the smallest index "
                f"({self.outcome.cost.get(self.pick, float('nan')):,.0f} tokens to embed).")

    def as_dict(self) -> dict[str, Any]:
        return {"decided_by": self.decided_by, "decision": self._decided(),
                "verdict": " ".join(self.sentences()),
                "evidence": {"used": self.evidence or "none", "questions": self.questions,
                             "pages": self.pages,
                             "inseparable": [self.name(c) for c in self.outcome.inseparable]},
                "study": {k: v for k, v in self.study.items()},
                "cost": {"measure": "index_tokens",
                         "values": {self.name(c): v for c, v in self.outcome.cost.items()}},
                "confidence": self.confidence,
                "to_settle": None if self.settle is None else {
                    "against": self.name(self.runner_up), "questions": self.settle.questions,
                    "text": self.settle.text},
                "detectable_difference": None if self.detectable is None
                else round(self.detectable, 4)}


def runner_up(outcome: Outcome) -> str | None:
    """What the pick was chosen over: the next config by the step that decided."""
    if outcome.decided_by in (YOUR_QUESTIONS, MINED_QUESTIONS):
        order = sorted(outcome.means, key=lambda c: (-outcome.means[c], c))
    elif outcome.decided_by == STUDY:
        order = [c for c, _ in outcome.study_order]
    else:
        order = sorted(outcome.study_tied or outcome.inseparable,
                       key=lambda c: (outcome.cost.get(c, np.inf), c))
    rest = [c for c in order if c != outcome.pick]
    return rest[0] if rest else None


def calibration_row(study: StudyResults | None, retriever: str, metric: str,
                    questions: int) -> dict[str, Any]:
    """The simulation's figures for picks made this way from ``questions`` written questions
    (the largest drawn size not above it; 0: mined questions only), with the sentence."""
    if study is None:
        return {}
    rows = [r for r in study.table("calibration") if r.get("rule") == "new"
            and r.get("retriever") == retriever and r.get("metric") == metric]
    sizes = sorted({int(r["questions"]) for r in rows if int(r["questions"]) > 0})
    if questions > 0 and sizes:
        size = max([s for s in sizes if s <= questions] or [sizes[0]])
    else:
        size = 0
    row = next((r for r in rows if int(r["questions"]) == size), None)
    if row is None:
        return {}
    tenths = int(round(float(row["within"]) * 10))
    source = (f"{size} written questions" if size else "mined questions only")
    fewer = " (you have fewer)" if 0 < questions < size else ""
    text = (f"Picks made this way from {source}{fewer} were within {WITHIN:g} of the best on "
            f"{tenths} of 10 held-out sites' draws ({int(row['draws'])} draws over "
            f"{int(row['sites'])} sites, each judged on all its questions; mean shortfall "
            f"{float(row['mean_regret']):.3f}).")
    return {"questions": size, "draws": int(row["draws"]), "sites": int(row["sites"]),
            "within": float(row["within"]), "inside": float(row["inside"]),
            "mean_regret": float(row["mean_regret"]), "text": text}


def study_line(study: StudyResults, outcome: Outcome, keys: Mapping[str, str],
               labels: Mapping[str, str], retriever: str, metric: str) -> dict[str, Any]:
    """What the study said of the configs the evidence could not separate: its best among
    them, by how much over the next, and the prediction interval for a new site."""
    prior = study.prior
    meta = {"sites": len(prior.sites), "questions": prior.questions(),
            "date": prior.meta.get("date", ""), "unknown": [labels[c] for c in outcome.unknown]}
    if len(outcome.study_order) < 2:
        return meta
    (best, _), (second, _) = outcome.study_order[:2]
    pooled = prior.pooled(keys[best], keys[second], retriever, metric)
    meta.update(best=labels[best], next=labels[second], effect=round(pooled.effect, 4),
                ci=[round(pooled.ci_low, 4), round(pooled.ci_high, 4)],
                prediction=[round(pooled.pi_low, 4), round(pooled.pi_high, 4)],
                tied=[labels[c] for c in outcome.study_tied])
    meta["line"] = (f"Across {meta['sites']} documentation sites and {meta['questions']} "
                    f"written questions, {labels[best]} is best of these at {metric} "
                    f"({retriever}), by {pooled.effect:+.3f} over {labels[second]} (95% "
                    f"interval {pooled.ci_low:+.3f} to {pooled.ci_high:+.3f}; on a site the "
                    f"study has not seen, expect {pooled.pi_low:+.3f} to {pooled.pi_high:+.3f}).")
    return meta


def settle_from(evidence: Evidence | None, study: StudyResults | None, pick: str,
                other: str | None, keys: Mapping[str, str], retriever: str, metric: str,
                margin: float) -> tuple[power.Settling | None, float | None]:
    """(what would settle pick against ``other``, the smallest difference the evidence
    detects): from the evidence's per-question differences when there is evidence, else
    from the study's own questions."""
    if other is None:
        return None, None
    if evidence is not None and len(evidence):
        diffs = (evidence.values[pick] - evidence.values[other]).to_numpy()
        pages: Sequence = evidence.pages
    elif study is not None and study.prior.knows(keys[pick], retriever, metric) and \
            study.prior.knows(keys[other], retriever, metric):
        parts = [(s.table(retriever, metric)[keys[pick]] - s.table(retriever, metric)[
            keys[other]]).to_numpy() for s in study.prior.sites]
        diffs = np.concatenate(parts)
        pages = [f"{s.name}:{p}" for s in study.prior.sites for p in s.pages]
    else:
        return None, None
    keep = ~np.isnan(diffs)
    diffs, pages = diffs[keep], list(np.asarray(pages, dtype=object)[keep])
    settled = power.settling(diffs, pages, margin=margin)
    if evidence is None or not len(evidence):
        return settled, None
    discordant = float(np.mean(diffs != 0))
    return settled, power.detectable_difference(len(diffs), discordant)


def verdict_for(table, configs: Sequence[str], evidence: Evidence | None,
                study: StudyResults | None, *, retriever: str, metric: str, labels:
                Mapping[str, str], cost: Mapping[str, float], margin: float = TIE_MARGIN,
                alpha: float = 0.05) -> Verdict:
    """The rule over ``configs`` (candidate ids meeting the constraints) of the candidates
    ``table``, then the figures that say how sure it is."""
    keys = study_keys(table)
    outcome = apply_rule(list(configs), evidence=evidence,
                         prior=None if study is None else study.prior, retriever=retriever,
                         metric=metric, cost=cost, margin=margin, alpha=alpha,
                         study_names=keys)
    other = runner_up(outcome)
    verdict = Verdict(outcome, dict(labels), retriever, metric,
                      evidence=evidence.name if evidence is not None else "",
                      questions=len(evidence) if evidence is not None else 0,
                      pages=len(set(evidence.pages)) if evidence is not None else 0,
                      runner_up=other, margin=margin)
    if study is not None:
        verdict.study = study_line(study, outcome, keys, labels, retriever, metric)
        verdict.confidence = calibration_row(
            study, retriever, metric, verdict.questions if verdict.evidence == YOUR_QUESTIONS
            else 0)
    verdict.settle, verdict.detectable = settle_from(evidence, study, outcome.pick, other,
                                                     keys, retriever, metric, margin)
    return verdict


__all__ = ["COST", "STUDY", "Verdict", "verdict_for"]
