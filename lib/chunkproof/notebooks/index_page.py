"""The report's index.html: the choice first, as a picture and in words (every config's
primary metric with its interval, the trade-off against bundle size, the runner-up named and
the verdict said), then what to know before reading the numbers (the corpus load's warnings
among it: how many, the first few, a link to them all), the headline table, the notebooks with
their status and time, links to every view and file, and last how to apply the pick (the
command line, Python, LangChain, LlamaIndex). Rendered from a Jinja2 template with every value
escaped; the tables through ``viz.tables``."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import yaml

from ..evaluation.choice.candidates import candidates as choice_candidates
from ..evaluation.choice.mode_candidates import by_candidate, candidate_id, mode_suffix
from ..evaluation.choice.rules import INDEX_TOKENS, ChoiceRule
from ..evaluation.retrieval.modes import PLAIN
from ..evaluation.run import tables
from ..evaluation.run.runs import SweepResult, load_run
from ..evaluation.run.sweep import KEY_METRICS
from ..util.atomic import write_text_atomic
from ..util.paths import real_path
from ..viz import charts, choice_charts
from ..viz.tables import interval_text, styled, table_html

TEMPLATE = "index.html.j2"
SWEEP_FILES = ("run.json", "summary.csv", "chunk_stats.csv", "significance.csv",
               "per_query.parquet", "retrieved.parquet", "chunks.parquet", "chosen_config.yaml",
               "constraint_margins.svg", "query_kinds.csv", tables.DOCUMENT_WARNINGS.file)


def template() -> jinja2.Template:
    """The index template shipped in this package, every value HTML-escaped."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("chunkproof.notebooks", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template(TEMPLATE)


def chosen_config(out_dir: Path) -> dict:
    """chosen_config.yaml of the report folder as a dict ({} when 06 wrote none)."""
    path = out_dir / "chosen_config.yaml"
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def rule_of(data: dict) -> ChoiceRule:
    """The rule chosen_config.yaml records (its extra descriptive keys left out)."""
    recorded = data.get("rule") or {}
    return ChoiceRule.model_validate({k: v for k, v in recorded.items()
                                      if k in ChoiceRule.model_fields})


@dataclass(frozen=True, slots=True)
class ChoiceView:
    """What the index says about the choice, each field plain text."""

    chosen: str
    config_id: str
    runner_up: str
    verdict: tuple[str, ...]
    """The verdict's sentences: what decided it, the study, how sure, what would settle it."""
    decided_by: str
    note: str
    metric: str
    constraints: str
    meets_rule: bool
    margins: bool
    reach: tuple[tuple[str, tuple[str, ...]], ...]
    """Titled lists of what the rule left out or does not apply (only those not empty)."""
    comparison: str = ""
    """The paired test of chosen against runner-up on the user's evidence."""


def chosen_candidate(data: dict) -> str:
    """The candidate id of chosen_config.yaml's config in its retrieval mode."""
    return candidate_id(str(data.get("config_id", "")), str(data.get("retrieval_mode") or PLAIN))


def verdict_sentences(data: dict) -> tuple[str, ...]:
    """The verdict as chosen_config.yaml records it, one sentence an item: what decided it,
    the study's line, how sure it is (the calibrated figure), what would settle it."""
    study = data.get("study") or {}
    confidence = data.get("confidence") or {}
    settle = data.get("to_settle") or {}
    lines = [str(x) for x in (data.get("decision") or data.get("verdict"), study.get("line"),
                              confidence.get("text")) if x]
    if settle.get("text"):
        lines.append(f"To settle it against {settle.get('against')}: {settle['text']}.")
    return tuple(line for line in lines if line)


def choice_view(out_dir: Path, data: dict) -> ChoiceView:
    chunker, runner = data.get("chunker") or {}, data.get("runner_up") or {}
    rule = data.get("rule") or {}
    return ChoiceView(
        chosen=(f"{chunker.get('strategy')}/{chunker.get('size')} {chunker.get('unit', '')}"
                + mode_suffix(chosen_candidate(data))),
        config_id=str(data.get("config_id", "")),
        runner_up=(f"{runner['strategy']}/{runner['size']}"
                   + mode_suffix(str(runner.get("config_id", ""))) if runner else ""),
        verdict=verdict_sentences(data), decided_by=str(data.get("decided_by") or ""),
        note=str(data.get("note") or ""), metric=str(rule.get("primary_metric", "")),
        constraints=", ".join(rule.get("constraints") or []),
        meets_rule=data.get("meets_rule", True) is not False,
        margins=(out_dir / "constraint_margins.svg").is_file(), reach=reach_lists(data),
        comparison=str(data.get("comparison") or ""))


REACH = (("excluded_by_constraints", "Excluded by a constraint"),
         ("constraints_not_binding", "Constraints that do not bind this retriever"),
         ("identical_configs", "Identical to the chosen config (same chunks, scored once)"))


def reach_lists(data: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The titled lists chosen_config.yaml holds about the rule's reach, empty ones left out."""
    return tuple((title, tuple(str(item) for item in data[key]))
                 for key, title in REACH if data.get(key))


def candidate_table(table: pd.DataFrame, rule: ChoiceRule) -> pd.DataFrame:
    """The candidates as the index lists them: config, role, the primary metric with its
    interval, the index each costs and its chunk sizes, what a constraint excludes."""
    metric = rule.primary_metric
    shown = pd.DataFrame({
        "config": charts.config_label(table.drop(columns=["tokens_p50", "tokens_p95"])),
        "role": table["role"],
        metric: [interval_text(m, lo, hi) for m, lo, hi in zip(
            table[metric], table["ci_low"], table["ci_high"], strict=True)],
        "index tokens": table.get(INDEX_TOKENS),
        "chunk tokens p50": table["tokens_p50"], "chunk tokens p95": table["tokens_p95"],
        "excluded by": [", ".join(f) if f else (f"same chunks as {s}" if s else "")
                        for f, s in zip(table["failed"], table["same_as"], strict=True)],
    })
    return shown


def choice_sections(run: SweepResult | None, data: dict) -> tuple[str, str]:
    """The picture (inline SVG) and the candidates table of the choice, each "" when the
    run or the choice is missing."""
    if run is None or not data:
        return "", ""
    rule = rule_of(data)
    table = choice_candidates(run, rule)
    chosen = str(data.get("config_id", ""))
    runner = (data.get("runner_up") or {}).get("config_id")
    table = table.assign(role=choice_charts.roles(table, chosen, runner))
    order = table.sort_values(rule.primary_metric, ascending=False, kind="stable")
    picture = charts.to_svg(choice_charts.choice_picture(order, rule.primary_metric,
                                                         chosen=chosen, runner_up=runner))
    shown = candidate_table(order, rule)
    return picture, table_html(styled(shown, highlight=order["config_id"].eq(chosen)))


def headline_table(run: SweepResult | None, chosen: str) -> str:
    """The key metrics over all queries, ``mean [interval]``, the chosen config highlighted."""
    if run is None:
        return "<p class='missing'>No sweep results to show.</p>"
    names = [m.format(k=run.params.k) for m in KEY_METRICS]
    names = [n for n in names if n in set(run.summary["metric"])]
    table = charts.results_table(run.summary, names)
    marks = pd.Series(False, index=table.index)
    if chosen:
        row = run.chunk_stats[run.chunk_stats["config_id"] == chosen]
        label = charts.config_label(row.drop(columns=["tokens_p50", "tokens_p95"]))
        marks = table["config"].isin(set(label))
    return table_html(styled(table, highlight=marks))


def run_notes(run: SweepResult | None) -> list[str]:
    if run is None:
        return []
    info = run.run_info
    items = [*info.get("warnings", []), (info.get("queries_dropped") or {}).get("reason", ""),
             (info.get("query_split") or {}).get("note", "")]
    return [str(item) for item in items if item]


def kinds_html(out_dir: Path) -> str:
    """query_kinds.csv (what each query kind can tell) as a table, the kinds used
    highlighted; "" when 06 wrote none."""
    path = out_dir / "query_kinds.csv"
    if not path.is_file():
        return ""
    frame = pd.read_csv(path).drop(columns=["best_config"], errors="ignore")
    used = frame.pop("used") if "used" in frame else pd.Series(False, index=frame.index)
    return table_html(styled(frame, highlight=used.astype(bool)))


FIRST_WARNINGS = 5
"""Warnings of the corpus load shown on the index; the rest are in the linked file."""


def load_warnings(out_dir: Path) -> dict[str, Any] | None:
    """The corpus load's warnings the sweep wrote (document_warnings.csv): their number, the
    count per kind, the first ``FIRST_WARNINGS`` and the file; None when there is no file."""
    if not (out_dir / tables.DOCUMENT_WARNINGS.file).is_file():
        return None
    frame = tables.DOCUMENT_WARNINGS.read(out_dir)
    counts = frame["kind"].value_counts()
    return {"count": len(frame), "file": tables.DOCUMENT_WARNINGS.file,
            "kinds": ", ".join(f"{kind} {n}" for kind, n in counts.items()),
            "first": frame.head(FIRST_WARNINGS).to_dict("records")}


def _run(out_dir: Path) -> tuple[SweepResult | None, str]:
    try:
        return by_candidate(load_run(out_dir)), ""
    except Exception as err:  # the index still lists what ran
        return None, f"No sweep results to show ({err})."


def run_rows(runs) -> list[dict[str, Any]]:
    return [{"name": r.name, "html": r.html.name if r.html else "",
             "notebook": r.notebook.name if r.notebook and r.notebook.is_file() else "",
             "status": r.status, "error": r.error,
             "took": f"{r.seconds:.1f} s" if r.source else "no such notebook"} for r in runs]


def from_report(out_dir: Path, path: str) -> str:
    """``path`` as a command run in the report folder ``out_dir`` names it: relative to that
    folder, or under ``~`` when it lies in the home folder and the report does not (a relative
    path would spell out the home folder's name)."""
    target, here = Path(real_path(path)), out_dir.resolve()
    try:
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        home = None
    if home is not None and target.is_relative_to(home) and not here.is_relative_to(home):
        return "~/" + target.relative_to(home).as_posix()
    return Path(os.path.relpath(target, here)).as_posix()


def shell_word(path: str) -> str:
    """``path`` as one shell word, a leading ``~/`` left for the shell to expand."""
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:]) if path[2:] else "~"
    return shlex.quote(path)


def apply_snippets(out_dir: Path, corpus: str) -> tuple[tuple[str, str], ...]:
    """How to apply the chosen config, as (where, code): the command line, Python, LangChain
    and LlamaIndex, each run in the report folder ``out_dir`` and naming its
    chosen_config.yaml and the corpus from there (``from_report``), so the page can name no
    folder of this machine and what it prints still runs."""
    config, folder = "chosen_config.yaml", from_report(out_dir, corpus)
    return (
        ("Command line: one JSON object per chunk (text, span, lines, breadcrumb, embed_text, "
         "context_text)",
         f"chunkproof chunk --corpus {shell_word(folder)} --config {config} "
         "--out chunks.jsonl"),
        ("Python",
         "from chunkproof import chunk_corpus, load_config, load_corpus\n"
         f"chunks = chunk_corpus(load_corpus({folder!r}), load_config({config!r}))"),
        ("LangChain (the langchain extra)",
         "from chunkproof.integrations.langchain import ChunkproofTextSplitter\n"
         f"splitter = ChunkproofTextSplitter({config!r})"),
        ("LlamaIndex (the llamaindex extra)",
         "from chunkproof.integrations.llamaindex import ChunkproofNodeParser\n"
         f"parser = ChunkproofNodeParser.from_config({config!r})"),
    )


def write_index(out_dir: Path, runs, params, *, notes: Sequence[str] = ()) -> Path:
    """``out_dir/index.html``; ``notes`` are said before the numbers, with the run's own."""
    run, problem = _run(out_dir)
    data = chosen_config(out_dir)
    try:
        picture, candidates = choice_sections(run, data)
    except Exception as err:  # a picture that cannot be drawn never hides the rest
        picture, candidates = "", f"<p class='missing'>No picture of the choice ({err}).</p>"
    notebook_pages = {f"{r.name}.html" for r in runs} | {"index.html"}
    page = template().render(
        name=out_dir.name, params=params, written=f"{datetime.now():%Y-%m-%d %H:%M}",
        total=sum(r.seconds for r in runs), runs=run_rows(runs),
        choice=choice_view(out_dir, data) if data else None,
        no_choice=problem or "No chosen_config.yaml was written (see notebook 06).",
        picture=picture, candidates=candidates, notes=[*notes, *run_notes(run)],
        kinds=kinds_html(out_dir),
        load_warnings=load_warnings(out_dir),
        headline=headline_table(run, chosen_candidate(data)),
        views=[p.name for p in sorted(out_dir.glob("*.html")) if p.name not in notebook_pages],
        files=[n for n in SWEEP_FILES if (out_dir / n).is_file()],
        apply=apply_snippets(out_dir, str(params.corpus)) if data else ())
    return write_text_atomic(out_dir / "index.html", page)
