"""Domain errors: every failure chunklab reports is a ChunklabError that names what was wrong."""

from __future__ import annotations


class ChunklabError(Exception):
    """Base class of every error chunklab raises on purpose."""


class UnknownNameError(ChunklabError, KeyError):
    """A name looked up in a registry that does not hold it; the message lists the valid ones."""

    what = "name"
    plural = "names"

    def __init__(self, name: str, available: list[str]):
        self.name = name
        self.available = sorted(available)
        super().__init__(
            f"unknown {self.what} {name!r}; valid {self.plural}: {', '.join(self.available)}"
        )

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return self.args[0]


class UnknownStrategyError(UnknownNameError):
    """A strategy name that is not registered."""

    what, plural = "strategy", "strategies"


class UnknownRetrieverError(UnknownNameError):
    """A retriever name that is not registered."""

    what, plural = "retriever", "retrievers"


class ConfigError(ChunklabError, ValueError):
    """A configuration value that is out of range or of the wrong type."""


class CorpusError(ChunklabError):
    """A corpus folder that cannot be read at all (a single bad file is only reported)."""


class FileValidationError(ChunklabError, ValueError):
    """A file with one or more bad items; the message lists every one of them."""

    items = "item(s)"

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        listing = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{path}: {len(problems)} bad {self.items}:\n{listing}")


class QueryValidationError(FileValidationError):
    """A query file with one or more bad lines; the message lists every one of them."""

    items = "line(s)"


class MissingExtraError(ChunklabError, ImportError):
    """A feature that needs an optional extra which is not installed."""

    def __init__(self, feature: str, extra: str, missing: str):
        super().__init__(
            f"{feature} needs the optional extra '{extra}' ({missing} is not installed); "
            f"install it with: pip install -e '.[{extra}]'"
        )


class RetrieverError(ChunklabError, RuntimeError):
    """A retriever used out of order (search before index) or with a bad argument."""


class MetricError(ChunklabError, ValueError):
    """Inputs a metric cannot score: an unknown chunk id, an answer missing from its source."""


class ComparisonError(ChunklabError, ValueError):
    """A paired comparison on data that is not paired: unequal lengths, a missing config."""


class GoldValidationError(FileValidationError):
    """A heading gold file with one or more bad entries; the message lists every one of them."""

    items = "entry(ies)"
