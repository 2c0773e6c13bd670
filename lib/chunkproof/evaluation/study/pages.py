"""The study in words and tables, made from its results file: the finding in one sentence,
the sites, the pooled table of each reader budget, the heterogeneity, the rule's calibration
and its leave-one-site-out validation (``docs/benchmarks.md``, docs/statistics.md's
validation table and the README's sentence are made from these)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .results import StudyResults

PRIMARY = ("bm25", "answer_hit@b1024")
SMALLEST = 300
"""The size the finding compares the best against."""


def _rows(results: StudyResults, name: str, retriever: str, metric: str) -> pd.DataFrame:
    rows = [r for r in results.table(name) if r.get("retriever") == retriever
            and r.get("metric") == metric]
    return pd.DataFrame(rows)


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def finding(results: StudyResults, retriever: str = PRIMARY[0],
            metric: str = PRIMARY[1]) -> str:
    """The study's finding in one sentence: the pooled best at the default budget, the configs
    the pooled evidence cannot separate from it, and how far the smallest size falls."""
    versus = _rows(results, "versus_best", retriever, metric)
    if versus.empty:
        return "The study holds no result at the default retriever and budget."
    best = str(versus["best"].iloc[0])
    rest = versus[versus["config"] != best]
    tied = sorted(rest.loc[~rest["separated"].astype(bool), "config"])
    small = rest[rest["config"].str.split(" ").str[0].str.endswith(f"/{SMALLEST}")]
    meta = results.meta
    text = (f"Over {len(meta.get('sites', []))} documentation sites and "
            f"{meta.get('questions')} written questions, at a reader budget of "
            f"{metric.rsplit('b', 1)[-1]} tokens with {retriever.upper()}, {best} answers the "
            f"most questions; the pooled evidence cannot separate "
            f"{_listed(tied) if tied else 'no other config'} from it")
    if len(small):
        below = small["effect"]  # the best's score minus each: how far each falls below
        separated = int(small["separated"].astype(bool).sum())
        text += (f", and every {SMALLEST}-char config answers a share of them "
                 f"{below.min():.2f} to {below.max():.2f} lower ({separated} of {len(small)} "
                 "set below it by the pooled evidence)")
    return text + "."


def _listed(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A frame as a Markdown pipe table (a ``|`` in a cell escaped)."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")
    lines = ["| " + " | ".join(map(cell, frame.columns)) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def sites_table(results: StudyResults) -> pd.DataFrame:
    """A row per site: what it is, its pages and questions, and where it comes from."""
    rows = []
    for site in results.prior.sites:
        source = results.sources.get(site.name, {})
        rows.append({"site": site.name, "dialect": source.get("dialect", ""),
                     "pages asked about": len(set(site.pages)),
                     "questions": len(site.questions), "licence": source.get("licence", ""),
                     "repository": source.get("repository", ""),
                     "commit": str(source.get("commit", ""))[:10]})
    return pd.DataFrame(rows)


def pooled_markdown(results: StudyResults, retriever: str, metric: str) -> str:
    """The pooled table of one retriever and metric: each config's pooled mean score, its
    difference from the pooled best with the 95% and prediction intervals, I², and whether
    the pooled evidence sets it below the best."""
    versus = _rows(results, "versus_best", retriever, metric)
    pooled = _rows(results, "pooled", retriever, metric)
    if versus.empty:
        return "No result."
    means = dict(zip(pooled["config"], pooled["mean"], strict=True))
    versus = versus.assign(mean=versus["config"].map(means)).sort_values(
        ["mean", "config"], ascending=[False, True])
    lines = ["| config | pooled mean | minus the best | 95% interval | new site (prediction) "
             "| I² | set below the best |", "|---|---|---|---|---|---|---|"]
    for row in versus.itertuples():
        if row.config == row.best:
            lines.append(f"| **{row.config}** | {row.mean:.3f} | (best) | | | | |")
            continue
        lines.append(f"| {row.config} | {row.mean:.3f} | {_signed(-row.effect)} | "
                     f"{_signed(-row.ci_high)} to {_signed(-row.ci_low)} | "
                     f"{_signed(-row.pi_high)} to {_signed(-row.pi_low)} | {row.i2:.0%} | "
                     f"{'yes' if row.separated else 'no'} |")
    return "\n".join(lines)


def calibration_markdown(results: StudyResults, retriever: str = PRIMARY[0],
                         metric: str = PRIMARY[1]) -> str:
    """Per rule and number of written questions: picks inside the held-out site's
    inseparable set, within 0.05 of its best, and the mean shortfall."""
    table = _rows(results, "calibration", retriever, metric)
    if table.empty:
        return "No calibration."
    lines = ["| rule | questions | draws | inside | within 0.05 | mean shortfall | worst |",
             "|---|---|---|---|---|---|---|"]
    for row in table.sort_values(["rule", "questions"], ascending=[True, True]).itertuples():
        asked = "mined only" if row.questions == 0 else str(row.questions)
        lines.append(f"| {row.rule} | {asked} | {row.draws} | {row.inside:.0%} | "
                     f"{row.within:.0%} | {row.mean_regret:.3f} | {row.worst_regret:.3f} |")
    return "\n".join(lines)


def validation_markdown(results: StudyResults) -> str:
    """Leave-one-site-out: for each site, the old and the new rule, with mined questions only
    and with 20 and 40 written ones: share of picks inside and mean shortfall."""
    table = pd.DataFrame(results.table("validation"))
    if table.empty:
        return "No validation."
    sizes = [n for n in (0, 20, 40) if n in set(table["questions"])]
    header = ["site"] + [f"{rule} {'mined' if n == 0 else n}" for n in sizes
                         for rule in ("old", "new")]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for site, rows in table.groupby("site", sort=True):
        cells = [str(site)]
        for n in sizes:
            for rule in ("old", "new"):
                hit = rows[(rows["questions"] == n) & (rows["rule"] == rule)]
                cells.append("" if hit.empty else
                             f"{hit['inside'].iloc[0]:.0%} / {hit['mean_regret'].iloc[0]:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def heterogeneity(results: StudyResults, retriever: str, metric: str) -> dict[str, Any]:
    """The spread of I² and tau over the configs' effects against the reference."""
    pooled = _rows(results, "pooled", retriever, metric)
    pooled = pooled[pooled["config"] != pooled["against"]]
    if pooled.empty:
        return {}
    return {"i2_median": float(pooled["i2"].median()), "i2_max": float(pooled["i2"].max()),
            "tau_max": float(pooled["tau2"].max() ** 0.5),
            "zero": int((pooled["tau2"] == 0).sum()), "configs": len(pooled)}


def kinds_markdown(results: StudyResults) -> str:
    """Each mined kind on each site (Spearman against the written questions; a check mark
    where its best config is inside the written set), pooled, and whether it decides and
    why (the ``kinds`` and ``kind_sites`` tables)."""
    kinds, per_site = results.table("kinds"), pd.DataFrame(results.table("kind_sites"))
    if not kinds or per_site.empty:
        return "The shipped study measured no mined kind (it was run without `--mined`)."
    sites = sorted(set(per_site["site"]))
    lines = ["| kind | " + " | ".join(sites) + " | pooled rho [95% CI] | decides |",
             "|---|" + "---|" * (len(sites) + 2)]
    for row in sorted(kinds, key=lambda r: (-_or(r["rho"], -9.0), r["kind"])):
        mine = per_site[per_site["kind"] == row["kind"]].set_index("site")
        cells = [_site_cell(mine, site) for site in sites]
        pooled = ("" if _or(row["rho"], math.nan) != _or(row["rho"], math.nan) else
                  f"{row['rho']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]")
        verdict = "yes" if row["admitted"] else f"no: {row['why']}"
        lines.append(f"| `{row['kind']}` | " + " | ".join(cells) + f" | {pooled} | {verdict} |")
    return "\n".join([*lines, *_ceiling_lines(results.table("ceiling"), sites)])


def _ceiling_lines(rows: list[dict[str, Any]], sites: list[str]) -> list[str]:
    """The written questions against themselves (the ``ceiling`` table): split-half
    reliability, and the rho a perfect kind could show, on each site."""
    if not rows:
        return []
    by_site = {r["site"]: r for r in rows}

    def cell(site: str, column: str) -> str:
        value = _or(by_site.get(site, {}).get(column), math.nan)
        return "" if value != value else f"{value:+.2f}"

    empty = " |  | "
    return ["| *written vs written (split-half, Spearman-Brown)* | "
            + " | ".join(cell(s, "reliability") for s in sites) + empty + "reference |",
            "| *ceiling: a perfect kind (sqrt of the above)* | "
            + " | ".join(cell(s, "ceiling") for s in sites) + empty + "reference |"]


def _or(value: Any, default: float) -> float:
    return default if value is None or value != value else float(value)


def _site_cell(rows: pd.DataFrame, site: str) -> str:
    if site not in rows.index or _or(rows.loc[site, "spearman"], math.nan) != _or(
            rows.loc[site, "spearman"], math.nan):
        return ""
    mark = " ✓" if rows.loc[site, "pick_inside"] else ""
    return f"{float(rows.loc[site, 'spearman']):+.2f}{mark}"
