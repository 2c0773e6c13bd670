"""Headless Chromium for tests that look at HTML in a real browser, with no network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from extras import chromium_path

CHROMIUM = chromium_path()
needs_chromium = [pytest.mark.needs("chromium")]
# Every host name fails to resolve: a page that tried to fetch anything would show it.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND"


def chromium(tmp_path: Path, *args: str) -> str:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", OFFLINE,
             f"--user-data-dir={tmp_path / 'profile'}"]
    result = subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def screenshot(tmp_path: Path, page: Path, *, width: int = 1200, height: int = 900) -> np.ndarray:
    """The rendered page as a (height, width, 3) array of RGB pixels."""
    shot = tmp_path / f"{page.stem}.png"
    chromium(tmp_path, f"--screenshot={shot}", f"--window-size={width},{height}", page.as_uri())
    with Image.open(shot) as image:
        return np.asarray(image.convert("RGB"))


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def colours(pixels: np.ndarray) -> set[tuple[int, int, int]]:
    flat = np.unique(pixels.reshape(-1, 3), axis=0)
    return {tuple(int(v) for v in row) for row in flat}


def count_near(pixels: np.ndarray, hex_colour: str, tolerance: int = 12) -> int:
    """How many pixels lie within ``tolerance`` of a colour on every channel."""
    target = np.array(rgb(hex_colour))
    return int((np.abs(pixels.astype(int) - target) <= tolerance).all(axis=-1).sum())
