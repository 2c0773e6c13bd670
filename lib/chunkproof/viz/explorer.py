"""The chunk explorer: ipywidgets over boundary views, with a query's hits across the corpus."""

from __future__ import annotations

import time
from collections import OrderedDict
from contextlib import contextmanager

from ..chunking.build import chunk_document
from ..chunking.config import make_config
from ..chunking.registry import REGISTRY, check_strategy
from ..chunking.sizes import UNITS, tokens_available
from ..document.links import safe_href
from ..errors import ChunkproofError, ConfigError
from ..evaluation.retrieval.retrieve import make_retriever
from .boundaries import LEGEND, STYLE, BoundaryView, crumb_text, esc, find_document
from .budget import PAGE_BUDGET, boxed, fit, weight
from .strip import BoundaryStrip

MAX_INDEXES = 8
"""Retriever indexes kept in memory (one per config seen, oldest dropped first)."""
VIEW_BYTES = PAGE_BUDGET // 4
"""Bytes the drawn view may take by default (a longer document is drawn from its start, with
a note saying where it stops)."""
STRIP_STRATEGIES = ("rct",)
"""The strategies the boundary strip draws beside the current one by default (at its size
and unit); the ``compare`` control adds others."""


def units() -> list[str]:
    """The size units usable here: tokens only when the dense extra's tokenizer is installed."""
    return [u for u in UNITS if u != "tokens" or tokens_available()]


def normalise_query(text: str) -> str:
    return " ".join(text.casefold().split())


def answer_spans(doc, query) -> list[tuple[int, int]]:
    """Every occurrence of a query's answer in ``doc`` when ``doc`` is its first source."""
    if query is None or not query.answer or not query.sources or query.sources[0] != doc.id:
        return []
    spans, at = [], doc.text.find(query.answer)
    while at >= 0:
        spans.append((at, at + len(query.answer)))
        at = doc.text.find(query.answer, at + 1)
    return spans


class ChunkCache:
    """Chunks per (document, config) and one retriever index per config, each built once."""

    def __init__(self, corpus, retriever: str = "bm25"):
        self.corpus = corpus
        self.retriever = retriever
        self._chunks: dict[tuple[str, str], list] = {}
        self._indexes: OrderedDict[str, tuple] = OrderedDict()

    def chunks(self, doc, config) -> list:
        key = (doc.id, config.config_id)
        if key not in self._chunks:
            self._chunks[key] = chunk_document(doc, config)
        return self._chunks[key]

    def index(self, config):
        """(retriever, {chunk id: chunk}) over every corpus chunk under ``config``."""
        key = config.config_id
        if key not in self._indexes:
            chunks = [c for doc in self.corpus for c in self.chunks(doc, config)]
            retriever = make_retriever(self.retriever)
            retriever.index(chunks)
            self._indexes[key] = (retriever, {c.id: c for c in chunks})
            while len(self._indexes) > MAX_INDEXES:
                self._indexes.popitem(last=False)
        self._indexes.move_to_end(key)
        return self._indexes[key]

    def search(self, config, query: str, k: int) -> list[tuple]:
        """The top ``k`` (chunk, score) pairs of the whole corpus for ``query``."""
        retriever, by_id = self.index(config)
        return [(by_id[cid], score) for cid, score in retriever.search([query], k)[0]]


def page_link(chunk, shown: str) -> str:
    """``shown`` (HTML) as a link to the chunk's section in the published page when the
    chunk has an ``href`` (the config's ``url_template``) of an http or https link, a
    relative path or a fragment (``safe_href``: a chunk read from a run folder may hold any
    text), else as it is."""
    href = safe_href(chunk.href)
    if not href:
        return shown
    return (f'<a class="page-link" href="{esc(href)}" target="_blank" rel="noopener" '
            f'title="open in the site">{shown}</a>')


class Explorer:
    """Widgets to pick a document, strategy, size, unit, overlap, prefix and query; a live
    HTML view with a boundary strip of several strategies over the document, and the
    query's hits as buttons that jump to their chunk. With a ``url_template`` (and the site's
    ``slug_rule``), each hit's breadcrumb links its section in the published page."""

    def __init__(self, corpus, *, queries=None, doc_id=None, strategy="ast_breadcrumb",
                 size=800, unit="chars", overlap=0, prefix=None, query="", k=5,
                 retriever="bm25", max_size=4000, compare=STRIP_STRATEGIES,
                 max_bytes=VIEW_BYTES, slug_rule="github", url_template=""):
        import ipywidgets as w

        if not len(corpus):
            raise ConfigError("the explorer needs a corpus with at least one document")
        check_strategy(strategy)
        self.links = {"slug_rule": slug_rule, "url_template": url_template}
        """The config fields that make each chunk's anchor and href."""
        make_config(**self.links)  # a bad slug rule or template fails here, in one line
        if unit not in units():
            raise ConfigError(f"unit must be one of {', '.join(units())}; got {unit!r}")
        self.corpus = corpus
        self.docs = {d.id: d for d in corpus}
        self.query_list = list(queries or ())
        self.known_queries = {normalise_query(q.query): q for q in self.query_list}
        self.cache = ChunkCache(corpus, retriever)
        self.max_bytes = max_bytes
        """Bytes the drawn HTML may take: the document view gets what the strip and the
        panels above it leave (``viz.budget.fit``)."""
        self.last_redraw = 0.0
        """Seconds the last redraw took."""
        first = find_document(corpus, doc_id).id if doc_id else next(iter(self.docs))
        self.doc = w.Dropdown(options=list(self.docs), value=first, description="document")
        self.strategy = w.Dropdown(options=list(REGISTRY), value=strategy, description="strategy")
        self.size = w.IntSlider(value=size, min=min(50, size), max=max(max_size, size), step=10,
                                description="size", continuous_update=False)
        self.unit = w.Dropdown(options=units(), value=unit, description="unit")
        self.overlap = w.IntSlider(value=overlap, min=0, max=max(max_size // 2, overlap),
                                   step=10, description="overlap", continuous_update=False)
        default_prefix = REGISTRY[strategy].prefix if prefix is None else prefix
        self.breadcrumb = w.Checkbox(value=bool(default_prefix), description="breadcrumb prefix")
        self.query = w.Text(value=query, description="query", continuous_update=False,
                            placeholder="a question; Enter runs it", layout={"width": "60%"})
        self.k = w.IntSlider(value=k, min=1, max=20, description="top k")
        self.pick = w.Dropdown(options=self._pick_options(), value="", description="corpus query")
        available = [name for name in REGISTRY if REGISTRY[name].available]
        self.compare = w.SelectMultiple(options=available, rows=3, description="strip",
                                        value=[n for n in compare if n in available],
                                        tooltip="strategies drawn in the boundary strip")
        self.timing = w.Label()
        self.output = w.HTML()
        self.hits = w.VBox()
        """One button per hit of the query (rank, document, chunk): a click jumps to it."""
        self.focus: str | None = None
        """The id of the chunk the last click on a hit jumped to."""
        self._found: list[tuple] = []
        self.widget = w.VBox([
            w.HBox([self.doc, self.strategy]),
            w.HBox([self.size, self.unit, self.overlap, self.breadcrumb]),
            w.HBox([self.query, self.k]),
            w.HBox([self.pick, self.compare, self.timing]),
            self.hits,
            self.output,
        ])
        self._holding = False
        for control in self.controls:
            control.observe(self._changed, names="value")
        self.pick.observe(self._picked, names="value")
        self.refresh()

    @property
    def controls(self) -> list:
        return [self.doc, self.strategy, self.size, self.unit, self.overlap, self.breadcrumb,
                self.query, self.k, self.compare]

    def _pick_options(self) -> list[tuple[str, str]]:
        shown = [(f"{q.id}: {q.query[:70]}", q.id) for q in self.query_list]
        return [("(pick one to fill the query)", ""), *shown]

    @contextmanager
    def hold(self):
        """Change several widgets, then redraw once."""
        self._holding = True
        try:
            yield self
        finally:
            self._holding = False
        self.refresh()

    def _changed(self, _change=None) -> None:
        if not self._holding:
            self.focus = None
            self.refresh()

    def _picked(self, change) -> None:
        chosen = next((q for q in self.query_list if q.id == change["new"]), None)
        if chosen is None:
            return
        with self.hold():
            self.query.value = chosen.query
            if chosen.sources and chosen.sources[0] in self.docs:
                self.doc.value = chosen.sources[0]

    def config(self):
        return make_config(strategy=self.strategy.value, size=self.size.value,
                           unit=self.unit.value, overlap=self.overlap.value,
                           prefix=self.breadcrumb.value, **self.links)

    def refresh(self) -> None:
        """Redraw the output and the hit buttons for the current widget values."""
        import ipywidgets as w

        began = time.perf_counter()
        self.output.value = self.render()
        self.hits.children = [self._hit_button(w, rank, chunk, score)
                              for rank, (chunk, score) in enumerate(self._found, 1)]
        self.last_redraw = time.perf_counter() - began
        self.timing.value = f"redrawn in {self.last_redraw * 1000:.0f} ms"

    def _hit_button(self, w, rank: int, chunk, score: float):
        crumb = crumb_text(chunk.breadcrumb) or "no breadcrumb"
        button = w.Button(description=f"{rank}. {chunk.doc_id} · chunk {chunk.ordinal} · "
                                      f"{crumb} · {score:.2f}",
                          tooltip=f"jump to chunk {chunk.ordinal} of {chunk.doc_id}",
                          layout={"width": "auto", "max_width": "100%"})
        button.on_click(lambda _button: self.jump(chunk))
        return button

    def jump(self, chunk) -> None:
        """Show ``chunk``: its document, the chunk outlined and summarised above the view."""
        with self.hold():
            self.doc.value = chunk.doc_id
        self.focus = chunk.id
        self.refresh()

    def render(self) -> str:
        """The HTML the output shows for the current widget values."""
        text = self.query.value.strip()
        try:
            config = self.config()
            doc = self.docs[self.doc.value]
            chunks = self.cache.chunks(doc, config)
            hits = self.cache.search(config, text, self.k.value) if text else []
        except ChunkproofError as err:
            return f'{STYLE}<div class="chunkproof-view"><p class="error">{esc(err)}</p></div>'
        self._found = hits
        known = self.known_queries.get(normalise_query(text)) if text else None
        ranks = {chunk.id: rank for rank, (chunk, _score) in enumerate(hits, 1)}
        view = BoundaryView(doc, chunks, config, ranks=ranks, spans=answer_spans(doc, known),
                            focus=self.focus)
        panel = self.hits_panel(text, hits, doc, known) if text else ""
        how = (f"chunkproof view --corpus {self.corpus.root} --doc {doc.id} --strategy "
               f"{config.strategy} --size {config.size} --unit {config.unit} --out view.html")
        above = (f'{self.strip(doc, config).html()}{STYLE}<div class="chunkproof-view">'
                 f'{self.focus_panel(doc, chunks)}{panel}{LEGEND}')
        body = boxed(fit(view.body, doc, max(self.max_bytes - weight(above), 0), how))
        return f"{above}{body}</div>"

    def strip(self, doc, config) -> BoundaryStrip:
        """The current config and the ``compare`` strategies (at its size and unit) over
        ``doc``."""
        current = f"{config.strategy}/{config.size}"
        found = {current: self.cache.chunks(doc, config)}
        for name in self.compare.value:
            if name != config.strategy:
                other = make_config(strategy=name, size=config.size, unit=config.unit)
                found[f"{name}/{config.size}"] = self.cache.chunks(doc, other)
        return BoundaryStrip(doc, found, current=current)

    def focus_panel(self, doc, chunks) -> str:
        """The chunk a hit jumped to, named above the view (it is outlined in it)."""
        chunk = next((c for c in chunks if c.id == self.focus), None)
        if chunk is None:
            return ""
        return (f'<p class="meta focus-note">jumped to chunk {chunk.ordinal} of '
                f'{esc(doc.id)}, lines {chunk.start_line}-{chunk.end_line} '
                f'(<a href="#chunk-{esc(chunk.id)}">outlined below</a>): '
                f'{page_link(chunk, esc(crumb_text(chunk.breadcrumb) or "no breadcrumb"))}</p>')

    def hits_panel(self, text: str, hits: list[tuple], doc, known) -> str:
        """The ranked chunks of the whole corpus, with where the known answer lies."""
        here = sum(chunk.doc_id == doc.id for chunk, _ in hits)
        lines = [f"query {text!r}: top {len(hits)} of the corpus, {here} in this document"]
        if known is not None:
            where = "highlighted below" if known.sources[0] == doc.id else "not in this document"
            lines.append(f"corpus query {known.id}: gold {', '.join(known.sources)}; "
                         f"answer {where}")
        rows = "".join(self._hit_row(rank, chunk, score, doc, known)
                       for rank, (chunk, score) in enumerate(hits, 1))
        head = "<tr><th>rank</th><th>document</th><th>chunk</th><th>breadcrumb</th>" \
               "<th>score</th><th>holds answer</th></tr>"
        meta = "".join(f'<p class="meta">{esc(line)}</p>' for line in lines)
        return f'<div class="hits-panel">{meta}<table class="hits">{head}{rows}</table></div>'

    def _hit_row(self, rank: int, chunk, score: float, doc, known) -> str:
        spans = answer_spans(self.docs[chunk.doc_id], known) if known else []
        holds = any(chunk.start <= s and e <= chunk.end for s, e in spans)
        style = ' style="font-weight:bold"' if chunk.doc_id == doc.id else ""
        cells = [esc(c) for c in (rank, chunk.doc_id, chunk.ordinal,
                                  crumb_text(chunk.breadcrumb) or "-", f"{score:.2f}",
                                  "yes" if holds else "")]
        if chunk.doc_id == doc.id:  # a link to the chunk's region below
            cells[2] = f'<a href="#chunk-{esc(chunk.id)}">{cells[2]}</a>'
        cells[3] = page_link(chunk, cells[3])
        return f'<tr class="hit-row"{style}>' + "".join(f"<td>{c}</td>" for c in cells) + \
            "</tr>"

    def _repr_html_(self) -> str:
        return self.render()

    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The live widgets, and the current view as HTML beside them: what an exported
        page (no widget manager) shows in their place."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.render()
        return bundle
