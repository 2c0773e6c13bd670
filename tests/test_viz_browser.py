"""Saved views in a real headless Chromium: regions are drawn and hostile text runs nothing."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from chunklab import make_config
from chunklab.io import write_text_atomic
from chunklab.strategies import chunk_document
from chunklab.viz import BoundaryView, SideBySide
from chunklab.viz.boundaries import PALETTE, page
from conftest import fixture_doc
from test_viz_boundaries import ALLOWED_TAGS, parse


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium: apt-get install chromium"),
]


def chromium(tmp_path: Path, *args: str) -> str:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}"]
    result = subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def _unfilter(kind: int, line: np.ndarray, prev: np.ndarray, bpp: int) -> np.ndarray:
    if kind == 1:
        return (line.reshape(-1, bpp).cumsum(axis=0) % 256).astype(np.uint8).ravel()
    if kind == 2:
        return line + prev
    if kind in (3, 4):
        out, up = bytearray(line.tobytes()), prev.tobytes()
        for i in range(len(out)):
            left = out[i - bpp] if i >= bpp else 0
            corner = up[i - bpp] if i >= bpp else 0
            if kind == 3:
                out[i] = (out[i] + ((left + up[i]) >> 1)) & 255
                continue
            p = left + up[i] - corner
            pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
            guess = left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner
            out[i] = (out[i] + guess) & 255
        return np.frombuffer(bytes(out), dtype=np.uint8)
    return line


def png_pixels(data: bytes) -> np.ndarray:
    """A non-interlaced 8-bit RGB/RGBA PNG as a (height, width, 3) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunks.setdefault(kind, []).append(data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(chunks[b"IDAT"])), dtype=np.uint8)
    rows = raw.reshape(height, width * bpp + 1)
    prev = np.zeros(width * bpp, dtype=np.uint8)
    out = np.empty((height, width * bpp), dtype=np.uint8)
    for y in range(height):
        prev = out[y] = _unfilter(int(rows[y, 0]), rows[y, 1:], prev, bpp)
    return out.reshape(height, width, bpp)[:, :, :3]


def colours(pixels: np.ndarray) -> set[tuple[int, int, int]]:
    flat = np.unique(pixels.reshape(-1, 3), axis=0)
    return {tuple(int(v) for v in row) for row in flat}


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
    assert parsed.texts["title"] == [f"chunklab · {view.title}"]
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
    shot = tmp_path / "shot.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", path.as_uri())
    pixels = png_pixels(shot.read_bytes())
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
    shot = tmp_path / "side.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", path.as_uri())
    seen = colours(png_pixels(shot.read_bytes()))
    assert rgb("#dc2626") in seen and rgb(PALETTE[0]) in seen
