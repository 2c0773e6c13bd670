"""The user's evidence in a finished run: which queries the verdict reads first. Written
questions (a query file) are the evidence, every one of them; mined queries count only in the
kinds the study admits (those that rank configs as written questions do on the study's
sites); kinds named in the rule are used as named. What each kind could tell is profiled
either way (``kind_figures``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..scoring.families import CLUSTER
from ..scoring.kind_figures import ALL_KINDS, kind_figures
from ..study.results import StudyResults
from ..study.rule import MINED_QUESTIONS, YOUR_QUESTIONS, Evidence
from .rules import ChoiceRule


def written(run) -> bool:
    """Whether the run's queries come from a query file (written questions)."""
    return bool(getattr(run.params, "queries", ""))


def admitted_kinds(study: StudyResults | None) -> tuple[str, ...]:
    """The mined kinds the study admits as evidence (its ``kinds`` table's rows marked
    ``admitted``); none without a study."""
    if study is None:
        return ()
    return tuple(sorted({str(r["kind"]) for r in study.table("kinds") if r.get("admitted")}))


@dataclass
class UserEvidence:
    """The queries the verdict reads first, and why those."""

    kinds: tuple[str, ...]
    """Query kinds used (empty: every kind of a written file, or none at all)."""
    name: str
    """``your questions``, ``mined questions``, or "" (no evidence: nothing admitted)."""
    reason: str
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)
    """What each kind of the run can tell (``kind_figures``)."""

    @property
    def used(self) -> bool:
        return bool(self.name)


def user_evidence(run, rule: ChoiceRule, study: StudyResults | None, *,
                  queries=(), corpus=None) -> UserEvidence:
    """The evidence a choice reads first: the rule's kinds when it names some; else every
    written question; else the mined kinds the study admits, or none."""
    figures = kind_figures(run, rule.primary_metric, rule.retriever, queries=queries,
                           docs=corpus, alpha=rule.alpha)
    present = set(figures["query_kind"]) - {ALL_KINDS}
    if rule.query_kinds:
        name = YOUR_QUESTIONS if written(run) else MINED_QUESTIONS
        return UserEvidence(tuple(rule.query_kinds), name, "the kinds the rule names: "
                            f"{', '.join(rule.query_kinds)}", figures)
    if written(run):
        return UserEvidence((), YOUR_QUESTIONS, "every written question of the query file",
                            figures)
    admitted = tuple(k for k in admitted_kinds(study) if k in present)
    if admitted:
        return UserEvidence(admitted, MINED_QUESTIONS, "the mined kinds the study admits "
                            f"(they rank configs as written questions do): "
                            f"{', '.join(admitted)}", figures)
    why = ("no mined kind ranks configs as written questions do on the study's sites, so no "
           "mined query decides" if study is not None else
           "no study is shipped to say which mined kinds can be trusted, so none decides")
    return UserEvidence((), "", why, figures)


def evidence_table(run, rule: ChoiceRule, chosen_from: Sequence[str],
                   used: UserEvidence) -> Evidence | None:
    """The per-query values of the primary metric (queries x candidate ids) on the rule's
    retriever for the evidence's kinds, with each query's page; None without evidence."""
    if not used.used:
        return None
    rows = run.per_query[(run.per_query["retriever"] == rule.retriever)
                         & (run.per_query["metric"] == rule.primary_metric)
                         & run.per_query["config_id"].isin(list(chosen_from))]
    if used.kinds:
        rows = rows[rows["query_kind"].isin(used.kinds) | rows["query_group"].isin(used.kinds)]
    values = rows.pivot(index="query_id", columns="config_id", values="value")
    values = values[[c for c in chosen_from if c in values.columns]].dropna()
    if values.empty:
        return None
    pages = rows.drop_duplicates("query_id").set_index("query_id")
    page = (pages[CLUSTER] if CLUSTER in pages else pd.Series(pages.index, index=pages.index))
    return Evidence(values, list(np.asarray(page.reindex(values.index), dtype=object)),
                    used.name)
