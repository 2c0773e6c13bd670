"""What a choice can rest on: the query kinds that are leak-free and separate configs
(``kind_figures``), the kinds the choice is then made on, whether its questions decided it
(``evidence``) or every config sat at the ceiling or no pair was separated (``cost only``),
and how many written questions, of which section kinds, would decide it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd
from scipy.stats import norm

from ..queries.queries import Query
from ..queries.question_sections import corpus_sections, kind_shares, planned_counts
from ..scoring.kind_figures import ALL_KINDS, kind_figures, pooled
from .choose import Choice, choose
from .rules import ChoiceRule

EVIDENCE, THEN_COST, COST_ONLY = "evidence", "evidence, then cost", "cost only"
"""``decided_by``: the questions set the chosen config above the runner-up; they set some
configs apart but the cost tie-break chose among those tied at the top; or they separate no
pair (or every config is at the ceiling) and only the tie-break decided."""
DETECT = 0.2
"""The difference in the primary metric written questions are sized to detect."""
DISCORDANT = 0.3
"""The share of questions two configs that differ by ``DETECT`` are assumed to disagree on."""
POWER = 0.8


def questions_needed(difference: float = DETECT, discordant: float = DISCORDANT, *,
                     alpha: float = 0.05, power: float = POWER) -> int:
    """Paired questions to detect ``difference`` in a 0/1 metric between two configs that
    disagree on a ``discordant`` share of them (McNemar's normal approximation)."""
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return int(-(-(z * z * discordant) // (difference * difference)))


@dataclass
class Decision:
    """The kinds a choice is made on and what decides it."""

    kinds: tuple[str, ...]
    """Query kinds the choice uses (empty: every kind)."""
    decided_by: str
    """``evidence`` or ``cost only``."""
    reason: str
    """Why, in one sentence: the kinds used, or that every config is at the ceiling or no
    pair of configs is separated."""
    advice: str = ""
    """What would decide it (empty when the questions decide it)."""
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)

    def as_dict(self) -> dict:
        return {"decided_by": self.decided_by, "decided_on_kinds": list(self.kinds),
                "decision": self.reason, "to_decide": self.advice}


def decide(run, metric: str, retriever: str, *, queries: Sequence[Query] = (), corpus=None,
           asked: Sequence[str] = (), alpha: float = 0.05) -> Decision:
    """The kinds to choose on: ``asked`` when given, else every kind that is leak-free and
    separates a pair of configs on ``metric``; ``cost only`` when none does (then the
    leak-free kinds scored on ``metric``, or every kind, and the advice for writing
    questions, shared out over ``corpus``'s section kinds)."""
    figures = kind_figures(run, metric, retriever, queries=queries, docs=corpus, alpha=alpha)
    kinds = figures[(figures["query_kind"] != ALL_KINDS) & (figures["scored"] > 0)]
    if asked:
        used = kinds[kinds["query_kind"].isin(asked)]
        return _verdict(tuple(asked), used, figures, metric, corpus)
    usable = kinds[kinds["leak_free"] & kinds["discriminates"]]
    if len(usable):
        return _verdict(tuple(usable["query_kind"]), usable, figures, metric, corpus)
    free = kinds[kinds["leak_free"]]
    chosen = tuple(free["query_kind"]) if len(free) else ()
    if len(chosen) > 1:  # no kind alone separates a pair: perhaps they do together
        together = pd.DataFrame([pooled(run, metric, retriever, chosen, alpha=alpha)])
        return _verdict(chosen, together, figures, metric, corpus)
    return _verdict(chosen, free if len(free) else kinds, figures, metric, corpus)


def _verdict(kinds: tuple[str, ...], used: pd.DataFrame, figures: pd.DataFrame, metric: str,
             corpus) -> Decision:
    named = f"the {', '.join(kinds)} queries" if kinds else "every kind of query"
    if (used["pairs_separated"] > 0).any():
        parts = [f"{r.query_kind} ({r.pairs_separated} of {r.pairs} pairs separated, "
                 f"{r.ceiling:.0%} at the ceiling)" for r in used.itertuples()]
        return Decision(kinds, EVIDENCE, f"chosen on {metric} over {named}, which are "
                        f"leak-free and tell configs apart: {'; '.join(parts)}",
                        figures=figures)
    ceiling = used["ceiling"].dropna()
    if len(ceiling) and (ceiling >= 1.0).all():
        why = f"every config answers all of {named} on {metric} (all at the ceiling)"
    else:
        why = f"no pair of configs differs significantly on {metric} over {named}"
    return Decision(kinds, COST_ONLY, f"{why}: the questions cannot tell the configs apart, "
                    "so the choice is the tie-break's (the cheapest config), not a verdict",
                    advice=advice(corpus), figures=figures)


def advice(corpus=None) -> str:
    """How many written questions would decide it, shared out over the corpus's sections."""
    needed = questions_needed()
    text = (f"Write about {needed} questions whose answers lie in the documents (the question "
            "panel, notebook 07, and 'chunkproof queries check'): that many detect a "
            f"{DETECT:g} difference in the answer rate of two configs that disagree on "
            f"{DISCORDANT:.0%} of them (paired test, power {POWER:.0%})")
    if corpus is None:
        return text + "."
    counts = planned_counts(kind_shares(corpus_sections(corpus)), needed)
    spread = ", ".join(f"{n} about {kind} sections" for kind, n in counts.items() if n)
    return f"{text}; as the corpus's sections go: {spread}."


def deciding_rule(rule: ChoiceRule, decision: Decision) -> ChoiceRule:
    """``rule`` restricted to the decision's kinds (unchanged when it names kinds itself)."""
    if rule.query_kinds or not decision.kinds:
        return rule
    return rule.model_copy(update={"query_kinds": decision.kinds})


def choose_deciding(run, rule: ChoiceRule, *, queries: Sequence[Query] = (), corpus=None,
                    decision: Decision | None = None) -> tuple[Choice, Decision]:
    """``choose.choose`` on the kinds ``decide`` picks, the choice saying what decided it."""
    decision = decision or decide(run, rule.primary_metric, rule.retriever, queries=queries,
                                  corpus=corpus, asked=rule.query_kinds, alpha=rule.alpha)
    choice = choose(run, deciding_rule(rule, decision))
    if decision.decided_by == EVIDENCE and choice.verdict != "A better":
        decision = _among_tied(decision, choice, corpus)
    choice.decided_by, choice.decision = decision.decided_by, decision.as_dict()
    return choice, decision


def _among_tied(decision: Decision, choice: Choice, corpus) -> Decision:
    """The questions separate some configs, but not the chosen one from the runner-up."""
    table, metric = choice.candidates, choice.rule.primary_metric
    tied = table[table["tied"].fillna(False).astype(bool)]
    top = f"{len(tied)} configs tied at the top" if len(tied) > 1 else "the top configs"
    ceiling = " (all answering every question: the ceiling)" if len(tied) and bool(
        (tied[metric] >= 1.0).all()) else ""
    reason = (f"{decision.reason}; but they do not separate {top}{ceiling}, so the tie-break "
              "chose among those by cost")
    return Decision(decision.kinds, THEN_COST, reason, advice(corpus), decision.figures)
