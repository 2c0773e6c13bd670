"""The evidence behind a choice: chosen against runner-up, measure by measure and query by query."""

from __future__ import annotations

import pandas as pd

from .choose import BUNDLE, Choice, plain, verdict_text


def head_to_head(choice: Choice) -> pd.DataFrame:
    """Chosen against runner-up on every blended metric and chunk figure, with the paired
    test wherever the sweep made one: the evidence for and against the runner-up."""
    if choice.runner_up is None:
        return pd.DataFrame()
    table = choice.candidates.set_index("config_id")
    a, b = choice.chosen["config_id"], choice.runner_up["config_id"]
    skip = {"strategy", "unit", "options", "failed", "passes", "rank", "tied", "ci_low",
            "ci_high", "n", "over_encoder_limit_method", "documents"}
    rows = [{"measure": name, "chosen": plain(table.at[a, name]),
             "runner_up": plain(table.at[b, name])}
            for name in table.columns if name not in skip]
    frame = pd.DataFrame(rows)
    if not choice.evidence.empty:
        tests = choice.evidence.set_index("metric")[["mean_diff", "ci_low", "ci_high", "p_holm",
                                                     "verdict"]]
        frame = frame.merge(tests, left_on="measure", right_index=True, how="left")
        numbers = ["mean_diff", "ci_low", "ci_high"]
        frame[numbers] = frame[numbers] + 0.0  # -0.0 shown as 0.0
    return frame


def describe(choice: Choice) -> pd.DataFrame:
    """The choice in one small table: chosen and runner-up, primary metric with interval,
    the bundle size, and the verdict of the paired test between them."""
    metric = choice.rule.primary_metric
    rows = []
    for role, row in (("chosen", choice.chosen), ("runner-up", choice.runner_up)):
        if row is None:
            continue
        rows.append({"role": role, "config_id": row["config_id"], "strategy": row["strategy"],
                     "size": row["size"], "unit": row["unit"], "options": row["options"],
                     metric: row[metric], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                     BUNDLE: row[BUNDLE]})
    frame = pd.DataFrame(rows)
    frame["verdict"] = [verdict_text(choice), ""][: len(frame)]
    return frame


def disagreements(choice: Choice, run, queries=()) -> pd.DataFrame:
    """Queries on which chosen and runner-up score differently on the primary metric, with
    the query text when ``queries`` are given: the cases behind the paired test."""
    if choice.runner_up is None:
        return pd.DataFrame()
    a, b = choice.chosen["config_id"], choice.runner_up["config_id"]
    rows = run.per_query[(run.per_query["retriever"] == choice.rule.retriever)
                         & (run.per_query["metric"] == choice.rule.primary_metric)]
    wide = rows.pivot_table(index=["query_id", "query_kind"], columns="config_id",
                            values="value").reset_index()
    wide = wide[wide[a] != wide[b]].rename(columns={a: "chosen", b: "runner_up"})
    text = {q.id: q.query for q in queries}
    wide.insert(2, "query", wide["query_id"].map(text).fillna(""))
    wide["favours"] = (wide["chosen"] > wide["runner_up"]).map(
        {True: "chosen", False: "runner-up"})
    columns = ["query_id", "query_kind", "query", "chosen", "runner_up", "favours"]
    return wide[columns].rename_axis(columns=None).sort_values(["favours", "query_id"],
                                                               ignore_index=True)
