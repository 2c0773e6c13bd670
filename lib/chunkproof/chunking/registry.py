"""The strategy registry, a leaf of the chunking stage: names and what they stand for. The
strategies register themselves through ``chunking.build.register``. A strategy may need
optional packages: it stays listed without them, marked unavailable with the install command."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

from ..errors import MissingExtraError, UnknownStrategyError

if TYPE_CHECKING:
    from ..document.corpus import Document
    from .config import ChunkerConfig
    from .records import Chunk, StrategyFunc


@dataclass(frozen=True, slots=True)
class Requirement:
    """An optional package a strategy needs and the extra of chunkproof that installs it."""

    package: str
    """The distribution name, as pip knows it."""
    module: str
    """What the strategy imports."""
    extra: str

    def installed(self) -> bool:
        """Whether ``module`` can be imported (looked up without importing it)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False

    def version(self) -> str:
        try:
            return metadata.version(self.package)
        except metadata.PackageNotFoundError:
            return "?"


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered strategy: its function and what ``chunkproof strategies`` says of it."""

    name: str
    func: StrategyFunc
    """The strategy contract: ``(doc, config) -> list[Chunk]``."""
    description: str
    prefix: bool
    """Whether embed/context text carry the breadcrumb by default."""
    family: str
    """``ast`` (held to every invariant), ``paragraph``, ``routed`` or ``baseline`` (measured
    as it is), ``peer`` (another project's splitter, measured as it is)."""
    requires: tuple[Requirement, ...] = ()
    """Optional packages the strategy needs; empty when the core install is enough."""

    def missing(self) -> list[Requirement]:
        return [r for r in self.requires if not r.installed()]

    @property
    def available(self) -> bool:
        return not self.missing()

    def _lacking(self) -> tuple[str, str]:
        """(missing package names, the extras that install them), both comma-joined."""
        lacking = self.missing()
        names = ", ".join(r.package for r in lacking)
        return names, ",".join(sorted({r.extra for r in lacking}))

    def status(self) -> str:
        """What ``chunkproof strategies`` adds to the description: the packages' versions, or
        that the strategy is unavailable and the command that installs what it needs."""
        names, extras = self._lacking()
        if names:
            return f"unavailable ({names} not installed): pip install -e '.[{extras}]'"
        return ", ".join(f"{r.package} {r.version()}" for r in self.requires)

    def require(self) -> None:
        """MissingExtraError naming the install command when a needed package is missing."""
        names, extras = self._lacking()
        if names:
            raise MissingExtraError(f"strategy {self.name!r}", extras, names)

    def __call__(self, doc: Document, config: ChunkerConfig) -> list[Chunk]:
        if self.requires:  # the core strategies need nothing more
            self.require()
        return self.func(doc, config)


REGISTRY: dict[str, Strategy] = {}


def add(strategy: Strategy) -> None:
    """Put ``strategy`` in the registry under its name (replacing one of the same name)."""
    REGISTRY[strategy.name] = strategy


def strategy_names() -> list[str]:
    """Every registered strategy's name, available here or not (``chunkproof strategies``
    says which can run)."""
    return list(REGISTRY)


def available_names() -> list[str]:
    """The registered strategies whose optional packages are installed."""
    return [name for name, strategy in REGISTRY.items() if strategy.available]


def check_strategy(name: str) -> str:
    """``name`` when it is registered; UnknownStrategyError listing the valid ones otherwise."""
    if name not in REGISTRY:
        raise UnknownStrategyError(name, list(REGISTRY))
    return name


def get_strategy(name: str) -> Strategy:
    """The registered strategy ``name`` (its function, family, description and the optional
    packages it needs); UnknownStrategyError naming the closest and the valid ones
    otherwise."""
    return REGISTRY[check_strategy(name)]
