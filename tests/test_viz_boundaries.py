"""Boundary views: one region per chunk, true labels, verbatim escaped text, flags, comparisons."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser

import pytest

from chunkproof import load_corpus, make_config, save_config
from chunkproof.chunking.build import chunk_document
from chunkproof.errors import ChunkproofError, ConfigError, CorpusError
from chunkproof.evaluation.scoring.invariants import lost_chars, split_blocks
from chunkproof.viz import BoundaryView, SideBySide, render_view
from chunkproof.viz.boundaries import chunk_flags, page
from conftest import FIXTURES, fixture_doc

VOID = {"meta", "br", "hr", "img", "input", "link"}
HIDDEN = {"label", "flag", "cut"}
"""Classes whose text is decoration, not document text."""
ALLOWED_TAGS = {"html", "head", "body", "meta", "title", "style", "div", "p", "h3", "pre",
                "span", "mark", "table", "tr", "th", "td"}


class ViewParser(HTMLParser):
    """Every tag with its attributes, the text of each label part, and the document text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.open: list[tuple[str, set]] = []
        self.texts: dict[str, list[str]] = {"crumb": [], "flag": [], "answer": [], "title": []}
        self.docs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        classes = set((attrs.get("class") or "").split())
        if tag == "pre" and "doc" in classes:
            self.docs.append("")
        for name in self.texts:
            if name in classes or tag == name:
                self.texts[name].append("")
        if tag not in VOID:
            self.open.append((tag, classes))

    def handle_endtag(self, tag):
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        classes = set().union(*(c for _, c in self.open)) if self.open else set()
        tags = {t for t, _ in self.open}
        for name in self.texts:
            if name in classes or name in tags:
                self.texts[name][-1] += data
        if "doc" in classes and not classes & HIDDEN:
            self.docs[-1] += data

    def elements(self, cls: str) -> list[dict]:
        return [a for _, a in self.tags if cls in (a.get("class") or "").split()]


def parse(markup: str) -> ViewParser:
    parser = ViewParser()
    parser.feed(markup)
    parser.close()
    return parser


def view_of(name: str, strategy: str, size: int, **options):
    doc = fixture_doc(name)
    config = make_config(strategy=strategy, size=size, **options)
    chunks = chunk_document(doc, config)
    return doc, chunks, BoundaryView(doc, chunks, config)


CASES = [
    ("standard_deep.md", "ast_breadcrumb", 300),
    ("standard_deep.md", "rct", 200),
    ("long_fence.md", "rct", 200),
    ("long_fence.md", "ast_merge", 200),
    ("hostile.md", "mhs_rct", 200),
    ("table_caption.md", "paragraph", 100),
    ("contract_renewal.md", "heading_flush", 400),
]


@pytest.mark.parametrize("name, strategy, size", CASES)
def test_one_region_per_chunk_labelled_with_its_breadcrumb(name, strategy, size):
    doc, chunks, view = view_of(name, strategy, size)
    parsed = parse(view.html())
    regions = parsed.elements("chunk")
    assert len(regions) == len(chunks) > 0
    assert [int(r["data-chunk"]) for r in regions] == [c.ordinal for c in chunks]
    expected = [" > ".join(c.breadcrumb) for c in chunks]
    assert [r["data-breadcrumb"] for r in regions] == expected
    assert parsed.texts["crumb"] == expected
    assert len(parsed.elements("label")) == len(chunks)


@pytest.mark.parametrize("name, strategy, size", CASES)
def test_document_text_is_shown_verbatim_once(name, strategy, size):
    doc, _chunks, view = view_of(name, strategy, size)
    assert parse(view.html()).docs == [doc.text]


def test_tooltip_names_id_lines_sizes_kind_and_part():
    doc, chunks, view = view_of("long_fence.md", "ast_merge", 40, unit="words")
    regions = parse(view.html()).elements("chunk")
    assert any(c.part for c in chunks)
    for chunk, region in zip(chunks, regions, strict=True):
        tip = region["title"]
        assert chunk.id in tip and region["data-id"] == chunk.id
        assert f"lines {chunk.start_line}-{chunk.end_line}" in tip
        assert f"size {len(chunk.text)} chars · {len(chunk.text.split())} words" in tip
        assert f"kind {chunk.kind}" in tip
        assert (f"part {chunk.part}" if chunk.part else "part: whole") in tip


def test_hostile_text_is_escaped_everywhere(tmp_path):
    for strategy in ("rct", "ast_breadcrumb", "mhs_rct"):
        doc, chunks, view = view_of("hostile.md", strategy, 200)
        for markup in (view.html(), page(view.html(), view.title), view.save(tmp_path / "h.html")
                       .read_text(encoding="utf-8")):
            lowered = markup.lower()
            assert "<script" not in lowered and "<img" not in lowered and "<a " not in lowered
            parsed = parse(markup)
            assert {tag for tag, _ in parsed.tags} <= ALLOWED_TAGS
            attributes = {name for _, attrs in parsed.tags for name in attrs}
            assert not attributes & {"href", "src", "onerror", "onmouseover", "onload"}
            assert parsed.docs[-1] == doc.text


def test_breadcrumb_with_markup_and_quotes_round_trips():
    doc, chunks, view = view_of("hostile.md", "ast_breadcrumb", 800)
    crumbs = [" > ".join(c.breadcrumb) for c in chunks]
    # The heading's plain text: `<tags>` is inline HTML, which a reader of the page never sees.
    assert 'Links and "quotes" &' in crumbs
    parsed = parse(view.html())
    assert [r["data-breadcrumb"] for r in parsed.elements("chunk")] == crumbs
    assert parsed.texts["crumb"] == crumbs


def test_standalone_page_loads_nothing_from_outside(tmp_path):
    _doc, _chunks, view = view_of("standard_deep.md", "ast_breadcrumb", 300)
    markup = view.save(tmp_path / "v.html").read_text(encoding="utf-8")
    assert markup.startswith("<!DOCTYPE html>")
    for needle in ("<link", "<script", "@import", "url(", "src=", "href="):
        assert needle not in markup
    assert "Content-Security-Policy" in markup


def test_a_fence_split_by_rct_is_flagged():
    doc, chunks, view = view_of("long_fence.md", "rct", 200)
    assert split_blocks(doc, chunks) == 1
    regions = parse(view.html()).elements("chunk")
    flagged = [r for r in regions if "split" in r["data-flags"].split()]
    assert len(flagged) == sum(split_blocks(doc, [c]) > 0 for c in chunks) >= 1
    assert all("flagged" in r["class"] and "splits fence" in r["title"] for r in flagged)
    assert "splits fence" in "".join(parse(view.html()).texts["flag"])


def test_an_oversize_fence_chunk_is_flagged_and_not_split():
    doc, chunks, view = view_of("long_fence.md", "ast_merge", 200)
    regions = parse(view.html()).elements("chunk")
    oversize = [r for r in regions if "oversize" in r["data-flags"].split()]
    assert len(oversize) == sum(len(c.text) > 200 for c in chunks) == 1
    assert not any("split" in r["data-flags"] for r in regions)
    flags = parse(view.html()).texts["flag"]
    assert any(f.startswith("⚠ oversize (") and "> 200 chars" in f for f in flags)


def test_heading_only_and_non_verbatim_chunks_are_flagged():
    doc = fixture_doc("long_fence.md")
    config = make_config(strategy="ast_merge", size=200)
    chunks = chunk_document(doc, config)
    head = dataclasses.replace(chunks[0], end=12, text=doc.text[:12], kind="heading")
    rewritten = dataclasses.replace(chunks[-1], text=chunks[-1].text.upper(), verbatim=False)
    view = BoundaryView(doc, [head, *chunks[1:-1], rewritten], config)
    flags = [r["data-flags"].split() for r in parse(view.html()).elements("chunk")]
    assert "heading-only" in flags[0] and "non-verbatim" in flags[-1]
    assert view.stats()["flagged"] >= 2


def test_overlap_is_hatched_and_gaps_are_uncovered():
    doc = fixture_doc("long_fence.md")
    config = make_config(strategy="ast_merge", size=200)
    chunks = chunk_document(doc, config)
    first, second, _third = chunks
    start = first.end - 10
    moved = dataclasses.replace(second, start=start, text=doc.text[start : second.end])
    view = BoundaryView(doc, [first, moved], config)
    parsed = parse(view.html())
    overlaps = parsed.elements("overlap")
    assert len(overlaps) == 1 and overlaps[0]["title"] == "in chunks 0, 1"
    assert view.stats()["overlap_chars"] == 10
    lost = [a for a in parsed.elements("gap") if "lost" in a["class"]]
    assert lost and view.stats()["lost_chars"] == lost_chars(doc, [first, moved])[0] > 0
    assert parsed.docs == [doc.text]
    assert len(parsed.elements("chunk")) == 2


def test_chunks_owning_no_text_still_get_their_region():
    doc = fixture_doc("long_fence.md")
    config = make_config(strategy="ast_merge", size=200)
    chunks = chunk_document(doc, config)
    inner = dataclasses.replace(chunks[0], ordinal=9, start=20, end=20, text="")
    view = BoundaryView(doc, [*chunks, inner], config)
    parsed = parse(view.html())
    assert sorted(int(r["data-chunk"]) for r in parsed.elements("chunk")) == [0, 1, 2, 9]
    assert parsed.docs == [doc.text]


class AlignedParser(HTMLParser):
    """The side-by-side table: per source line, its number, what the gutter marks and the
    document text of each side (decoration left out)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[dict] = []
        self.open: list[tuple[str, set]] = []
        self.side = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "tr" and "line" in classes:
            self.rows.append({"line": int(attrs["data-line"]), "only": attrs.get("data-only", ""),
                              "left": "", "right": ""})
        if tag == "td" and "doc-line" in classes:
            self.side = attrs["data-side"]
        if tag not in VOID:
            self.open.append((tag, classes))

    def handle_endtag(self, tag):
        while self.open:
            name, classes = self.open.pop()
            if name == "td" and "doc-line" in classes:
                self.side = ""
            if name == tag:
                break

    def handle_data(self, data):
        classes = set().union(*(c for _, c in self.open)) if self.open else set()
        if self.side and not classes & HIDDEN:
            self.rows[-1][self.side] += data


def aligned(markup: str) -> list[dict]:
    parser = AlignedParser()
    parser.feed(markup)
    parser.close()
    return parser.rows


def cut_lines(doc, chunks) -> set[int]:
    """The 1-based lines where a config cuts: each chunk bound moved past whitespace."""
    text, lines = doc.text, set()
    for chunk in chunks:
        for offset in (chunk.start, chunk.end):
            while offset < len(text) and text[offset].isspace():
                offset += 1
            lines.add(text.count("\n", 0, offset) + 1)
    return lines


@pytest.mark.parametrize("name", ["long_fence.md", "standard_deep.md"])
def test_side_by_side_aligns_lines_and_marks_where_only_one_side_cuts(name):
    doc = fixture_doc(name)
    left_config = make_config(strategy="ast_merge", size=200)
    right_config = make_config(strategy="rct", size=200)
    left, right = chunk_document(doc, left_config), chunk_document(doc, right_config)
    rows = aligned(SideBySide(doc, left, left_config, right, right_config).html())
    lines = doc.text.splitlines()
    assert [r["line"] for r in rows] == list(range(1, len(lines) + 1))
    assert [r["left"] for r in rows] == lines == [r["right"] for r in rows]  # row = line
    left_cuts, right_cuts = cut_lines(doc, left), cut_lines(doc, right)
    marked = {r["line"] for r in rows if r["only"]}
    assert marked, "two different splitters cut somewhere differently"
    assert marked <= left_cuts | right_cuts  # only a line where a side cuts is marked
    in_text = set(range(1, len(lines) + 1))  # a cut at the very end is past the last line
    assert (left_cuts ^ right_cuts) & in_text <= marked  # one side cuts, the other not at all
    assert {r["only"] for r in rows} <= {"", "left", "right", "both"}


def test_identical_configs_have_no_differing_boundaries():
    doc = fixture_doc("standard_deep.md")
    config = make_config(strategy="ast_breadcrumb", size=300)
    chunks = chunk_document(doc, config)
    markup = SideBySide(doc, chunks, config, chunks, config).html()
    assert parse(markup).elements("cut") == []
    assert not [r for r in aligned(markup) if r["only"]]


def test_render_view_writes_single_and_side_by_side_pages(tmp_path):
    one = render_view(FIXTURES, "long_fence.md", strategy="rct", size=200, out=tmp_path / "a.html")
    two = render_view(FIXTURES, "long_fence.md", strategy="ast_merge", size=200, vs_strategy="rct",
                      out=tmp_path / "b.html")
    corpus_doc = load_corpus(FIXTURES).get("long_fence.md")
    assert parse(one.read_text()).docs == [corpus_doc.text]
    rows = aligned(two.read_text())
    assert [r["left"] for r in rows] == corpus_doc.text.splitlines() == [r["right"] for r in rows]
    saved = save_config(make_config(strategy="paragraph", size=100), tmp_path / "c.yaml")
    three = render_view(FIXTURES, "long_fence.md", config_path=saved, vs_config=saved,
                        out=tmp_path / "c.html")
    assert parse(three.read_text()).elements("cut") == []


@pytest.mark.parametrize("kwargs, message", [
    ({"strategy": "rct", "config_path": "x.yaml"}, "exactly one"),
    ({}, "exactly one"),
    ({"strategy": "nope"}, "unknown strategy"),
    ({"strategy": "rct", "size": 0}, "size"),
    ({"strategy": "rct", "vs_strategy": "rct", "vs_config": "x.yaml"}, "not both"),
])
def test_render_view_rejects_bad_options(tmp_path, kwargs, message):
    with pytest.raises(ChunkproofError, match=message):
        render_view(FIXTURES, "long_fence.md", out=tmp_path / "x.html", **kwargs)


def test_render_view_suggests_the_nearest_document(tmp_path):
    with pytest.raises(CorpusError, match="did you mean 'long_fence.md'"):
        render_view(FIXTURES, "long-fence.md", strategy="rct", out=tmp_path / "x.html")
    with pytest.raises(ConfigError):
        render_view(FIXTURES, "long_fence.md", config_path=tmp_path / "c.yaml", size=3,
                    out=tmp_path / "x.html")


def test_rct_is_flagged_only_where_it_breaks_an_invariant():
    doc = fixture_doc("standard_deep.md")  # no fence, no table: nothing rct could cut
    config = make_config(strategy="rct", size=200)
    chunks = chunk_document(doc, config)
    view = BoundaryView(doc, chunks, config)
    assert view.stats()["flagged"] == 0
    assert parse(view.html()).texts["flag"] == []
    fenced = fixture_doc("long_fence.md")
    found = chunk_document(fenced, config)
    broken = {c.ordinal for c in found
              if any(c.start < a.end and a.start < c.end and not (a.start >= c.start
                                                                   and a.end <= c.end)
                     for a in fenced.atoms)}
    flags = {c.ordinal: {f.code for f in fs}
             for c, fs in zip(found, chunk_flags(fenced, found, config), strict=True) if fs}
    assert {n for n, codes in flags.items() if "split" in codes} == broken != set()
    heading_only = {c.ordinal for c in found if c.text.strip().startswith("#")
                    and "\n" not in c.text.strip()}
    assert set(flags) == broken | heading_only  # a flag is a real break, nothing else
