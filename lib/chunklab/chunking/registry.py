"""The strategy registry (a leaf: it imports no strategy): every strategy is a function
``(doc, config) -> list[Chunk]`` registered under a name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from ..errors import UnknownStrategyError

if TYPE_CHECKING:
    from ..document.corpus import Document
    from .config import ChunkerConfig
    from .records import Chunk

StrategyFunc: TypeAlias = "Callable[[Document, ChunkerConfig], list[Chunk]]"
"""The strategy contract: a document and a config in, the document's chunks out."""


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered strategy: its function and what ``chunklab strategies`` says of it."""

    name: str
    func: StrategyFunc
    description: str
    prefix: bool
    """Whether embed/context text carry the breadcrumb by default."""
    family: str
    """``ast`` (held to every invariant), ``paragraph``, ``routed`` or ``baseline`` (measured
    as it is)."""

    def __call__(self, doc: Document, config: ChunkerConfig) -> list[Chunk]:
        return self.func(doc, config)


REGISTRY: dict[str, Strategy] = {}


def register(
    name: str, description: str, *, prefix: bool = False, family: str = "ast"
) -> Callable[[StrategyFunc], StrategyFunc]:
    """Decorator adding a strategy function to the registry under ``name``."""

    def add(func: StrategyFunc) -> StrategyFunc:
        REGISTRY[name] = Strategy(name, func, description, prefix, family)
        return func

    return add


def strategy_names() -> list[str]:
    return list(REGISTRY)


def check_strategy(name: str) -> str:
    """``name`` when it is registered; UnknownStrategyError listing the valid ones otherwise."""
    if name not in REGISTRY:
        raise UnknownStrategyError(name, list(REGISTRY))
    return name


def get_strategy(name: str) -> Strategy:
    return REGISTRY[check_strategy(name)]
