"""Saved views in a real headless Chromium: regions are drawn and hostile text runs nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from browser import chromium, colours, needs_chromium, rgb, screenshot
from chunkproof import make_config
from chunkproof.chunking.build import chunk_document
from chunkproof.util.atomic import write_text_atomic
from chunkproof.viz import BoundaryView, SideBySide
from chunkproof.viz.boundaries import PALETTE, page
from conftest import fixture_doc
from test_viz_boundaries import ALLOWED_TAGS, parse

pytestmark = needs_chromium


def save_view(tmp_path: Path, name: str, strategy: str, size: int, *, csp: bool = True) -> tuple:
    doc = fixture_doc(name)
    config = make_config(strategy=strategy, size=size)
    view = BoundaryView(doc, chunk_document(doc, config), config)
    path = write_text_atomic(tmp_path / f"{name}.{csp}.html", page(view.html(), view.title,
                                                                  csp=csp))
    return doc, view, path


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_hostile_document_runs_nothing(tmp_path, csp):
    doc, view, path = save_view(tmp_path, "hostile.md", "rct", 200, csp=csp)
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", path.as_uri())
    parsed = parse(dom)
    assert parsed.texts["title"] == [f"chunkproof · {view.title}"]
    assert "pwned" not in parsed.texts["title"][0]
    assert {tag for tag, _ in parsed.tags} <= ALLOWED_TAGS | {"tbody"}
    assert not {n for _, attrs in parsed.tags for n in attrs} & {"href", "src", "onerror"}
    assert parsed.docs == [doc.text]
    assert len(parsed.elements("chunk")) == len(view.chunks)


@pytest.mark.parametrize("name, strategy, size", [
    ("long_fence.md", "rct", 200),
    ("hostile.md", "ast_breadcrumb", 200),
])
def test_regions_are_drawn(tmp_path, name, strategy, size):
    _doc, view, path = save_view(tmp_path, name, strategy, size)
    pixels = screenshot(tmp_path, path)
    assert pixels.shape == (900, 1200, 3)
    seen = colours(pixels)
    assert len(seen) > 20
    assert {rgb(PALETTE[0]), rgb(PALETTE[1])} <= seen
    if view.stats()["flagged"]:
        assert rgb("#b91c1c") in seen


def test_side_by_side_draws_the_differing_boundaries(tmp_path):
    doc = fixture_doc("long_fence.md")
    left, right = make_config(strategy="ast_merge", size=200), make_config(strategy="rct", size=200)
    view = SideBySide(doc, chunk_document(doc, left), left, chunk_document(doc, right), right)
    path = view.save(tmp_path / "side.html")
    seen = colours(screenshot(tmp_path, path))
    assert rgb("#dc2626") in seen and rgb(PALETTE[0]) in seen


GUTTER_SCRIPT = """<script>
window.addEventListener("load", () => {
  const red = [];
  for (const row of document.querySelectorAll("tr.line")) {
    const gutter = row.querySelector("td.gutter");
    if (getComputedStyle(gutter).backgroundColor === "rgb(220, 38, 38)"
        && gutter.getBoundingClientRect().height > 0) red.push(Number(row.dataset.line));
  }
  const out = document.createElement("pre");
  out.id = "red-lines";
  out.textContent = red.join(",");
  document.body.appendChild(out);
});
</script>"""


def test_the_side_by_side_gutter_is_red_on_exactly_the_differing_lines(tmp_path):
    doc = fixture_doc("standard_deep.md")
    left, right = make_config(strategy="ast_merge", size=200), make_config(strategy="rct", size=200)
    view = SideBySide(doc, chunk_document(doc, left), left, chunk_document(doc, right), right)
    differing = [row.number for row in view.rows() if row.only]
    page = view.save(tmp_path / "side.html").read_text(encoding="utf-8")
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)  # lets it run
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", GUTTER_SCRIPT + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", probe.as_uri())
    shown = re.search(r'<pre id="red-lines">([\d,]*)</pre>', dom)
    assert shown, "the probe did not run"
    red = [int(n) for n in shown.group(1).split(",") if n]
    assert differing and red == differing
