"""An exported report in a real headless Chromium with no network: the charts are drawn, the
index leads with the picture of the choice, no table runs past its column, no table says
NaN."""

from __future__ import annotations

import json
import re

import pytest

from browser import chromium, count_near, needs_chromium, screenshot
from chunkproof.notebooks.report import DEFAULT_NOTEBOOKS, build_report
from chunkproof.viz.budget import PAGE_HEIGHT
from chunkproof.viz.choice_charts import ROLE_COLOURS
from conftest import FIXTURES
from test_explorer import big_markdown

pytestmark = [*needs_chromium, pytest.mark.slow]
MINI = FIXTURES / "mini_corpus"
# Vega's default category colours: the first two strategies of the sweep are drawn in these.
BLUE, ORANGE = "#4c78a8", "#f58518"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    built = build_report(out, corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         sizes=[200, 400], strategies=["rct", "ast_breadcrumb"],
                         retrievers=["bm25"], progress=False)  # every notebook
    assert not built.failed
    return out


def test_index_page_loads_offline_and_links_the_notebook(report, tmp_path):
    dom = chromium(tmp_path, "--virtual-time-budget=2000", "--dump-dom",
                   (report / "index.html").as_uri())
    assert 'href="03_strategy_sweep.html"' in dom
    assert "ast_breadcrumb" in dom  # the headline table is on the page
    assert screenshot(tmp_path, report / "index.html").std() > 10  # not a blank page


def test_notebook_charts_are_drawn_with_no_network(report, tmp_path):
    html = (report / "03_strategy_sweep.html").read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=[\"']https?:", html)
    assert '<details class="chunkproof-fold"' in html  # most charts are folded: open them
    page = tmp_path / "opened.html"
    page.write_text(html.replace('<details class="chunkproof-fold"',
                                 '<details open class="chunkproof-fold"'), encoding="utf-8")
    html = page.read_text(encoding="utf-8")
    # The same page with its SVG charts cut out: those colours come from the charts alone.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<svg.*?</svg>", "", html, flags=re.S), encoding="utf-8")
    drawn, without = (chart_pixels(screenshot(tmp_path, p, width=1280, height=7000))
                      for p in (page, bare))
    print(f"chart-coloured pixels: {drawn} with the charts, {without} without")
    assert html.count("<svg") >= 3
    assert drawn > 500 and drawn > 10 * max(without, 1)


def chart_pixels(pixels) -> int:
    return count_near(pixels, BLUE) + count_near(pixels, ORANGE)


MEASURE = """<script>
window.addEventListener("load", () => {
  const found = {page: document.documentElement.scrollWidth, viewport: window.innerWidth,
                 tables: [], nan: [], svg: document.querySelectorAll("svg").length};
  for (const table of document.querySelectorAll("table")) {
    let box = table;  // what the reader sees of it: the table, or the block it scrolls in
    for (let el = table.parentElement; el && el !== document.body; el = el.parentElement) {
      const overflow = getComputedStyle(el).overflowX;
      if (overflow === "auto" || overflow === "scroll") { box = el; break; }
    }
    const column = table.closest(".jp-Cell") || document.body;
    const style = getComputedStyle(column);
    const right = column.getBoundingClientRect().right - parseFloat(style.paddingRight);
    found.tables.push({table: Math.round(table.getBoundingClientRect().width),
                       box: Math.round(box.getBoundingClientRect().right),
                       column: Math.round(right)});
    if (/\\bNaN\\b/.test(table.innerText)) found.nan.push(table.innerText.slice(0, 120));
  }
  found.align = [...new Set([...document.querySelectorAll("table.chunkproof td:not(.num)")]
                             .map(td => getComputedStyle(td).textAlign))];
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});
</script>"""


def measured(page, tmp_path) -> dict:
    """The page laid out at 1280 px wide: its scroll width, every table's width, the right
    edge of what shows of it and of its column, and the tables that say NaN."""
    copy = page.with_name(f"{page.stem}.measure.html")  # beside it: relative links still work
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"),
                    encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1280,900", "--virtual-time-budget=5000",
                   "--dump-dom", copy.as_uri())
    copy.unlink()
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("name", ["index", *DEFAULT_NOTEBOOKS])
def test_no_table_overflows_its_column_and_none_says_nan(report, tmp_path, name):
    found = measured(report / f"{name}.html", tmp_path)
    widest = max((t["table"] for t in found["tables"]), default=0)
    print(name, f"page {found['page']} px in a {found['viewport']} px window;",
          f"{len(found['tables'])} tables, widest {widest} px")
    assert found["tables"], "the page shows its tables"
    assert found["page"] <= found["viewport"]  # nothing widens the page itself
    for table in found["tables"]:
        assert table["box"] <= table["column"] + 1, table
    assert found["nan"] == []
    assert set(found["align"]) <= {"left"}  # text reads from the left, numbers line up right


def test_the_index_leads_with_the_choice_drawn(report, tmp_path):
    html = (report / "index.html").read_text(encoding="utf-8")
    picture = html.index('<div class="picture">')
    assert picture < html.index("<table")  # the picture comes before every table
    assert "A = chosen" not in html and "runner-up" in html
    assert measured(report / "index.html", tmp_path)["svg"] >= 1
    pixels = screenshot(tmp_path, report / "index.html", width=1280, height=1400)
    chosen, runner = (count_near(pixels, c, tolerance=20) for c in ROLE_COLOURS[:2])
    print(f"chosen-coloured pixels {chosen}, runner-up-coloured {runner}")
    assert chosen > 30 and runner > 30  # both marked in the chart


HEIGHT = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "height";
  out.textContent = String(document.documentElement.scrollHeight);
  document.body.appendChild(out);
});
</script>"""


def page_height(page, tmp_path) -> int:
    """Pixels of ``page`` laid out 1280 px wide."""
    copy = page.with_name(f"{page.stem}.height.html")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", HEIGHT + "</body>"),
                    encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1280,900", "--virtual-time-budget=5000",
                   "--dump-dom", copy.as_uri())
    copy.unlink()
    found = re.search(r'<pre id="height">(\d+)</pre>', dom)
    assert found, "the measuring script did not run"
    return int(found.group(1))


def test_the_explorer_page_keeps_to_its_height_on_long_documents(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, size in (("long.md", 120_000), ("longer.md", 200_000), ("short.md", 3_000)):
        (docs / name).write_text(big_markdown(size), encoding="utf-8")
    built = build_report(tmp_path / "out", corpus=str(docs), queries="",
                         notebooks=["04_chunk_explorer"], progress=False)
    assert not built.failed, [r.error for r in built.failed]
    height = page_height(built.out_dir / "04_chunk_explorer.html", tmp_path)
    print(f"04_chunk_explorer.html: {height} px (budget {PAGE_HEIGHT})")
    assert 2_000 < height <= PAGE_HEIGHT
