"""A shareable report: every notebook executed headless with papermill, exported to offline HTML."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..chunking.config import make_config
from ..chunking.embedder import embedder_choice
from ..document.dialect_profile import construct_counts, constructs, slug_rule_note
from ..errors import NotebookNotFoundError, WriteError
from ..evaluation.choice.rules import default_constraints, parse_constraint
from ..evaluation.queries.mined_part import save_mined
from ..evaluation.retrieval.modes import PLAIN
from ..evaluation.run.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
    contrasts_for,
    default_primary_metric,
)
from ..evaluation.run.engine import Engine
from ..evaluation.run.run_folder import clear_run, run_folder, writing
from ..evaluation.run.sweep import load_inputs
from ..evaluation.scoring.structure import GOLD_FILE
from ..util.atomic import remove_leftovers, write_atomic, write_text_atomic
from ..util.paths import shown_paths
from .index_page import chosen_config, write_index
from .kernel_watch import check_renderer
from .kernels import KERNEL, Kernels
from .params import repo_root, resolve_output
from .params import validate as validate_params
from .sweep_inputs import SweepInputs, sweep_params
from .timing import NotebookTime, notebook_time, sweep_stages, time_lines

DEFAULT_NOTEBOOKS = ("01_corpus_profile", "02_splitter_panorama", "03_strategy_sweep",
                     "04_chunk_explorer", "05_structure_signal", "06_choose_and_export")
"""Run in this order; each must exist (a missing one is an error before anything runs)."""
PACKAGED_NOTEBOOKS = "_notebooks"
"""Where an installed chunkproof carries notebooks/ (pyproject.toml maps it into the package)."""
HEARTBEAT = 30.0
"""Seconds between "still running" lines while a notebook runs."""
VIEW_NOTEBOOK = "04_"
"""The notebook (by name prefix) that writes the standalone views beside the notebooks: the
views of an earlier report in the folder are removed before it runs again."""
SWEEP_SIZE_NOTEBOOKS = ("05_",)
"""Notebooks (by name prefix) handed SIZE = the sweep's middle size, so they compare at a size
the sweep ran; 02 and 04 keep their own page size."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OFFLINE_TEMPLATE = """{%- extends "index.html.j2" -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block data_widget_view scoped -%}
{%- if "text/html" in output.data -%}
<div class="jp-RenderedHTMLCommon jp-RenderedHTML jp-OutputArea-output {{ extra_class }}"
 data-mime-type="text/html">
{{ output.data["text/html"] }}
</div>
{%- endif -%}
{%- endblock data_widget_view -%}
{%- block footer -%}
</html>
{%- endblock footer -%}
{%- block data_svg scoped -%}
<div class="jp-RenderedSVG jp-OutputArea-output {{ extra_class }}" data-mime-type="image/svg+xml">
{{ output.data["image/svg+xml"] }}
</div>
{%- endblock data_svg -%}
"""
"""nbconvert's lab template without the scripts it loads from CDNs (require.js, MathJax,
Mermaid, the widget manager) and without the saved widget state (nothing on the page reads
it), SVG outputs inlined as ``<svg>`` (like the notebook's HTML
outputs, which nbconvert does not sanitise either), and a widget shown as the static HTML its
output carries beside it (the explorer's current view): the page is complete with no
network and has no empty cell where a widget was."""


@dataclass
class NotebookRun:
    """One notebook of a report: where it came from, what it wrote, how long, how it ended."""

    name: str
    source: Path | None
    status: str = "missing"
    """``ok``, ``failed`` or ``missing`` (no notebook matched the name)."""
    seconds: float = 0.0
    """Wall seconds: execution, then the HTML export."""
    cpu: float = 0.0
    """CPU seconds: the kernel and every process it started, and this process while it ran
    and exported the notebook."""
    export_cpu: float = 0.0
    """CPU seconds of the export alone (this process)."""
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
    note: str = ""
    """Why the report went into a subfolder of the folder asked for, or replaced the run
    there ("" when neither)."""
    seconds: float = 0.0
    """Wall seconds of the whole report."""

    def times(self) -> list[NotebookTime]:
        """Each executed notebook's time, split into kernel start, imports, cells, export."""
        found = (notebook_time(r.name, r.notebook, r.seconds, cpu=r.cpu, export_cpu=r.export_cpu)
                 for r in self.runs if r.notebook)
        return [t for t in found if t is not None]

    def time_lines(self) -> list[str]:
        """Where the time went: per notebook, the start share, the sweep's stages."""
        return time_lines(self.times(), sweep_stages(self.out_dir), self.seconds,
                          stage_cpu=sweep_stages(self.out_dir, "cpu_seconds"))

    @property
    def failed(self) -> list[NotebookRun]:
        return [r for r in self.runs if r.status == "failed"]

    @property
    def unmet_rule(self) -> str:
        """The note of a chosen_config.yaml whose config meets no rule (else "")."""
        data = chosen_config(self.out_dir)
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
    corpus): what ``chunkproof report`` uses when no query file is named."""
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
    """The notebooks of the chunkproof that is running: its source checkout's notebooks/ (an
    editable install), else the copies a built package carries (``chunkproof/_notebooks``);
    never the working folder's, which may be another project."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parents[1]
    folders = [package / PACKAGED_NOTEBOOKS]
    if (checkout / "pyproject.toml").is_file():
        folders.insert(0, checkout / "notebooks")
    for folder in folders:
        if any(folder.glob("[0-9][0-9]_*.ipynb")):
            return folder
    raise NotebookNotFoundError(f"no notebooks in {checkout / 'notebooks'} or "
                                f"{package / PACKAGED_NOTEBOOKS}: reinstall chunkproof")


def find_notebooks(names: Sequence[str]) -> list[tuple[str, Path]]:
    """(name, path) per entry: an .ipynb path as given, else a name or glob pattern of the
    package's notebooks (``notebooks_dir``); one that matches nothing raises
    NotebookNotFoundError naming it, where it looked and the notebooks there."""
    found: list[tuple[str, Path]] = []
    missing: list[str] = []
    folder = None
    for entry in names:
        if str(entry).endswith(".ipynb"):
            path = Path(entry)
            found += [(path.stem, path)] if path.is_file() else []
            missing += [] if path.is_file() else [str(entry)]
            continue
        folder = folder or notebooks_dir()
        matches = sorted(folder.glob(f"{entry}.ipynb"))
        found += [(m.stem, m) for m in matches]
        missing += [] if matches else [str(entry)]
    if missing:
        where = f" in {folder}" if folder else ""
        there = ", ".join(sorted(p.stem for p in folder.glob("*.ipynb"))) if folder else ""
        raise NotebookNotFoundError(f"no notebook {', '.join(missing)}{where}"
                                    + (f"; there are: {there}" if there else ""))
    return found


def declared_parameters(path: Path) -> set[str]:
    """Names in the notebook's ``parameters`` cell (only those are passed to it)."""
    import papermill

    return set(papermill.inspect_notebook(str(path)))


def html_exporter():
    """nbconvert's HTMLExporter on the offline lab template, charts inlined as <svg>."""
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab", template_file="chunkproof_offline.html.j2",
                        extra_loaders=[jinja2.DictLoader(
                            {"chunkproof_offline.html.j2": _OFFLINE_TEMPLATE})])


RENDERED = ("text/html", "image/svg+xml")
"""Outputs the notebook rendered itself (tables, views, charts drawn as SVG): placed in the page
as they are."""


def to_html(notebook: Path) -> Path:
    """``notebook`` exported next to itself as HTML with nothing loaded from the network. What
    the notebook already rendered (``RENDERED``) is set aside while nbconvert writes the page
    around it and put back in place after: nbconvert parses every page it writes a second
    time (to mark images and outputs for assistive tools), and the outputs, nearly all of a
    page, are not parsed again."""
    import nbformat

    node = nbformat.read(notebook, as_version=4)
    kept = set_aside(node, token := uuid.uuid4().hex)
    body, _ = html_exporter().from_notebook_node(node)
    found = re.compile(f'<span id="chunkproof-{token}-(\\d+)"></span>')
    return write_text_atomic(notebook.with_suffix(".html"),
                             found.sub(lambda m: kept[int(m[1])], body))


def set_aside(node, token: str) -> list[str]:
    """Each ``RENDERED`` output of the notebook ``node`` replaced by an empty element named
    after ``token`` and its place in the returned list."""
    kept: list[str] = []
    for cell in node.cells:
        for output in cell.get("outputs", ()):
            data = output.get("data", {})
            for mime in RENDERED:
                if isinstance(data.get(mime), str):
                    kept.append(data[mime])
                    data[mime] = f'<span id="chunkproof-{token}-{len(kept) - 1}"></span>'
    return kept


PATH_VALUES = ("CORPUS", "QUERIES", "HELD_OUT_QUERIES", "GOLD")
"""The notebook parameters naming the user's files, which a shared page names as ``share``
does."""


def share(path: Path, folders: Sequence[str | os.PathLike]) -> Path:
    """Rewrite the text file ``path`` with the machine's folders (``folders``, the repo root,
    the home folder) named as ``shown_paths`` names them, atomically."""
    base = repo_root() or Path.cwd()
    text = path.read_text(encoding="utf-8")
    return write_text_atomic(path, shown_paths(text, [f for f in folders if f], base=base))


def run_notebook(name: str, source: Path, out_dir: Path, values: dict, *,
                 progress: str = "", kernels: Kernels | None = None) -> NotebookRun:
    """Execute ``source`` into ``out_dir/<name>.ipynb`` (cwd = repo root) on a kernel from
    ``kernels`` (else one started for it), then export it (``seconds``: both). The notebook
    is written once, when it has run, not after every cell (each write of a notebook with
    charts is megabytes, done twice a cell). With ``progress`` (the label to show), a bar
    counts cells on a terminal and a line every ``HEARTBEAT`` seconds says the notebook is
    still running."""
    import papermill
    from nbclient.exceptions import DeadKernelError

    notebook = out_dir / f"{name}.ipynb"
    run = NotebookRun(name, source, notebook=notebook)
    parameters = {k: v for k, v in values.items() if k in declared_parameters(source)}
    began, began_cpu = time.perf_counter(), time.process_time()
    bar = {"desc": progress, "leave": False, "disable": not sys.stderr.isatty()}
    cwd = repo_root() or Path.cwd()

    def execute(tmp: Path) -> None:  # into a temporary file, renamed over the notebook once
        with contextlib.ExitStack() as stack:  # complete: a full disk never leaves half a one
            source_of = kernels or stack.enter_context(Kernels(cwd, 1))
            manager = source_of.take()
            stack.callback(source_of.done, manager)
            watch = source_of.watch(manager)  # read before the kernel is asked to end (LIFO)
            stack.callback(lambda: kernel_cpu.append(watch.cpu_seconds()))
            try:
                with warnings.catch_warnings(), heartbeat(progress, began):
                    warnings.filterwarnings("ignore", message=".*does not end in one of")
                    try:
                        papermill.execute_notebook(str(source), str(tmp), parameters=parameters,
                                                   kernel_name=KERNEL, cwd=str(cwd),
                                                   progress_bar=bar if progress else False,
                                                   log_output=False, km=manager,
                                                   request_save_on_cell_execute=False)
                    except DeadKernelError as err:  # said with its cause; never run again
                        run.error = f"{_describe(err)}: {source_of.watch(manager).death()}"
                        raise
                run.status = "ok"
            except OSError:
                raise
            except Exception as err:  # a failed notebook is reported; the others still run
                run.status, run.error = "failed", run.error or _describe(err)
                if not tmp.stat().st_size:
                    raise

    kernel_cpu: list[float] = []  # the kernel's CPU seconds when its notebook has run
    try:
        write_atomic(notebook, execute)
    except Exception as err:
        run.status = "failed"
        run.error = run.error or (str(err) if isinstance(err, WriteError) else _describe(err))
    run.cpu = sum(kernel_cpu)
    executed = out_dir / f"{name}.ipynb"
    if executed.is_file():
        exporting = time.process_time()
        try:
            share(executed, [out_dir, *(str(values.get(name, "")) for name in PATH_VALUES)])
            run.html = to_html(executed)
        except Exception as err:  # reported in the index, never fatal
            run.error = (run.error + "\n" if run.error else "") + f"HTML export: {err}"
        run.export_cpu = time.process_time() - exporting
    run.seconds = time.perf_counter() - began
    run.cpu += time.process_time() - began_cpu
    return run


@contextmanager
def heartbeat(label: str, began: float, every: float = HEARTBEAT) -> Iterator[None]:
    """While the block runs, ``<label>: still running (N s)`` on stderr every ``every``
    seconds (nothing when ``label`` is empty)."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(every):
            print(f"{label}: still running ({time.perf_counter() - began:.0f} s)",
                  file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, daemon=True) if label else None
    if thread:
        thread.start()
    try:
        yield
    finally:
        done.set()
        if thread:
            thread.join()


def _describe(err: Exception) -> str:
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(err).__name__}: {err}"
    return _ANSI.sub("", text).strip()


def notebook_values(out_dir: Path, params, *, queries: str, name: str = "",
                    engine: Engine | None = None, share_text: bool = True,
                    answers: bool | None = None, slug_rule: str = "github",
                    url_template: str = "", constraints: Sequence[str] | None = None) -> dict:
    """Every parameter a report notebook may declare, with this report's values (only the
    ones notebook ``name`` declares are passed to it). Every value works on any corpus: 02
    and 04 pick their pages, 05 scores headings only when the corpus has a gold file;
    ``share_text`` False has 04 draw boundary positions without the documents' text;
    ``answers`` says whether the queries carry answers (None: whether a query file is given),
    which makes answer_hit the primary metric, else hit; ``slug_rule`` and ``url_template``
    make every chunk's anchor and href (03, 04); ``constraints`` replace 06's default
    constraints (None: its own)."""
    k = params.k
    engine = engine or Engine()
    answers = bool(queries) if answers is None else answers
    first = "answer_hit" if answers else "hit"  # mined queries carry gold sections, no answer
    values = {
        "CORPUS": params.corpus, "QUERIES": params.queries, "OUT_DIR": str(out_dir),
        "RUN_DIR": str(out_dir), "STRATEGIES": list(params.strategies),
        "SIZES": list(params.sizes), "RETRIEVERS": list(params.retrievers), "K": k,
        "HELD_OUT_QUERIES": params.held_out_queries, "SPLIT_SEED": params.split_seed,
        "BUDGETS": list(params.budgets), "CONTRASTS": list(params.contrasts),
        "MODES": list(params.modes),
        "ALL_PAIRS": params.all_pairs, "ENGINE": engine.kind, "WORKERS": engine.workers or 0,
        "ADDRESS": engine.address, "RETRIEVER": params.retrievers[0], "DOC": "", "PRESET_DOCS": [],
        "EMBEDDER": embedder_choice().path,
        "GOLD": default_gold(params.corpus),
        "PRIMARY_METRIC": default_primary_metric(params.budgets, k, answers=answers),
        "CONSTRAINTS": default_constraints(default_primary_metric(params.budgets, k,
                                                                  answers=answers)),
        "SHARE_TEXT": share_text, "SLUG_RULE": slug_rule, "URL_TEMPLATE": url_template,
        "METRICS": [f"{metric}@{k}" for metric in (first, "recall", "bundle_efficiency",
                                                    *([] if queries else ["section_efficiency"]),
                                                    "code_integrity")],
    }
    if name.startswith(SWEEP_SIZE_NOTEBOOKS):
        values["SIZE"] = middle_size(params.sizes)
    if constraints is not None:
        values["CONSTRAINTS"] = list(constraints)
    return values


def remove_views(out_dir: Path) -> list[Path]:
    """Delete the standalone views an earlier report left in ``out_dir`` (every page there
    but the notebooks' and the index, as ``index_page`` lists them)."""
    found = [p for p in out_dir.glob("*.html")
             if p.name != "index.html" and not p.with_suffix(".ipynb").is_file()]
    for path in found:
        path.unlink(missing_ok=True)
    return found


def build_report(out_dir: str | os.PathLike, *, corpus: str = DEFAULT_CORPUS,
                 queries: str = "data/sample/queries.jsonl", held_out_queries: str = "",
                 split_seed: int = 0, sizes: Sequence[int] = DEFAULT_SIZES,
                 strategies: Sequence[str] = DEFAULT_STRATEGIES,
                 retrievers: Sequence[str] = DEFAULT_RETRIEVERS, k: int = DEFAULT_K,
                 budgets: Sequence[int] = DEFAULT_BUDGETS,
                 contrasts: Sequence[str] | None = None, modes: Sequence[str] = (PLAIN,),
                 strict: bool = False, notebooks: Sequence[str] = DEFAULT_NOTEBOOKS,
                 overwrite: bool = False, progress: bool = True, all_pairs: bool = False,
                 engine: Engine | None = None, share_text: bool = True,
                 slug_rule: str = "github", url_template: str = "",
                 constraints: Sequence[str] | None = None) -> Report:
    """Execute the notebooks in order into ``out_dir`` (each as .ipynb and offline .html; 03
    writes the sweep there and 06 reads it back) and write ``out_dir/index.html``.

    Parameters, notebooks and inputs are checked first, before any kernel starts and before
    the folder is locked (a bad parameter raises ConfigError naming it, a missing notebook
    NotebookNotFoundError, a chart renderer that dies here RendererError, a corpus without
    documents, a bad query file or a corpus no query can be mined from their own one-line
    error). A folder holding a report of other
    parameters is kept: this one goes into its ``run-<id>`` subfolder (``Report.note`` says
    what differs), or with ``overwrite`` replaces it; the same parameters reuse the finished
    parts. A notebook that fails is reported in the index with its error and the rest still
    run. When no config meets the choice rule, 06 still completes with the closest config
    and the margin chart; the returned Report's ``exit_code`` is 1 when a notebook failed,
    or, with ``strict``, when no config met the rule. ``contrasts`` None gives the default
    planned contrasts whose strategies are both swept; ``modes`` are the retrieval modes
    scored (``evaluation.retrieval.modes``). ``engine`` says where the sweep runs
    (default: local processes, as many as pay for their start) and ``all_pairs`` asks for
    every pair of configs to be tested.
    ``share_text`` False leaves the documents' text out of the chunk explorer's pages (the
    boundary positions and counts stay); ``slug_rule`` and ``url_template``
    (docs/anchors.md) make every chunk's anchor and href, in the sweep and the chosen config.
    ``constraints`` (``name op number [on retrievers]``) replace the choice rule's default
    constraints (None keeps them; ``[]`` is none).
    """
    began = time.perf_counter()
    make_config(slug_rule=slug_rule, url_template=url_template)  # refused here, in one line
    for constraint in constraints or ():
        parse_constraint(constraint)  # a bad one is refused before any kernel starts
    params = sweep_params(validate_params(
        SweepInputs, CORPUS=corpus, QUERIES=queries, HELD_OUT_QUERIES=held_out_queries,
        SPLIT_SEED=split_seed, STRATEGIES=list(strategies), SIZES=list(sizes),
        RETRIEVERS=list(retrievers), K=k, BUDGETS=list(budgets),
        CONTRASTS=contrasts_for(contrasts, list(strategies)), MODES=list(modes),
        ALL_PAIRS=all_pairs, SLUG_RULE=slug_rule, URL_TEMPLATE=url_template))
    found = find_notebooks(notebooks)
    check_renderer()  # a limit that kills the chart renderer fails here, not in every kernel
    inputs = load_inputs(params)  # a bad corpus or query file fails here, before any kernel
    answers = any(query.answer for query in inputs.queries)
    links = slug_rule_note(construct_counts(found for doc in inputs.corpus
                                            for found in constructs(doc)), slug_rule)
    if progress and links:
        print(f"chunkproof: note: {links}", file=sys.stderr, flush=True)
    folder = run_folder(resolve_output(out_dir, name="OUT_DIR"), params, overwrite=overwrite)
    out = folder.path
    if progress and folder.note:
        print(f"chunkproof: {folder.note}", file=sys.stderr, flush=True)
    runs = []
    with writing(out, kind="report", name="OUT_DIR"):  # a second report into it is refused
        if folder.overwrite:
            clear_run(out)
        if inputs.mined is not None:  # mined once: 03, 05 and 06 read them back
            save_mined(out / "parts", inputs.corpus, inputs.mined)
        remove_leftovers(out, names=[f"{name}{suffix}" for name, _ in found
                                     for suffix in (".ipynb", ".html")])
        if any(name.startswith(VIEW_NOTEBOOK) for name, _ in found):
            remove_views(out)
        with Kernels(repo_root() or Path.cwd(), len(found)) as kernels:
            for i, (name, source) in enumerate(found, start=1):
                values = notebook_values(out, params, queries=queries, name=name,
                                         engine=engine, share_text=share_text, answers=answers,
                                         slug_rule=slug_rule, url_template=url_template,
                                         constraints=constraints)
                label = f"[{i}/{len(found)}] {name}"
                if progress:
                    print(f"{label}: running", flush=True)
                run = (run_notebook(name, source, out, values, kernels=kernels,
                                    progress=label if progress else "")
                       if source else NotebookRun(name, None))
                runs.append(run)
                if progress:
                    print(f"{label}: {run.status} ({run.seconds:.1f} s)"
                          + (f" - {run.error.splitlines()[0]}" if run.error else ""),
                          flush=True)
        index = share(write_index(out, runs, params, notes=[links] if links else []),
                      [out, params.corpus, params.queries, params.held_out_queries])
        return Report(out, index, runs, strict, folder.note, time.perf_counter() - began)
