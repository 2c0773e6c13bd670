"""The strategy registry, a leaf of the chunking stage: names and what they stand for. The
strategies register themselves through ``chunking.build.register``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownStrategyError


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered strategy: its function and what ``chunklab strategies`` says of it."""

    name: str
    func: Callable[..., list[Any]]
    """``(doc, config) -> list[Chunk]``: the contract ``chunking.records.StrategyFunc``."""
    description: str
    prefix: bool
    """Whether embed/context text carry the breadcrumb by default."""
    family: str
    """``ast`` (held to every invariant), ``paragraph``, ``routed`` or ``baseline`` (measured
    as it is)."""

    def __call__(self, doc: Any, config: Any) -> list[Any]:
        return self.func(doc, config)


REGISTRY: dict[str, Strategy] = {}


def add(strategy: Strategy) -> None:
    """Put ``strategy`` in the registry under its name (replacing one of the same name)."""
    REGISTRY[strategy.name] = strategy


def strategy_names() -> list[str]:
    return list(REGISTRY)


def check_strategy(name: str) -> str:
    """``name`` when it is registered; UnknownStrategyError listing the valid ones otherwise."""
    if name not in REGISTRY:
        raise UnknownStrategyError(name, list(REGISTRY))
    return name


def get_strategy(name: str) -> Strategy:
    return REGISTRY[check_strategy(name)]
