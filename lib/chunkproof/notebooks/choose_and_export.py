"""Notebook 06, choose and export: its parameters, the rule they make, the verdict (what
decided it, how sure it is), and the evidence behind it (chosen against runner-up, measure
by measure and query by query; the study's pooled result for the run's configs)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from markupsafe import escape
from pydantic import AfterValidator, BeforeValidator

from ..document.corpus import Corpus
from ..errors import ConfigError, RuleError
from ..evaluation.choice.candidates import label, margins
from ..evaluation.choice.choose import Choice, choose
from ..evaluation.choice.export import export_choice, paired_text, verdict_text
from ..evaluation.choice.mode_candidates import by_candidate
from ..evaluation.choice.rules import (
    INDEX_TOKENS,
    TIE_BREAKS,
    TIE_MARGIN,
    ChoiceRule,
    check_rule,
    parse_constraint,
)
from ..evaluation.choice.user_evidence import UserEvidence
from ..evaluation.choice.verdict import study_keys
from ..evaluation.queries.mined_part import mined_once
from ..evaluation.queries.queries import Query
from ..evaluation.run.runs import load_run
from ..evaluation.run.sweep import SweepResult
from ..evaluation.scoring import families
from ..evaluation.study.results import StudyResults
from ..util.atomic import write_text_atomic
from ..util.sheets import csv_text
from ..util.values import plain
from ..viz import charts
from ..viz.tables import Table, interval_text
from .params import (
    CorpusFolder,
    ExistingFolder,
    NotebookParams,
    OutputFolder,
    QueryFile,
    Text,
    TextsOrNone,
    load_corpus_param,
    load_queries_param,
    parameter,
)
from .params import validate as validate_params

BASELINE = "rct"
"""The plain baseline every choice is also compared with, query by query."""


def _constraints(texts: list[str]) -> list[str]:
    return [str(parse_constraint(t)) for t in texts]


def _tie_break(value: Any) -> str:
    if not isinstance(value, str) or value not in TIE_BREAKS:
        raise ValueError(f"expected one of {', '.join(TIE_BREAKS)}; got {value!r}")
    return value


def _margin(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"expected a number >= 0 (a gap in the primary metric); got {value!r}")
    return float(value)


class RuleParams(NotebookParams):
    """The choice rule as notebook parameters."""

    PRIMARY_METRIC: Text
    RETRIEVER: Text
    CONSTRAINTS: Annotated[TextsOrNone, AfterValidator(_constraints)]
    TIE_BREAK: Annotated[str, BeforeValidator(_tie_break)]
    TIE_MARGIN: Annotated[float, BeforeValidator(_margin)] = TIE_MARGIN
    QUERY_KINDS: TextsOrNone = []


class ChooseParams(RuleParams):
    """Notebook 06's parameters."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    RUN_DIR: ExistingFolder
    OUT_DIR: OutputFolder


@dataclass(frozen=True, slots=True)
class ChooseSetup:
    """Notebook 06's parameters, checked and loaded."""

    run: SweepResult
    corpus: Corpus
    queries: list[Query]
    rule: ChoiceRule
    out_dir: Path

    def describe(self) -> str:
        info = self.run.run_info
        split = info.get("query_split", {}).get("note", "")
        return (f"run {info['run_id']} ({info['configs']} configs, {info['queries']} "
                f"queries); rule: {self.rule}; export to {self.out_dir}\n{split}")


def make_rule(*, primary_metric: str, retriever: str, constraints: list[str], tie_break: str,
              tie_margin: float = TIE_MARGIN, query_kinds: list[str] | None = None,
              run: SweepResult | None = None) -> ChoiceRule:
    """A ChoiceRule from notebook parameters, checked against ``run`` when given; errors name
    the parameter."""
    checked = validate_params(RuleParams, PRIMARY_METRIC=primary_metric, RETRIEVER=retriever,
                              CONSTRAINTS=constraints, TIE_BREAK=tie_break,
                              TIE_MARGIN=tie_margin, QUERY_KINDS=query_kinds or [])
    rule = ChoiceRule.model_validate({
        "primary_metric": checked.PRIMARY_METRIC, "retriever": checked.RETRIEVER,
        "constraints": tuple(checked.CONSTRAINTS), "tie_break": checked.TIE_BREAK,
        "tie_margin": checked.TIE_MARGIN, "query_kinds": tuple(checked.QUERY_KINDS)})
    if run is not None:
        try:
            check_rule(rule, run)
        except RuleError as err:
            raise ConfigError(f"{err.field.upper()}: {err.problem}") from None
    return rule


def check_corpus(run: SweepResult, corpus: Corpus, *, name: str = "CORPUS") -> None:
    """The corpus is the one the run scored (same fingerprint), else ConfigError."""
    recorded = run.run_info.get("corpus", {}).get("fingerprint")
    if recorded and recorded != corpus.fingerprint:
        raise ConfigError(f"{name}: {corpus.root} has fingerprint {corpus.fingerprint} but "
                          f"the run scored {recorded}: the corpus changed since the sweep, "
                          "or RUN_DIR belongs to another corpus")


def validate(**params: Any) -> ChooseSetup:
    """Check notebook 06's parameters and load what they name (errors name the parameter)."""
    checked = validate_params(ChooseParams, **params)
    with parameter("RUN_DIR"):
        run = by_candidate(load_run(checked.RUN_DIR))
    corpus = load_corpus_param(checked.CORPUS)
    check_corpus(run, corpus)
    queries = load_queries_param(checked.QUERIES, corpus)
    rule = make_rule(primary_metric=checked.PRIMARY_METRIC, retriever=checked.RETRIEVER,
                     constraints=checked.CONSTRAINTS, tie_break=checked.TIE_BREAK,
                     tie_margin=checked.TIE_MARGIN, query_kinds=checked.QUERY_KINDS, run=run)
    return ChooseSetup(run, corpus, queries, rule, Path(checked.OUT_DIR))


def margins_chart(candidates: pd.DataFrame, rule: ChoiceRule):
    """Each config's margin to each binding constraint (``charts.constraint_margins``), or a
    sentence when no constraint binds the rule's retriever."""
    table = margins(candidates, rule)
    if table.empty:
        return (f"no constraint binds {rule.retriever}: nothing to draw "
                f"({'; '.join(rule.not_binding()) or 'the rule has no constraints'})")
    return charts.constraint_margins(table)


def constraints_text(choice: Choice) -> str:
    """What the constraints did: the configs each binding one kept out (best first), the
    constraints that do not apply to the rule's retriever, and the configs identical to the
    chosen one."""
    lines = [f"excluded: {line}" for line in choice.excluded] or [
        "excluded: nothing (every config meets every binding constraint)"]
    lines += [f"not binding: {line}" for line in choice.not_binding]
    if choice.identical:
        lines.append(f"identical to the chosen config (the same chunks, scored once): "
                     f"{', '.join(choice.identical)}")
    return "\n".join(lines)


def head_to_head(choice: Choice, run: SweepResult) -> pd.DataFrame:
    """Chosen against runner-up on every blended metric and chunk figure, with the sweep's
    paired test wherever it made one (its significance table, questions grouped by page):
    the evidence for and against the runner-up."""
    if choice.runner_up is None:
        return pd.DataFrame()
    table = choice.candidates.set_index("config_id")
    a, b = choice.chosen["config_id"], choice.runner_up["config_id"]
    skip = {"strategy", "unit", "options", "failed", "passes", "rank", "role", "ci_low",
            "ci_high", "n", "over_encoder_limit_method", "documents", "inseparable"}
    rows = [{"measure": name, "chosen": plain(table.at[a, name]),
             "runner_up": plain(table.at[b, name])}
            for name in table.columns if name not in skip]
    frame = pd.DataFrame(rows)
    sig = run.significance
    if sig.empty:
        return frame
    pair = sig[(sig["retriever"] == choice.rule.retriever)
               & (sig["family"] == families.EXPLORATORY)
               & (((sig["config_a"] == a) & (sig["config_b"] == b))
                  | ((sig["config_a"] == b) & (sig["config_b"] == a)))]
    if pair.empty:
        return frame
    tests = families.orient(pair, a).drop_duplicates("metric").set_index("metric")[
        ["mean_diff", "ci_low", "ci_high", "p_holm", "verdict"]]
    frame = frame.merge(tests, left_on="measure", right_index=True, how="left")
    numbers = ["mean_diff", "ci_low", "ci_high"]
    frame[numbers] = frame[numbers] + 0.0  # -0.0 shown as 0.0
    return frame


def choice_for(setup: ChooseSetup, *, study="shipped") -> Choice:
    """The choice on the setup's run and rule, its queries' texts read from the query file
    (when the run mined them: the queries it keeps in its ``parts/``, else mined again from
    the corpus: the same queries, the same ids)."""
    run = setup.run
    parts = run.run_dir / "parts" if run.run_dir is not None else None
    queries = setup.queries or mined_once(parts, setup.corpus,
                                          run.params.mined_max_sources).queries
    return choose(setup.run, setup.rule, queries=queries, corpus=setup.corpus, study=study)


def describe(choice: Choice) -> pd.DataFrame:
    """The choice in one small table: chosen and runner-up, primary metric with interval,
    the index they cost, the configs whose chunks are identical to each (the same config in
    effect, scored once), and their paired test on the user's evidence."""
    metric = choice.rule.primary_metric
    rows = []
    for role, row in (("chosen", choice.chosen), ("runner-up", choice.runner_up)):
        if row is None:
            continue
        rows.append({"role": role, "config_id": row["config_id"], "strategy": row["strategy"],
                     "size": row["size"], "unit": row["unit"], "options": row["options"],
                     metric: row[metric], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                     INDEX_TOKENS: row.get(INDEX_TOKENS), "identical": row.get("identical", "")})
    frame = pd.DataFrame(rows)
    test = paired_text(choice.comparison) if choice.comparison else ""
    frame["paired test"] = [test, ""][: len(frame)]
    return frame


def verdict_lines(choice: Choice) -> str:
    """The verdict in sentences, one a line: what decided it, what the study says, how sure
    it is, what would settle it; or why no config met the rule."""
    if choice.verdict is None:
        return choice.note
    lines = choice.verdict.sentences()
    if choice.excluded:
        lines.append(excluded_cost(choice))
    return "\n".join(lines)


def excluded_cost(choice: Choice) -> str:
    """What the constraints cost in score: the best config they kept out against the pick."""
    metric = choice.rule.primary_metric
    table = choice.candidates
    out = table[(table["failed"].str.len() > 0) & (table["same_as"] == "")]
    if out.empty:
        return ""
    best = out.sort_values([metric, "config_id"], ascending=[False, True]).iloc[0]
    gap = best[metric] - choice.chosen[metric]
    return (f"The constraints kept out {len(out)} config(s); the best of them, {label(best)} "
            f"({', '.join(best['failed'])}), scores {best[metric]:.3f} on {metric}, "
            f"{gap:+.3f} against the pick: what the constraints cost here.")


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


def candidates_table(candidates: pd.DataFrame, rule: ChoiceRule) -> Table:
    """The candidates as a reader compares them: rank, config, role, the primary metric with
    its interval beside it, whether the user's evidence can separate it from its best (the
    gap and the paired test, grouped by page, Holm over the comparisons with the best), the
    study's pooled effect, the index it costs, the figures the constraints read and what
    excludes a config; the chosen row highlighted."""
    metric = rule.primary_metric
    measured = [c.name for c in rule.parsed() if c.name in candidates and c.name != metric]
    shown = pd.DataFrame({
        "rank": candidates["rank"], "config": charts.config_label(
            candidates.drop(columns=list(charts.REALISED))), "role": candidates["role"],
        metric: [interval_text(m, lo, hi) for m, lo, hi in zip(
            candidates[metric], candidates["ci_low"], candidates["ci_high"], strict=True)],
        "gap_to_best": candidates["gap_to_best"], "p_vs_best": candidates["p_vs_best"],
        "inseparable": candidates["inseparable"].map({True: "yes", False: ""}),
        "study_effect": candidates["study_effect"], INDEX_TOKENS: candidates[INDEX_TOKENS],
        "chunks": candidates["chunks"], "tokens_p50": candidates["tokens_p50"],
        **{name: candidates[name] for name in dict.fromkeys(measured)},
        "fails": candidates["failed"].map(", ".join),
        "same_as": candidates["same_as"], "identical": candidates.get("identical"),
    })
    return Table(shown, highlight=candidates["role"].isin(["chosen", "closest"]))


def study_table(choice: Choice, study: StudyResults | None) -> pd.DataFrame:
    """The study's pooled result for the run's configs at the rule's retriever and metric:
    each config's effect over the study's reference with its interval, the prediction
    interval for a new site and I²; a sentence when no study is shipped."""
    if study is None:
        return pd.DataFrame({"note": ["no study is shipped with this chunkproof"]})
    keys = study_keys(choice.candidates)
    rows = [r for r in study.table("pooled") if r["retriever"] == choice.rule.retriever
            and r["metric"] == choice.rule.primary_metric]
    names = {key: label(row) for key, row in zip(keys.values(), choice.candidates.to_dict(
        "records"), strict=True)}
    frame = pd.DataFrame([{"config": names.get(r["config"], r["config"]),
                           "in this run": r["config"] in names,
                           "effect": r.get("effect"), "ci_low": r.get("ci_low"),
                           "ci_high": r.get("ci_high"), "pi_low": r.get("pi_low"),
                           "pi_high": r.get("pi_high"), "i2": r.get("i2"),
                           "mean": r.get("mean"), "against": r["against"]} for r in rows])
    if frame.empty:
        return pd.DataFrame({"note": [f"the study has no {choice.rule.primary_metric} under "
                                      f"{choice.rule.retriever}"]})
    return frame.sort_values(["effect", "config"], ascending=[False, True],
                             ignore_index=True)


def per_query_differences(choice: Choice, run: SweepResult, queries=()) -> pd.DataFrame:
    """Per query, the chosen config minus the runner-up, and minus the best ``rct`` config
    (the plain baseline) unless the chosen one is rct, on the primary metric: comparison,
    query_id, query_kind, query, difference."""
    metric, retriever = choice.rule.primary_metric, choice.rule.retriever
    rows = run.per_query[(run.per_query["retriever"] == retriever)
                         & (run.per_query["metric"] == metric)]
    wide = rows.pivot_table(index=["query_id", "query_kind"], columns="config_id",
                            values="value")
    others = []
    if choice.runner_up is not None:
        runner = choice.runner_up
        others.append((f"vs runner-up {label(runner)}", runner["config_id"]))
    baseline = choice.candidates[choice.candidates["strategy"] == BASELINE].sort_values(
        metric, ascending=False)
    if choice.chosen["strategy"] != BASELINE and len(baseline):
        best = baseline.iloc[0]
        others.append((f"vs {label(best)} (best {BASELINE})", best["config_id"]))
    text = {q.id: q.query for q in queries}
    chosen = choice.chosen["config_id"]
    frames = [pd.DataFrame({"comparison": label, "difference": wide[chosen] - wide[other]})
              for label, other in others if other in wide]
    if not frames:
        return pd.DataFrame(columns=["comparison", "query_id", "query_kind", "query",
                                     "difference"])
    frame = pd.concat(frames).reset_index()
    frame["query"] = [text.get(q, "") for q in frame["query_id"]]
    return frame[["comparison", "query_id", "query_kind", "query", "difference"]]


def win_loss_counts(differences: pd.DataFrame) -> pd.DataFrame:
    """Per comparison and query kind: queries the chosen config wins, ties and loses."""
    if differences.empty:
        return pd.DataFrame(columns=["comparison", "query_kind", "wins", "ties", "losses"])
    outcome = differences.assign(
        wins=differences["difference"] > 0, ties=differences["difference"] == 0,
        losses=differences["difference"] < 0)
    return outcome.groupby(["comparison", "query_kind"], as_index=False)[
        ["wins", "ties", "losses"]].sum()


KINDS_FILE = "query_kinds.csv"
"""What each query kind can tell (``kind_figures``), written beside chosen_config.yaml."""


def kinds_table(used: UserEvidence) -> Table:
    """The figures of each query kind, the kinds the verdict reads highlighted."""
    frame = used.figures.drop(columns=["best_config"], errors="ignore")
    reads = frame["query_kind"].isin(used.kinds) if used.kinds else pd.Series(
        used.used, index=frame.index)
    return Table(frame, highlight=reads)


def written_links(choice: Choice, written: list[Path], out_dir: str | os.PathLike):
    """What the export cell shows: the choice in one sentence and a link to each file written
    (named relative to ``out_dir``, where a report's pages sit beside them), never the files'
    text: chosen_config.yaml is read where it is, whole."""
    from IPython.display import HTML

    links = "".join(f'<li><a href="{escape(os.path.relpath(path, out_dir))}">'
                    f"{escape(path.name)}</a></li>" for path in written)
    return HTML(f"<p><b>Chosen: {escape(label(choice.chosen))}</b> "
                f"({escape(choice.chosen['config_id'])}). {escape(verdict_text(choice))}</p>"
                f"<p>Written:</p><ul>{links}</ul>")


def export(choice: Choice, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``chosen_config.yaml``, ``query_kinds.csv`` (what each query kind could tell,
    the kinds read marked ``used``) and ``constraint_margins.svg`` (each config's margin to
    each constraint, drawn whether or not one met them all) into ``out_dir``."""
    written = [export_choice(choice, out_dir)]
    used = choice.used
    if used is not None and not used.figures.empty:
        reads = (used.figures["query_kind"].isin(used.kinds) if used.kinds
                 else pd.Series(used.used, index=used.figures.index))
        written.append(write_text_atomic(Path(out_dir) / KINDS_FILE, csv_text(
            used.figures.assign(used=reads))))
    table = margins(choice.candidates, choice.rule)
    if not table.empty:
        svg = charts.to_svg(charts.constraint_margins(table))
        written.append(write_text_atomic(Path(out_dir) / "constraint_margins.svg", svg))
    return written
