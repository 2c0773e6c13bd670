"""The candidates of a choice: each config of a finished sweep scored on every query the rule
reads, on the rule's retriever, with its bundle sizes, the constraints it fails and its
margin to each, and the config whose chunks it repeats."""

from __future__ import annotations

import pandas as pd

from ...chunking.sizes import reader_tokens
from ...util.values import plain
from ..run.sweep import GROUP, summary_table, with_mode
from .mode_candidates import mode_suffix, split_candidate
from .rules import BUNDLE, BUNDLE_TOKENS, ChoiceRule, check_rule


def summary_rows(run, rule: ChoiceRule, name: str = "all") -> pd.DataFrame:
    """Summary rows of one query set (``all``, ``tuning`` or ``held_out``) on the rule's
    retriever; summarised afresh from per_query when the rule keeps only some query kinds."""
    summary = run.summary[run.summary["retriever"] == rule.retriever]
    if rule.query_kinds:
        ids = query_ids(run, name, rule) or set()
        columns = [*GROUP, "query_id", "metric", "value"]
        per_query = run.per_query
        rows = per_query.loc[(per_query["retriever"] == rule.retriever)
                             & per_query["query_id"].isin(ids),
                             [c for c in columns if c in per_query]]
        table = summary_table(with_mode(rows)[columns])
        return table[table["split"] == "all"]
    if name == "all":
        return summary[summary["split"] == "all"]
    return summary[(summary["split"] == "query_set") & (summary["split_value"] == name)]


def query_ids(run, name: str, rule: ChoiceRule | None = None) -> set[str] | None:
    """The ids of the query set ``name`` (None: every query) of the kinds ``rule`` uses."""
    rows = run.per_query[[c for c in ("query_id", "query_set", "query_kind")
                          if c in run.per_query]]
    if name != "all":
        rows = rows[rows["query_set"] == name]
    if rule is not None and rule.query_kinds:
        rows = rows[rows["query_kind"].map(rule.uses)]
    elif name == "all":
        return None
    return set(rows["query_id"])


def bundle_chars(run, retriever: str, query_ids: set[str] | None = None) -> pd.Series:
    """Per config id: mean over queries (``query_ids``, default all) of the total context_text
    chars of its top k."""
    return _bundle(run, retriever, query_ids, "chars").rename(BUNDLE)


def bundle_tokens(run, retriever: str, query_ids: set[str] | None = None) -> pd.Series:
    """Per config id (a candidate id: a config in a retrieval mode): mean over queries of what
    its top k hand a reader, in tokens: each
    chunk's context label and text (``sizes.reader_tokens``), the cost every choice, chart
    and sentence uses."""
    return _bundle(run, retriever, query_ids, "tokens").rename(BUNDLE_TOKENS)


def _bundle(run, retriever: str, query_ids: set[str] | None, unit: str) -> pd.Series:
    ranks = run.retrieved[(run.retrieved["retriever"] == retriever)
                          & (run.retrieved["rank"] <= run.params.k)]  # deeper ranks: budgets
    if query_ids is not None:
        ranks = ranks[ranks["query_id"].isin(query_ids)]
    if unit == "chars":
        lengths = run.chunks[["config_id", "id", "context_text"]].assign(
            bundled=lambda f: f["context_text"].str.len()).drop(columns="context_text")
    else:
        chunks = run.chunks
        labels = [c[:len(c) - len(t)] for c, t in zip(chunks["context_text"], chunks["text"],
                                                      strict=True)]
        lengths = chunks[["config_id", "id"]].assign(bundled=[
            reader_tokens(int(n), label) for n, label in zip(chunks["n_tokens"], labels,
                                                             strict=True)])
    bases = {c: split_candidate(c)[0] for c in ranks["config_id"].unique()}
    ranks = ranks.assign(base_id=ranks["config_id"].map(bases))
    joined = ranks.merge(lengths.rename(columns={"config_id": "base_id"}),
                         left_on=["base_id", "chunk_id"], right_on=["base_id", "id"],
                         how="left")
    per_query = joined.groupby(["config_id", "query_id"])["bundled"].sum()
    return per_query.groupby("config_id").mean()


def candidates(run, rule: ChoiceRule) -> pd.DataFrame:
    """One row per config on ``rule.retriever``, scored on every query of the kinds the rule
    reads: every metric mean, the primary metric's interval, chunk_stats figures,
    bundle_chars and bundle_tokens, the constraints it fails (``failed``), whether it
    ``passes`` them and its summed relative ``shortfall``, ``same_as`` (a config with
    identical chunks, scored once) and the configs ``identical`` to it."""
    check_rule(rule, run)
    blend = summary_rows(run, rule)
    wide = blend.pivot_table(index="config_id", columns="metric", values="mean")
    primary = blend[blend["metric"] == rule.primary_metric].set_index("config_id")
    table = run.chunk_stats.set_index("config_id").join(wide, how="inner")
    table = table.join(primary[["ci_low", "ci_high", "n"]], how="left")
    asked = query_ids(run, "all", rule)
    table = table.join(bundle_chars(run, rule.retriever, asked), how="left")
    table = table.join(bundle_tokens(run, rule.retriever, asked), how="left").reset_index()
    constraints = rule.binding()
    for name in {c.name for c in constraints} - set(table.columns):
        table[name] = float("nan")  # a metric no query of these kinds could score
    table["failed"] = [[str(c) for c in constraints if not c.holds(row[c.name])]
                       for _, row in table.iterrows()]
    table["passes"] = table["failed"].str.len() == 0
    table["shortfall"] = [sum(c.shortfall(row[c.name]) for c in constraints)
                          for _, row in table.iterrows()]
    twins = {s["config_id"]: s["same_as"] for s in run.run_info.get("identical_configs", [])}
    table["same_as"] = table["config_id"].map(lambda c: twins.get(c, ""))
    labels = dict(zip(table["config_id"], table.apply(label, axis=1), strict=True))
    table["identical"] = [", ".join(labels.get(t, t) for t, s in twins.items() if s == c)
                          for c in table["config_id"]]
    return table


def margins(table: pd.DataFrame, rule: ChoiceRule) -> pd.DataFrame:
    """Long table: each config's margin to each constraint that binds the rule's retriever,
    in the measure's unit (negative: by how much it misses), and whether it holds."""
    rows = []
    for _, row in table.iterrows():
        for constraint in rule.binding():
            rows.append({"config_id": row["config_id"], "strategy": row["strategy"],
                         "size": row["size"], "options": row["options"],
                         "constraint": str(constraint), "measured": plain(row[constraint.name]),
                         "margin": constraint.margin(row[constraint.name]),
                         "holds": constraint.holds(row[constraint.name])})
    return pd.DataFrame(rows, columns=["config_id", "strategy", "size", "options", "constraint",
                                       "measured", "margin", "holds"])


def primary_values(run, rule: ChoiceRule, name: str) -> pd.DataFrame:
    """query x config table of the primary metric on the query set ``name``."""
    rows = run.per_query[(run.per_query["retriever"] == rule.retriever)
                         & (run.per_query["metric"] == rule.primary_metric)]
    ids = query_ids(run, name, rule)
    if ids is not None:
        rows = rows[rows["query_id"].isin(ids)]
    return rows.pivot(index="query_id", columns="config_id", values="value")


def label(row) -> str:
    """``strategy/size`` of a candidate row, then its retrieval mode unless plain."""
    return f"{row['strategy']}/{row['size']}{mode_suffix(row['config_id'])}"
