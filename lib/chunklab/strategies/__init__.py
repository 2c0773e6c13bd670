"""Strategy registry: every strategy is ``f(doc, config) -> list[Chunk]``, found by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UnknownStrategyError


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    func: Callable
    description: str
    prefix: bool
    """Whether embed/context text carry the breadcrumb by default."""
    family: str
    """``ast`` (ours, held to every invariant) or ``baseline`` (measured as it is)."""

    def __call__(self, doc, config):
        return self.func(doc, config)


REGISTRY: dict[str, Strategy] = {}


def register(name: str, description: str, *, prefix: bool = False, family: str = "ast"):
    """Decorator adding a strategy function to the registry under ``name``."""

    def add(func: Callable) -> Callable:
        REGISTRY[name] = Strategy(name, func, description, prefix, family)
        return func

    return add


def strategy_names() -> list[str]:
    return list(REGISTRY)


def check_strategy(name: str) -> str:
    if name not in REGISTRY:
        raise UnknownStrategyError(name, list(REGISTRY))
    return name


def get_strategy(name: str) -> Strategy:
    return REGISTRY[check_strategy(name)]


def chunk_document(doc, config) -> list:
    """Chunks of one document under a config."""
    return get_strategy(config.strategy)(doc, config)


from . import ast, baselines, paragraph, routed  # noqa: E402,F401  (registration)
