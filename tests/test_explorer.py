"""The explorer driven from Python, the notebook helpers, and notebook 04 itself."""

from __future__ import annotations

import html

import pytest

from chunkproof import chunk_corpus, load_corpus, make_config
from chunkproof.chunking.build import chunk_document
from chunkproof.document.corpus import Corpus, make_document
from chunkproof.errors import ConfigError, CorpusError
from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.retrieval.retrieve import make_retriever
from chunkproof.notebooks.chunk_explorer import (
    heading_depth,
    representative_documents,
    save_views,
    static_views,
    validate,
)
from chunkproof.notebooks.params import resolve_output, resolve_path
from chunkproof.viz.explorer import Explorer
from conftest import FIXTURES, ROOT
from test_viz_boundaries import parse

NOTEBOOK = ROOT / "notebooks" / "04_chunk_explorer.ipynb"
PARAMETERS = ["CORPUS", "QUERIES", "STRATEGY", "SIZE", "VS_STRATEGY", "PRESET_DOCS", "OUT_DIR",
              "SHARE_TEXT", "SLUG_RULE", "URL_TEMPLATE"]
ANSWER = "within five minutes of the last step"
FENCE_QUERY = Query("q-fence", "How soon does the storage node report healthy?",
                    ("long_fence.md",), ANSWER)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(FIXTURES)


@pytest.fixture
def explorer(corpus):
    return Explorer(corpus, queries=[FENCE_QUERY], doc_id="long_fence.md",
                    strategy="ast_merge", size=200)


def regions(markup: str) -> list[dict]:
    return parse(markup).elements("chunk")


def test_the_output_is_the_rendered_view(explorer, corpus):
    doc = corpus.get("long_fence.md")
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=200, prefix=False))
    assert explorer.output.value == explorer.render()
    assert len(regions(explorer.output.value)) == len(chunks)
    assert parse(explorer.output.value).docs == [doc.text]


def test_strategy_change_redraws_with_its_chunks(explorer, corpus):
    before = len(regions(explorer.output.value))
    explorer.strategy.value = "rct"
    expected = chunk_document(corpus.get("long_fence.md"), explorer.config())
    after = regions(explorer.output.value)
    assert len(after) == len(expected) != before
    assert any("split" in r["data-flags"] for r in after)


def test_document_size_and_unit_changes_redraw(explorer, corpus):
    explorer.doc.value = "standard_deep.md"
    assert parse(explorer.output.value).docs == [corpus.get("standard_deep.md").text]
    small = len(regions(explorer.output.value))
    explorer.size.value = 1000
    assert len(regions(explorer.output.value)) < small
    explorer.unit.value = "words"
    assert "1000 words" in explorer.output.value


def test_breadcrumb_toggle_sets_the_prefix(explorer):
    assert explorer.breadcrumb.value is False  # ast_merge's default
    assert "embedded as: text only" in explorer.output.value
    explorer.breadcrumb.value = True
    assert explorer.config().prefix is True
    assert "embedded as: Context: Long fence &gt; Setup" in explorer.output.value
    assert "embedded as: text only" not in explorer.output.value


def test_a_query_marks_the_top_k_chunks_of_this_document(explorer, corpus):
    explorer.k.value = 3
    explorer.query.value = "storage node health"
    expected = make_retriever("bm25")
    chunks = chunk_corpus(corpus, explorer.config())
    expected.index(chunks)
    hits = expected.search(["storage node health"], 3)[0]
    parsed = parse(explorer.output.value)
    assert len(parsed.elements("hit-row")) == len(hits) > 0
    ranks = {cid: rank for rank, (cid, _score) in enumerate(hits, 1)}
    here = {c.id for c in chunks if c.doc_id == "long_fence.md"}
    marked = {r["data-id"]: r["title"] for r in parsed.elements("chunk") if "hit" in r["class"]}
    assert set(marked) == set(ranks) & here
    for cid, title in marked.items():
        assert f"query rank {ranks[cid]}" in title
    explorer.query.value = ""
    assert parse(explorer.output.value).elements("hit-row") == []


def test_a_corpus_query_highlights_its_answer_span(explorer):
    explorer.query.value = "  how soon does the STORAGE node report healthy? "
    parsed = parse(explorer.output.value)
    assert parsed.texts["answer"] == [ANSWER]
    assert "corpus query q-fence" in explorer.output.value
    explorer.doc.value = "standard_deep.md"
    assert parse(explorer.output.value).texts["answer"] == []
    assert "answer not in this document" in explorer.output.value


def test_picking_a_corpus_query_fills_the_box_and_opens_its_source(corpus):
    explorer = Explorer(corpus, queries=[FENCE_QUERY], doc_id="standard_deep.md")
    explorer.pick.value = "q-fence"
    assert explorer.query.value == FENCE_QUERY.query
    assert explorer.doc.value == "long_fence.md"
    assert parse(explorer.output.value).texts["answer"] == [ANSWER]


def test_bad_arguments_are_named(corpus):
    with pytest.raises(ConfigError, match="unit"):
        Explorer(corpus, unit="pages")
    with pytest.raises(KeyError, match="unknown strategy"):
        Explorer(corpus, strategy="nope")
    with pytest.raises(CorpusError, match="did you mean 'long_fence.md'"):
        Explorer(corpus, doc_id="long-fence.md")


def big_markdown(target: int = 50_000) -> str:
    parts, i = ["# Storage handbook\n\nHow the storage fleet is run.\n"], 0
    while sum(map(len, parts)) < target:
        i += 1
        parts.append(f"\n## Area {i}\n\nNodes in area {i} replicate bundles across three racks; "
                     "a failed disk is replaced within one shift and the node re-verified.\n")
        checks = "".join(f"tern node check --area {i} --rack {r}\n" for r in range(6))
        parts.append(f"\n### Checks for area {i}\n\n```sh\n{checks}```\n")
        rows = "".join(f"| r{r} | {r * 4} | team {i} |\n" for r in range(4))
        parts.append(f"\n| rack | nodes | owner |\n|---|---|---|\n{rows}")
    return "".join(parts)


def test_the_changes_redraw_a_50kb_document():
    """How fast a redraw is lives in the benchmark (``python -m chunkproof.bench --scale``)."""
    doc = make_document("big.md", big_markdown())
    assert len(doc.text) >= 50_000
    explorer = Explorer(Corpus("memory", (doc,)), size=800)
    changes = [("strategy", "rct"), ("size", 400), ("breadcrumb", True), ("unit", "words"),
               ("query", "replace a failed disk"), ("strategy", "ast_breadcrumb"), ("k", 10)]
    drawn = [explorer.output.value]
    for name, value in changes:
        getattr(explorer, name).value = value
        drawn.append(explorer.output.value)
    # a breadcrumb prefix changes nothing drawn for rct, which has no breadcrumbs
    assert sum(before != after for before, after in zip(drawn, drawn[1:], strict=False)) >= 6
    assert len(regions(explorer.output.value)) > 10


def test_notebook_paths_resolve_from_the_notebooks_folder(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    assert resolve_path("data", name="CORPUS", kind="folder") == tmp_path / "data"
    assert resolve_output("results/new", name="OUT_DIR") == tmp_path / "results" / "new"
    assert resolve_path(tmp_path, name="CORPUS", kind="folder") == tmp_path
    monkeypatch.chdir(tmp_path)
    assert resolve_output("results/new", name="OUT_DIR") == tmp_path / "results" / "new"


GOOD = {"CORPUS": str(FIXTURES), "QUERIES": "", "STRATEGY": "ast_breadcrumb", "SIZE": 300,
        "VS_STRATEGY": "rct", "PRESET_DOCS": ["long_fence.md"], "OUT_DIR": ""}


@pytest.mark.parametrize("name, value", [
    ("STRATEGY", "nope"), ("SIZE", 0), ("VS_STRATEGY", "rtc"), ("CORPUS", "no/such/folder"),
    ("QUERIES", "no/such/queries.jsonl"), ("PRESET_DOCS", ["missing.md"]),
    ("PRESET_DOCS", "long_fence.md"), ("SLUG_RULE", "hugo"), ("URL_TEMPLATE", "https://x/{page}"),
])
def test_a_bad_notebook_parameter_is_named(name, value):
    with pytest.raises(ConfigError, match=f"^{name}: "):
        validate(**{**GOOD, name: value})


def test_validation_resolves_paths_as_the_other_notebooks_do(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")
    setup = validate(**{**GOOD, "CORPUS": "tests/fixtures/mini_corpus",
                        "QUERIES": "tests/fixtures/mini_corpus/queries.jsonl",
                        "PRESET_DOCS": ["api.md"], "OUT_DIR": "results/views"})
    assert setup.corpus.root == str(FIXTURES / "mini_corpus")
    assert len(setup.queries) > 0 and setup.docs == ["api.md"] and not setup.picked
    assert setup.out_dir == ROOT / "results" / "views"


def test_heading_depth_counts_the_deepest_path_without_holes():
    assert heading_depth(make_document("d.md", "# A\n\n### B\n\ntext\n\n## C\n")) == 2
    assert heading_depth(make_document("flat.md", "no heading here\n")) == 0


def test_representative_documents_pick_three_distinct_pages_by_their_own_criterion():
    docs = {"a.md": "# A\n\n" + "long prose line.\n\n" * 60,
            "b.md": "# B\n\n```sh\nx\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
            "c.md": "# C\n\n## D\n\n### E\n\ntext\n",
            "d.md": "plain words only\n"}
    corpus = Corpus("memory", tuple(make_document(i, t) for i, t in docs.items()))
    assert representative_documents(corpus) == ["b.md", "a.md", "c.md"]
    one = Corpus("memory", (make_document("d.md", docs["d.md"]),))
    assert representative_documents(one) == ["d.md"]  # no heading: no nesting pick


def test_empty_preset_docs_picks_representative_documents():
    setup = validate(**{**GOOD, "PRESET_DOCS": []})
    assert setup.picked and setup.docs == representative_documents(setup.corpus)
    assert 1 <= len(setup.docs) <= 3 and len(set(setup.docs)) == len(setup.docs)
    assert "picked" in setup.describe()
    sample = validate(**{**GOOD, "CORPUS": "data/sample", "PRESET_DOCS": []})
    assert sample.docs == ["api/client.md", "legal/master-services-agreement.md",
                           "cli/commands.md"]


def test_static_views_are_saved_one_page_each(tmp_path):
    setup = validate(**{**GOOD, "OUT_DIR": str(tmp_path / "views")})
    views = static_views(setup)
    written = save_views(views, setup.out_dir)
    assert [p.name for p in written] == ["long_fence.md.ast_breadcrumb.html",
                                         "long_fence.md.ast_breadcrumb_vs_rct.html"]
    assert all(p.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") for p in written)


@pytest.mark.slow
def test_notebook_runs_headless_on_the_fixture_corpus(tmp_path):
    papermill = pytest.importorskip("papermill")
    out_dir = tmp_path / "views"
    papermill.execute_notebook(
        str(NOTEBOOK), str(tmp_path / "04.ipynb"), kernel_name="python3", cwd=str(ROOT),
        parameters={"CORPUS": "tests/fixtures", "QUERIES": "", "PRESET_DOCS": ["long_fence.md"],
                    "OUT_DIR": str(out_dir), "SIZE": 300},
        progress_bar=False,
    )
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == ["long_fence.md.ast_breadcrumb.html",
                       "long_fence.md.ast_breadcrumb_vs_rct.html"]
    page = (out_dir / written[0]).read_text(encoding="utf-8")
    assert len(regions(page)) == len(
        chunk_document(load_corpus(FIXTURES).get("long_fence.md"),
                       make_config(strategy="ast_breadcrumb", size=300)))


def test_the_overlap_control_rechunks_with_overlap(explorer, corpus):
    explorer.doc.value = "contract_renewal.md"
    explorer.strategy.value = "rct"
    explorer.overlap.value = 50
    assert explorer.config().overlap == 50
    expected = chunk_document(corpus.get("contract_renewal.md"), explorer.config())
    assert len(regions(explorer.output.value)) == len(expected)
    assert any(b.start < a.end for a, b in zip(expected, expected[1:], strict=False))


def test_clicking_a_hit_jumps_to_its_chunk_in_its_document(explorer):
    explorer.k.value = 5
    explorer.query.value = "storage node health"
    buttons = explorer.hits.children
    assert buttons and all("chunk" in b.description for b in buttons)
    elsewhere = next((c for c, _s in explorer._found if c.doc_id != explorer.doc.value),
                     explorer._found[0][0])
    index = [c.id for c, _s in explorer._found].index(elsewhere.id)
    buttons[index].click()
    assert explorer.doc.value == elsewhere.doc_id and explorer.focus == elsewhere.id
    assert f"jumped to chunk {elsewhere.ordinal} of {elsewhere.doc_id}" in explorer.output.value


SITE = "https://docs.example.com/{route}#{anchor}"


def test_hits_link_their_sections_in_the_site_when_a_template_is_set(corpus):
    linked = Explorer(corpus, queries=[FENCE_QUERY], doc_id="long_fence.md",
                      strategy="ast_merge", size=200, slug_rule="mkdocs", url_template=SITE)
    linked.query.value = "storage node health"
    markup = linked.output.value
    rows = parse(markup).elements("hit-row")
    assert len(rows) == len(linked._found) > 0
    for chunk, _score in linked._found:
        assert chunk.href.startswith("https://docs.example.com/")
        assert f'class="page-link" href="{html.escape(chunk.href)}"' in markup
    linked.jump(linked._found[0][0])
    assert "open in the site" in linked.focus_panel(
        corpus.get(linked._found[0][0].doc_id),
        chunk_document(corpus.get(linked._found[0][0].doc_id), linked.config()))


def test_without_a_template_hits_carry_no_site_link(explorer):
    explorer.query.value = "storage node health"
    assert "page-link" not in explorer.output.value


def test_a_bad_template_is_refused_before_any_widget(corpus):
    with pytest.raises(ConfigError, match=r"url_template: unknown field \{page\}"):
        Explorer(corpus, url_template="https://x/{page}")


def test_notebook_04_passes_its_links_to_the_config():
    setup = validate(**{**GOOD, "SLUG_RULE": "vitepress", "URL_TEMPLATE": SITE})
    assert (setup.config.slug_rule, setup.config.url_template) == ("vitepress", SITE)
