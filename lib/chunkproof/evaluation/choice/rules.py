"""The choice rule: a primary metric, constraints parsed from ``name op number [on
retrievers]`` (never evaluated as code), the retrievers each applies to, how far each config
is from each constraint, the query kinds it is chosen on, a tie margin and a tie-break."""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...errors import ConfigError, RuleError
from ...util.values import missing
from ..queries.queries import HEADING_GROUP, LEAK_FREE, query_group
from ..retrieval.retrieve import retriever_names
from ..run.defaults import DEFAULT_PRIMARY_METRIC

OPERATORS = {"==": operator.eq, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
             "<": operator.lt}
ALIASES = {"≥": ">=", "≤": "<="}
"""Spellings without '=' (papermill skips a parameter line holding more than one '=')."""
_CONSTRAINT = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:@b?\d+)?)\s*(?P<op>==|>=|<=|>|<|≥|≤)\s*"
    r"(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
    r"(?:\s+on\s+(?P<retrievers>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*))?\s*$")
EVERY_RETRIEVER = "all"
ENCODER_MEASURES = {"over_encoder_limit": ("dense", "hybrid")}
"""Measures that concern one model, and the retrievers that use it: a constraint on one
applies to those retrievers unless it says otherwise (``... on all``)."""
INDEX_TOKENS: Literal["index_tokens"] = "index_tokens"
TIE_BREAKS = {
    INDEX_TOKENS: "the smaller index: fewer tokens to embed and store (index_tokens)",
    "chunks": "fewer chunks: fewer vectors to store",
}
"""The cost the rule's last step compares, each something the user pays whatever the reader
budget: at an equal budget every config hands the reader the same number of tokens."""
TIE_MARGIN = 0.05
"""The smallest difference in the primary metric that counts as a win (``study.rule``)."""
CONFIG_FIELDS = ("config_id", "strategy", "size", "unit", "options")
NOT_A_MEASURE = {"documents", "size", "over_encoder_limit_method", *CONFIG_FIELDS}
BUNDLE = "bundle_chars"
"""Mean chars of the top-k bundle per query (context_text, what a reader is handed)."""
BUNDLE_TOKENS = "bundle_tokens"
"""Mean tokens per query of the top-k bundle a reader is handed (each chunk's context label and
text): the cost of a config, in the tie-break, the charts and the sentences."""


_BUDGET_CUT = re.compile(r"@b(\d+)$")


def default_constraints(primary_metric: str) -> list[str]:
    """The constraints a choice starts from: every chunk the reader is handed intact, at the
    primary metric's own cut (within its budget, or in its top k), and at most 5% of the
    index texts past the dense encoder's window."""
    cut = primary_metric.rsplit("@", 1)[-1] if "@" in primary_metric else "5"
    return [f"code_integrity@{cut} >= 1.0", "over_encoder_limit <= 0.05"]


def metric_phrase(metric: str) -> str:
    """``metric`` with what it measures at: the reader budget (``answer_hit@b1024``: within
    1,024 tokens handed over, labels included) or the top k (whatever their size)."""
    budget = _BUDGET_CUT.search(metric)
    if budget:
        return (f"{metric} (within a reader budget of {int(budget[1]):,} tokens, labels "
                "included)")
    k = metric.rsplit("@", 1)[-1] if "@" in metric else ""
    return f"{metric} (the top {k} chunks, whatever their size)" if k.isdigit() else metric


@dataclass(frozen=True, slots=True)
class Constraint:
    """``name op value [on retrievers]``, e.g. ``code_integrity == 1.0``; NaN never satisfies
    one. ``retrievers``: the retrievers whose choice it constrains (empty: every one)."""

    name: str
    op: str
    value: float
    retrievers: tuple[str, ...] = ()

    def applies(self, retriever: str) -> bool:
        return not self.retrievers or retriever in self.retrievers

    def holds(self, measured: float) -> bool:
        return not missing(measured) and OPERATORS[self.op](float(measured), self.value)

    def margin(self, measured: float) -> float:
        """How far ``measured`` is inside the constraint (negative: by how much it misses),
        in the measure's own unit; NaN when it was not measured."""
        if missing(measured):
            return math.nan
        gap = float(measured) - self.value
        if self.op in (">=", ">"):
            return gap
        if self.op in ("<=", "<"):
            return -gap
        return -abs(gap)

    def shortfall(self, measured: float) -> float:
        """The miss relative to the bound (0 when it holds; inf when not measured)."""
        if self.holds(measured):
            return 0.0
        margin = self.margin(measured)
        return math.inf if math.isnan(margin) else max(-margin, 0.0) / max(abs(self.value), 1.0)

    def __str__(self) -> str:
        where = (f" on {','.join(self.retrievers)}" if self.retrievers else
                 f" on {EVERY_RETRIEVER}" if self.name in ENCODER_MEASURES else "")
        return f"{self.name} {self.op} {self.value:g}{where}"


def parse_constraint(text: str) -> Constraint:
    """Parse ``name op number [on r1,r2]`` (op one of ==, >=, <=, >, <, or ≥ ≤; ``on all``
    for every retriever); nothing is evaluated. Without ``on``, a constraint on a measure of
    ``ENCODER_MEASURES`` applies to the retrievers using that model, any other to all."""
    match = _CONSTRAINT.match(text) if isinstance(text, str) else None
    if not match:
        ops = ", ".join([*OPERATORS, *ALIASES])
        raise ConfigError(f"cannot parse constraint {text!r}: expected `name op number` with op "
                         f"one of {ops}, optionally followed by `on` and retrievers, e.g. "
                         "'over_encoder_limit <= 0.05 on dense,hybrid'")
    op = ALIASES.get(match["op"], match["op"])
    given = match["retrievers"]
    retrievers: tuple[str, ...]
    if given is None:
        retrievers = ENCODER_MEASURES.get(match["name"], ())
    else:
        names = tuple(dict.fromkeys(n.strip() for n in given.split(",")))
        retrievers = () if EVERY_RETRIEVER in names else names
    return Constraint(match["name"], op, float(match["value"]), tuple(retrievers))


class ChoiceRule(BaseModel):
    """How a config is chosen (``study.rule``), among the configs meeting every constraint
    on ``retriever``: the user's evidence on ``primary_metric`` first (a config the best beats
    by at least ``tie_margin`` with a cluster-aware paired test at ``alpha``, Holm over the
    comparisons with the best, is set aside), the shipped study second, ``tie_break`` (a
    cost: see TIE_BREAKS) last. A constraint binds only when it applies to ``retriever``
    (see ``parse_constraint``); ``query_kinds`` restricts the queries the choice reads
    (kinds, or a group: ``leak_free`` for every kind no heading injects,
    ``heading_derived``; empty: every written question, or the mined kinds the study
    admits)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    primary_metric: str = DEFAULT_PRIMARY_METRIC
    retriever: str = "bm25"
    constraints: tuple[str, ...] = ()
    tie_break: Literal["index_tokens", "chunks"] = INDEX_TOKENS
    tie_margin: float = Field(default=TIE_MARGIN, ge=0.0,
                              description="the smallest primary-metric difference that wins")
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0,
                         description="significance level of the paired tests")
    query_kinds: tuple[str, ...] = Field(
        default=(), description="query kinds (or the group leak_free / heading_derived) the "
                                "choice reads; empty: every written question, or the mined "
                                "kinds the study admits")

    @field_validator("constraints")
    @classmethod
    def _parse(cls, texts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(str(parse_constraint(t)) for t in texts)

    def parsed(self) -> list[Constraint]:
        return [parse_constraint(t) for t in self.constraints]

    def binding(self) -> list[Constraint]:
        """The constraints that apply to the rule's retriever."""
        return [c for c in self.parsed() if c.applies(self.retriever)]

    def not_binding(self) -> list[str]:
        """The constraints that do not apply to the rule's retriever, each saying so."""
        return [f"{c} (does not apply to {self.retriever})" for c in self.parsed()
                if not c.applies(self.retriever)]

    def uses(self, kind: str) -> bool:
        """Whether queries of ``kind`` count in the choice."""
        return (not self.query_kinds or kind in self.query_kinds
                or query_group(kind) in self.query_kinds)


def measure_names(run) -> list[str]:
    """Every name a constraint may use: summary metrics, numeric chunk_stats columns and
    ``bundle_chars``."""
    metrics = set(run.summary["metric"])
    numeric = run.chunk_stats.select_dtypes("number").columns
    return sorted(metrics | {c for c in numeric if c not in NOT_A_MEASURE}
                  | {BUNDLE, BUNDLE_TOKENS})


def check_rule(rule: ChoiceRule, run) -> None:
    """Every name of the rule exists in ``run``; RuleError names the rule field otherwise."""
    retrievers = sorted(set(run.summary["retriever"]))
    if rule.retriever not in retrievers:
        raise RuleError("retriever", f"{rule.retriever!r} is not in this run; "
                                     f"run retrievers: {', '.join(retrievers)}")
    metrics = sorted(set(run.summary["metric"]))
    if rule.primary_metric not in metrics:
        raise RuleError("primary_metric", f"unknown metric {rule.primary_metric!r}; "
                                          f"valid metrics: {', '.join(metrics)}")
    names = measure_names(run)
    for constraint in rule.parsed():
        if constraint.name not in names:
            raise RuleError("constraints", f"unknown name {constraint.name!r} in "
                                           f"'{constraint}'; valid names: {', '.join(names)}")
        unknown = [r for r in constraint.retrievers if r not in retriever_names()]
        if unknown:
            raise RuleError("constraints", f"unknown retriever(s) {', '.join(unknown)} in "
                                           f"'{constraint}'; valid: {', '.join(retriever_names())}"
                                           f" or {EVERY_RETRIEVER}")
    _check_kinds(rule, run)


def _check_kinds(rule: ChoiceRule, run) -> None:
    kinds = sorted(run.per_query["query_kind"].unique())
    valid = [*kinds, HEADING_GROUP, LEAK_FREE]
    unknown = [k for k in rule.query_kinds if k not in valid]
    if unknown:
        raise RuleError("query_kinds", f"unknown kind(s) {', '.join(map(repr, unknown))}; "
                                       f"valid: {', '.join(valid)}")
    if rule.query_kinds and not any(rule.uses(k) for k in kinds):
        raise RuleError("query_kinds", f"no query of the run is of kind "
                                       f"{', '.join(rule.query_kinds)} (the run's kinds: "
                                       f"{', '.join(kinds)})")
