"""Shared fixtures: the sample corpus, small fixture documents and strategy lists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Nothing may touch the network: models and tokenizers come from installed packages only.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# One OpenMP thread per pytest worker: two workers on two cores, no thread oversubscription.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Sweeps in the test process (pytest -n 2 already fills both cores); tests of the local
# and Ray engines ask for their workers explicitly.
os.environ.setdefault("CHUNKPROOF_WORKERS", "1")
# No parse or tokenisation kept across tests (a test that changes the parser must parse);
# tests/test_content_cache.py turns the caches on in a folder of its own.
os.environ.setdefault("CHUNKPROOF_CONTENT_CACHE", "0")
# No sweep's measured costs read or recorded (workers=auto weighs the defaults);
# tests/test_engine.py records them in a folder of its own.
os.environ.setdefault("CHUNKPROOF_COSTS", "0")

from chunkproof import load_corpus, make_document
from chunkproof.chunking.registry import REGISTRY
from extras import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked ``needs(extra, ...)`` when a part it needs is missing, saying which
    and the command that installs it."""
    for mark in item.iter_markers("needs"):
        for name in mark.args:
            if name not in EXTRAS:
                raise pytest.UsageError(f"needs({name!r}): no such extra; known: "
                                        f"{', '.join(EXTRAS)}")
            reason = EXTRAS[name].skip_reason()
            if reason:
                pytest.skip(reason)


def strategy_params(names: list[str]) -> list:
    """Strategy names as parameters, each marked ``needs`` the extras its registry entry
    requires: a strategy whose packages are missing is listed and skipped with the command."""
    params = []
    for name in names:
        extras = sorted({r.extra for r in REGISTRY[name].requires})
        marks = [pytest.mark.needs(*extras)] if extras else []
        params.append(pytest.param(name, id=name, marks=marks))
    return params


# Ours: held to the invariants (paragraph cuts at blank lines, so not to intact blocks).
OURS = [name for name, s in REGISTRY.items() if s.family in ("ast", "paragraph")]
# Measured as they are: LangChain baselines, routing, and the peers whose extra is installed.
BASELINES = strategy_params([name for name, s in REGISTRY.items()
                             if s.family not in ("ast", "paragraph")])
EVERY = strategy_params(list(REGISTRY))


def fixture_doc(name: str, **kwargs):
    """A fixture file as a Document, text read exactly as the loader reads it."""
    path = FIXTURES / name
    return make_document(name, path.read_bytes().decode("utf-8"), path=str(path), **kwargs)


@pytest.fixture(scope="session")
def sample_corpus():
    return load_corpus(SAMPLE)


@pytest.fixture(scope="session")
def tokens_doc():
    """``leakage/tokens.md``: a section a heading query and a body-sentence query both find."""
    return next(iter(load_corpus(FIXTURES / "leakage")))
