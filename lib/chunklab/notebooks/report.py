"""A shareable report: every notebook executed headless with papermill, exported to offline HTML."""

from __future__ import annotations

import html
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

from ..errors import NotebookNotFoundError, WriteError
from ..evaluation.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
    default_contrasts,
)
from ..evaluation.engine import Engine
from ..evaluation.runs import load_run, refuse_other_run, writing
from ..evaluation.structure import GOLD_FILE
from ..evaluation.sweep import headline
from ..util.atomic import remove_leftovers, write_atomic, write_text_atomic
from ..util.paths import shown_paths
from .params import repo_root, resolve_output
from .params import validate as validate_params
from .strategy_sweep import SweepInputs, sweep_params

KERNEL = "python3"
DEFAULT_NOTEBOOKS = ("01_corpus_profile", "02_splitter_panorama", "03_strategy_sweep",
                     "04_*", "05_*", "06_choose_and_export")
"""Run in this order; a pattern matching no notebook (04, 05 when absent) is skipped."""
SWEEP_SIZE_NOTEBOOKS = ("05_",)
"""Notebooks (by name prefix) handed SIZE = the sweep's middle size, so they compare at a size
the sweep ran; 02 and 04 keep their own page size."""
SWEEP_FILES = ("run.json", "summary.csv", "chunk_stats.csv", "significance.csv",
               "per_query.parquet", "retrieved.parquet", "chunks.parquet", "chosen_config.yaml",
               "constraint_margins.svg")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OFFLINE_TEMPLATE = """{%- extends "index.html.j2" -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block data_svg scoped -%}
<div class="jp-RenderedSVG jp-OutputArea-output {{ extra_class }}" data-mime-type="image/svg+xml">
{{ output.data["image/svg+xml"] }}
</div>
{%- endblock data_svg -%}
"""
"""nbconvert's lab template without the scripts it loads from CDNs (require.js, MathJax,
Mermaid, the widget manager), SVG outputs inlined as ``<svg>`` (like the notebook's HTML
outputs, which nbconvert does not sanitise either): the page is complete with no network."""


@dataclass
class NotebookRun:
    """One notebook of a report: where it came from, what it wrote, how long, how it ended."""

    name: str
    source: Path | None
    status: str = "missing"
    """``ok``, ``failed`` or ``missing`` (no notebook matched the name)."""
    seconds: float = 0.0
    notebook: Path | None = None
    html: Path | None = None
    error: str = ""


@dataclass
class Report:
    """The report folder, its index page and one entry per notebook."""

    out_dir: Path
    index: Path
    runs: list[NotebookRun] = field(default_factory=list)
    strict: bool = False
    """Whether a choice that meets no rule makes the exit code non-zero."""

    @property
    def failed(self) -> list[NotebookRun]:
        return [r for r in self.runs if r.status == "failed"]

    @property
    def unmet_rule(self) -> str:
        """The note of a chosen_config.yaml whose config meets no rule (else "")."""
        data = _chosen(self.out_dir)
        return str(data.get("note", "")) if data and data.get("meets_rule") is False else ""

    @property
    def exit_code(self) -> int:
        """1 when a notebook failed, or (``strict``) when no config meets the rule; else 0."""
        return 1 if self.failed or (self.strict and self.unmet_rule) else 0

    def __fspath__(self) -> str:
        return str(self.index)


def default_run_name() -> str:
    """A folder name for a new run: the local time, e.g. ``20250101-120000``."""
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def corpus_file(corpus: str | os.PathLike, name: str) -> str:
    """``<corpus>/<name>`` when that file exists, else ""."""
    candidate = Path(corpus) / name
    return str(candidate) if candidate.is_file() else ""


def default_queries(corpus: str) -> str:
    """``<corpus>/queries.jsonl`` when that file exists, else "" (queries mined from the
    corpus): what ``chunklab report`` uses when no query file is named."""
    return corpus_file(corpus, "queries.jsonl")


def default_gold(corpus: str) -> str:
    """``<corpus>/headings.gold.yaml`` when that file exists, else "" (05 then runs without
    scoring heading detection): the GOLD the report hands notebook 05."""
    return corpus_file(corpus, GOLD_FILE)


def middle_size(sizes: Sequence[int]) -> int:
    """The middle of the sorted sizes (of two middles, the larger)."""
    ordered = sorted(sizes)
    return ordered[len(ordered) // 2]


def notebooks_dir() -> Path:
    root = repo_root()
    if root is None:
        raise NotebookNotFoundError("no repo root (a folder holding pyproject.toml) above the "
                                "working folder: cannot find notebooks/")
    return root / "notebooks"


def find_notebooks(names: Sequence[str]) -> list[tuple[str, Path | None]]:
    """(name, path) per entry: an .ipynb path as given, else a name or glob pattern under
    notebooks/ (a pattern may match several; one matching nothing gives path None)."""
    found: list[tuple[str, Path | None]] = []
    for entry in names:
        if str(entry).endswith(".ipynb"):
            path = Path(entry)
            found.append((path.stem, path if path.is_file() else None))
            continue
        matches = sorted(notebooks_dir().glob(f"{entry}.ipynb"))
        found += [(m.stem, m) for m in matches] or [(str(entry), None)]
    return found


def declared_parameters(path: Path) -> set[str]:
    """Names in the notebook's ``parameters`` cell (only those are passed to it)."""
    import papermill

    return set(papermill.inspect_notebook(str(path)))


def html_exporter():
    """nbconvert's HTMLExporter on the offline lab template, charts inlined as <svg>."""
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab", template_file="chunklab_offline.html.j2",
                        extra_loaders=[jinja2.DictLoader(
                            {"chunklab_offline.html.j2": _OFFLINE_TEMPLATE})])


def to_html(notebook: Path) -> Path:
    """``notebook`` exported next to itself as HTML with nothing loaded from the network."""
    import nbformat

    body, _ = html_exporter().from_notebook_node(nbformat.read(notebook, as_version=4))
    return write_text_atomic(notebook.with_suffix(".html"), body)


def share(path: Path, folders: Sequence[str | os.PathLike]) -> Path:
    """Rewrite the text file ``path`` with the machine's folders (``folders``, the repo root,
    the home folder) named as ``shown_paths`` names them, atomically."""
    base = repo_root() or Path.cwd()
    text = path.read_text(encoding="utf-8")
    return write_text_atomic(path, shown_paths(text, [f for f in folders if f], base=base))


def run_notebook(name: str, source: Path, out_dir: Path, values: dict) -> NotebookRun:
    """Execute ``source`` into ``out_dir/<name>.ipynb`` (cwd = repo root), then export it."""
    import papermill

    notebook = out_dir / f"{name}.ipynb"
    run = NotebookRun(name, source, notebook=notebook)
    parameters = {k: v for k, v in values.items() if k in declared_parameters(source)}
    began = time.perf_counter()

    def execute(tmp: Path) -> None:  # into a temporary file, renamed over the notebook once
        try:                          # complete: a full disk never leaves half a notebook
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*does not end in one of")
                papermill.execute_notebook(str(source), str(tmp), parameters=parameters,
                                           kernel_name=KERNEL,
                                           cwd=str(repo_root() or Path.cwd()),
                                           progress_bar=False, log_output=False)
            run.status = "ok"
        except OSError:
            raise
        except Exception as err:  # a failed notebook is reported; the others still run
            run.status, run.error = "failed", _describe(err)
            if not tmp.stat().st_size:
                raise

    try:
        write_atomic(notebook, execute)
    except Exception as err:
        run.status = "failed"
        run.error = run.error or (str(err) if isinstance(err, WriteError) else _describe(err))
    run.seconds = time.perf_counter() - began
    executed = out_dir / f"{name}.ipynb"
    if executed.is_file():
        try:
            share(executed, [out_dir, values.get("CORPUS", "")])
            run.html = to_html(executed)
        except Exception as err:  # reported in the index, never fatal
            run.error = (run.error + "\n" if run.error else "") + f"HTML export: {err}"
    return run


def _describe(err: Exception) -> str:
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(err).__name__}: {err}"
    return _ANSI.sub("", text).strip()


def notebook_values(out_dir: Path, params, *, queries: str, name: str = "",
                    engine: Engine | None = None) -> dict:
    """Every parameter a report notebook may declare, with this report's values (only the
    ones notebook ``name`` declares are passed to it). Every value works on any corpus: 02
    and 04 pick their pages, 05 scores headings only when the corpus has a gold file."""
    k = params.k
    engine = engine or Engine()
    first = "answer_hit" if queries else "hit"  # mined queries carry gold sections, no answer
    values = {
        "CORPUS": params.corpus, "QUERIES": params.queries, "OUT_DIR": str(out_dir),
        "RUN_DIR": str(out_dir), "STRATEGIES": list(params.strategies),
        "SIZES": list(params.sizes), "RETRIEVERS": list(params.retrievers), "K": k,
        "HELD_OUT_QUERIES": params.held_out_queries, "SPLIT_SEED": params.split_seed,
        "BUDGETS": list(params.budgets), "CONTRASTS": list(params.contrasts),
        "ALL_PAIRS": params.all_pairs, "ENGINE": engine.kind, "WORKERS": engine.workers or 0,
        "ADDRESS": engine.address, "RETRIEVER": params.retrievers[0], "DOC": "", "PRESET_DOCS": [],
        "GOLD": default_gold(params.corpus), "PRIMARY_METRIC": f"{first}@{k}",
        "METRICS": [f"{metric}@{k}" for metric in (first, "recall", "bundle_efficiency",
                                                    *([] if queries else ["section_efficiency"]),
                                                    "code_integrity")],
    }
    if name.startswith(SWEEP_SIZE_NOTEBOOKS):
        values["SIZE"] = middle_size(params.sizes)
    return values


def build_report(out_dir: str | os.PathLike, *, corpus: str = DEFAULT_CORPUS,
                 queries: str = "data/sample/queries.jsonl", held_out_queries: str = "",
                 split_seed: int = 0, sizes: Sequence[int] = DEFAULT_SIZES,
                 strategies: Sequence[str] = DEFAULT_STRATEGIES,
                 retrievers: Sequence[str] = DEFAULT_RETRIEVERS, k: int = DEFAULT_K,
                 budgets: Sequence[int] = DEFAULT_BUDGETS,
                 contrasts: Sequence[str] | None = None,
                 strict: bool = False, notebooks: Sequence[str] = DEFAULT_NOTEBOOKS,
                 progress: bool = True, all_pairs: bool = False,
                 engine: Engine | None = None) -> Report:
    """Execute the notebooks in order into ``out_dir`` (each as .ipynb and offline .html; 03
    writes the sweep there and 06 reads it back) and write ``out_dir/index.html``.

    Parameters are checked first (a bad one raises ConfigError naming it). A notebook that
    fails is reported in the index with its error and the rest still run. When no config
    meets the choice rule, 06 still completes with the closest config and the margin chart;
    the returned Report's ``exit_code`` is 1 when a notebook failed, or, with ``strict``,
    when no config met the rule. ``contrasts`` None gives the default planned contrasts
    whose strategies are both swept. ``engine`` says where the sweep runs (default: every
    local core) and ``all_pairs`` asks for every pair of configs to be tested.
    """
    params = sweep_params(validate_params(
        SweepInputs, CORPUS=corpus, QUERIES=queries, HELD_OUT_QUERIES=held_out_queries,
        SPLIT_SEED=split_seed, STRATEGIES=list(strategies), SIZES=list(sizes),
        RETRIEVERS=list(retrievers), K=k, BUDGETS=list(budgets),
        CONTRASTS=default_contrasts(strategies) if contrasts is None else list(contrasts),
        ALL_PAIRS=all_pairs))
    out = resolve_output(out_dir, name="OUT_DIR")
    refuse_other_run(out, params.run_id, name="OUT_DIR")
    runs = []
    found = find_notebooks(notebooks)
    with writing(out, kind="report", name="OUT_DIR"):  # a second report into it is refused
        remove_leftovers(out, names=[f"{name}{suffix}" for name, _ in found
                                     for suffix in (".ipynb", ".html")])
        for i, (name, source) in enumerate(found, start=1):
            values = notebook_values(out, params, queries=queries, name=name, engine=engine)
            run = run_notebook(name, source, out, values) if source else NotebookRun(name, None)
            runs.append(run)
            if progress and source:
                print(f"[{i}/{len(found)}] {name}: {run.status} ({run.seconds:.1f} s)"
                      + (f" - {run.error.splitlines()[0]}" if run.error else ""), flush=True)
        return Report(out, write_index(out, runs, params), runs, strict)


# --- index.html ---------------------------------------------------------------------------

_STYLE = """<style>
body{font:14px/1.5 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1b1b1b}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;
text-align:left}th{background:#f1f5f9}.ok{color:#15803d;font-weight:600}
.failed{color:#b91c1c;font-weight:600}.missing{color:#6b7280}pre{white-space:pre-wrap;
margin:0;font-size:12px;color:#b91c1c}.meta{color:#475569}
</style>"""


def _notebook_rows(runs: list[NotebookRun]) -> str:
    rows = []
    for run in runs:
        link = (f'<a href="{html.escape(run.html.name)}">{html.escape(run.name)}</a>'
                if run.html else html.escape(run.name))
        ipynb = (f'<a href="{html.escape(run.notebook.name)}">.ipynb</a>'
                 if run.notebook and run.notebook.is_file() else "")
        took = f"{run.seconds:.1f} s" if run.source else "no such notebook"
        error = f"<pre>{html.escape(run.error)}</pre>" if run.error else ""
        rows.append(f'<tr><td>{link}</td><td>{ipynb}</td><td class="{run.status}">'
                    f"{run.status}</td><td>{took}</td><td>{error}</td></tr>")
    return ("<table><tr><th>notebook</th><th>executed</th><th>status</th><th>time</th>"
            "<th>error</th></tr>" + "".join(rows) + "</table>")


def _headline(out_dir: Path) -> str:
    try:
        table = headline(load_run(out_dir))
        table.columns.name = None
    except Exception as err:  # the index still lists what ran
        return f"<p class='missing'>No sweep results to show ({html.escape(str(err))}).</p>"
    return table.to_html(index=False, border=0)


def _chosen(out_dir: Path) -> dict:
    path = out_dir / "chosen_config.yaml"
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _choice(out_dir: Path) -> str:
    data = _chosen(out_dir)
    if not data:
        return "<p class='missing'>No chosen_config.yaml was written.</p>"
    chunker = data.get("chunker", {})
    met = data.get("meets_rule", True)
    head = ("" if met else "<p class='failed'>No config meets every constraint: the closest "
            "one is named below, reported but not endorsed (see the margin chart in 06).</p>")
    note = f"<p>{html.escape(str(data['note']))}</p>" if data.get("note") else ""
    chosen_on = {"tuning": "the tuning queries", "all": "all queries (too few to split)"}.get(
        str(data.get("chosen_on")), "all queries")
    held = data.get("held_out") or {}
    held_text = (f"<p>Held out ({held.get('queries')} queries, no part in the choice): "
                 f"{html.escape(str(held.get('margin_over_runner_up') or 'no runner-up'))}"
                 "</p>" if held else "<p class='missing'>No held-out estimate: the queries "
                 "were too few to split.</p>")
    chart = ("<p><a href='constraint_margins.svg'>margin of every config to every constraint"
             "</a></p>" if (out_dir / "constraint_margins.svg").is_file() else "")
    reach = _listed("Excluded by a constraint", data.get("excluded_by_constraints"))
    reach += _listed("Constraints that do not bind this retriever",
                     data.get("constraints_not_binding"))
    reach += _listed("Identical to the chosen config (same chunks, scored once)",
                     data.get("identical_configs"))
    return (f"{head}<p><b>{html.escape(str(chunker.get('strategy')))}</b>, size "
            f"{chunker.get('size')} {html.escape(str(chunker.get('unit')))} (config "
            f"{html.escape(str(data.get('config_id')))}), chosen on {chosen_on}; against the "
            f"runner-up there: {html.escape(str(data.get('verdict', '')))}</p>{note}"
            f"{held_text}{reach}{chart}")


def _listed(title: str, items) -> str:
    """A titled list of ``items`` (nothing when there are none)."""
    if not items:
        return ""
    shown = "".join(f"<li>{html.escape(str(i))}</li>" for i in items)
    return f"<p>{html.escape(title)}:</p><ul>{shown}</ul>"


def _notes(out_dir: Path) -> str:
    try:
        info = load_run(out_dir).run_info
    except Exception:  # no sweep: nothing to warn about
        return ""
    items = [*info.get("warnings", []), (info.get("queries_dropped") or {}).get("reason", ""),
             (info.get("query_split") or {}).get("note", "")]
    shown = "".join(f"<li>{html.escape(str(i))}</li>" for i in items if i)
    return f"<h2>Before reading the numbers</h2><ul>{shown}</ul>" if shown else ""


def write_index(out_dir: Path, runs: list[NotebookRun], params) -> Path:
    """``out_dir/index.html``: the notebooks with status and time, the headline table, the
    chosen config and links to every sweep file present."""
    files = [f'<li><a href="{n}">{n}</a></li>' for n in SWEEP_FILES if (out_dir / n).is_file()]
    notebook_pages = {f"{r.name}.html" for r in runs} | {"index.html"}
    views = [  # the standalone chunk views notebook 04 saved beside the notebooks
        f'<li><a href="{html.escape(p.name)}">{html.escape(p.name)}</a></li>'
        for p in sorted(out_dir.glob("*.html")) if p.name not in notebook_pages
    ]
    total = sum(r.seconds for r in runs)
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>chunklab report {html.escape(out_dir.name)}</title>{_STYLE}</head><body>
<h1>chunklab report: {html.escape(out_dir.name)}</h1>
<p class="meta">Corpus {html.escape(params.corpus)} · queries {html.escape(params.queries or
'mined from the corpus')} · strategies {', '.join(params.strategies)} · sizes
{', '.join(map(str, params.sizes))} · retrievers {', '.join(params.retrievers)} · k={params.k}
· written {datetime.now():%Y-%m-%d %H:%M} · notebooks took {total:.1f} s in all</p>
<h2>Notebooks</h2>{_notebook_rows(runs)}
{_notes(out_dir)}
<h2>Chosen configuration</h2>{_choice(out_dir)}
<h2>Headline (blended over all queries)</h2>{_headline(out_dir)}
<h2>Chunk views</h2><ul>{''.join(views) or '<li>none</li>'}</ul>
<h2>Files</h2><ul>{''.join(files) or '<li>none</li>'}</ul>
</body></html>"""
    return share(write_text_atomic(out_dir / "index.html", page), [out_dir, params.corpus])
