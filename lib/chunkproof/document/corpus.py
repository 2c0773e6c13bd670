"""Read a folder of Markdown and plain-text files into Document records, reporting what it skips."""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from ..errors import (
    ConfigError,
    CorpusError,
    DocumentNotFoundError,
    ParseTimeLimitError,
    UndecodableFileError,
    missing_folder,
)
from ..util.code_version import code_version
from ..util.collector import collector_paused
from ..util.content_cache import ContentCache, digest
from ..util.json_bytes import Lines
from ..util.values import mib_from_env
from .blocks import (
    Block,
    LineIndex,
    atomic_blocks,
    block_rows,
    blocks_of_rows,
    parse_blocks,
    references_of,
    structure_source_of,
)
from .doc_warnings import (
    NESTING_LIMIT,
    NOT_LOADED,
    PARSE_TIME_LIMIT,
    SIZE_LIMIT,
    UNSUPPORTED_FORMAT,
    DocWarning,
    parse_warnings,
)
from .front_matter import read_front_matter
from .headings import EXPLICIT
from .inline import links, reference_label
from .listing import candidate_files
from .nesting import LIMIT_KEY
from .time_limit import parse_limit, time_limit

SUFFIXES = (".md", ".markdown", ".mdx", ".txt")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
"""Read as Markdown; MDX's components and ``import``/``export`` lines are blocks of their own
(``dialects.py``)."""
UNSUPPORTED_SUFFIXES = (".rst", ".html", ".htm", ".adoc")
"""Documentation formats found beside Markdown that the loader does not read: each such file
is listed as skipped (``unsupported format``), never silently passed over."""
UNSUPPORTED = "unsupported format"


@dataclass(frozen=True, slots=True)
class Document:
    """One source file, decoded, with what chunking needs to label its pieces."""

    id: str
    """Posix path relative to the corpus root; the document's identity everywhere."""
    text: str
    """Decoded text, BOM dropped, newlines exactly as in the file."""
    title: str
    """Front matter ``title``, else the first level-1 heading, else the file stem."""
    front_matter: dict = field(default_factory=dict)
    """Parsed YAML front matter (empty when there is none)."""
    structure_source: str = "none"
    """Where the headings came from: ``explicit``, ``inferred``, ``mixed`` or ``none``."""
    path: str = ""
    """Absolute path of the file that was read."""
    is_markdown: bool = True
    """False for ``.txt`` files: they get inferred headings only."""
    infer_headings: bool = False
    """Whether heading detectors run on Markdown paragraphs (always on for ``.txt``)."""
    blocks: tuple[Block, ...] = field(default=(), repr=False, compare=False)
    """The top-level blocks of ``text``, parsed once when the document is made."""
    lines: LineIndex = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    """Where each line of ``text`` starts, built once with the blocks."""
    references: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Link reference definitions (``[label]: url``): normalised label -> url."""
    atoms: tuple[Block, ...] = field(default=(), repr=False, compare=False)
    """Every fence, indented code block and table, nested ones included: no cut falls inside."""
    nesting_limit: tuple[int, ...] = field(default=(), compare=False)
    """1-based lines where its blocks reached the nesting limit (``nesting.py``): what lies
    deeper is held in a ``deep`` block."""
    warnings: tuple[DocWarning, ...] = field(default=(), compare=False)
    """What the load did other than read the file as marked up (``doc_warnings.py``): no
    headings, inferred headings, the nesting limit reached, front matter that did not parse."""

    def __post_init__(self) -> None:
        # Made directly (or by dataclasses.replace with new text): parse the text it holds.
        if self.lines is None or self.lines.text is not self.text:
            parsed = parse(self.text, self.is_markdown, self.infer_headings)
            for name in ("lines", "blocks", "references", "atoms", "nesting_limit",
                         "warnings"):
                object.__setattr__(self, name, parsed[name])

    def as_dict(self) -> dict:
        """The document's fields without its parse (blocks, line index, atoms), its warnings
        as dicts."""
        found = {name: getattr(self, name) for name in self.__dataclass_fields__
                 if name not in ("blocks", "lines", "atoms")}
        return {**found, "warnings": [w.as_dict() for w in self.warnings]}

    @property
    def description(self) -> str:
        """Front matter ``description`` (empty when there is none)."""
        value = self.front_matter.get("description")
        return value.strip() if isinstance(value, str) else ""

    def resolve(self, label: str) -> str | None:
        """The url a reference-style link ``[text][label]`` points to, or None."""
        return self.references.get(reference_label(label))

    def links(self, text: str) -> list[tuple[str, str]]:
        """``(text, url)`` of every link in ``text`` (a chunk's text, say), reference-style
        links resolved against this document's definitions wherever they stand."""
        return links(text, self.references)


MAX_FILE_BYTES = 8 * 2**20
"""Files larger than this (8 MiB, some 2,000 pages of prose) are skipped unread: parsing one
that size takes seconds to minutes (a list nested thousands deep), and documentation pages
are far smaller. ``load_corpus(max_bytes=...)``, ``CHUNKPROOF_MAX_FILE_MIB`` or the commands'
``--max-file-mib`` set another limit."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the loader could not use, and why."""

    path: str
    reason: str
    kind: str = NOT_LOADED
    """Why, as a warning kind (``doc_warnings.KINDS``): size_limit, parse_time_limit,
    unsupported_format or not_loaded."""

    def as_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}

    def warning(self) -> DocWarning:
        return DocWarning(self.kind, self.reason)


@dataclass(frozen=True, slots=True)
class Corpus:
    """The documents of one folder plus the report of files it skipped."""

    root: str
    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    """The size over which a file was skipped unread (``file_limit``)."""

    def __iter__(self):
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, doc_id: str) -> Document:
        """The document with id ``doc_id``; DocumentNotFoundError (a KeyError) otherwise."""
        for doc in self.documents:
            if doc.id == doc_id:
                return doc
        ids = [d.id for d in self.documents]
        raise DocumentNotFoundError(doc_id, self.root, difflib.get_close_matches(doc_id, ids, n=3))

    @property
    def fingerprint(self) -> str:
        """sha256 over every document id and text: changes when any input changes."""
        return fingerprint_of((doc.id, text_digest(doc.text)) for doc in self.documents)

    def require_documents(self) -> Corpus:
        """The corpus itself when it holds a document; CorpusError saying what was found."""
        if not self.documents:
            found = (f"{len(self.skipped)} file(s) skipped, e.g. {self.skipped[0].path}: "
                     f"{self.skipped[0].reason}" if self.skipped else "no files")
            raise CorpusError(f"corpus {self.root!r} holds no documents ({found}): point "
                              f"--corpus at a folder of {', '.join(SUFFIXES)} files")
        return self

    def warnings(self) -> list[tuple[str, DocWarning]]:
        """(document or file, warning) of every document's warnings, in document order, then
        of every skipped file."""
        return ([(d.id, w) for d in self.documents for w in d.warnings]
                + [(s.path, s.warning()) for s in self.skipped])

    def warning_rows(self) -> list[dict]:
        """``warnings`` as rows of document_warnings.csv (doc_id, kind, message, line)."""
        return [{"doc_id": doc_id, **w.as_dict()} for doc_id, w in self.warnings()]

    def report(self) -> list[dict]:
        """One row per file considered: loaded documents and skipped files with the reason."""
        rows = [{"path": d.id, "status": "loaded", "reason": _note(d)} for d in self.documents]
        rows += [{"path": s.path, "status": "skipped", "reason": s.reason} for s in self.skipped]
        return rows


def _note(doc: Document) -> str:
    """What a loaded document's row says: where it reached the nesting limit, if it did."""
    reached = [w.line for w in doc.warnings if w.kind == NESTING_LIMIT]
    if not reached:
        return ""
    where = ", ".join(str(line) for line in reached)
    return (f"nesting limit reached (line {where}): the blocks nested deeper are read as a "
            "document of their own, in one block")


def decode(raw: bytes) -> str:
    """UTF-8 text with the BOM dropped; raises UndecodableFileError (a ValueError) naming the
    problem otherwise."""
    if b"\0" in raw:
        raise UndecodableFileError("holds NUL bytes (binary file?)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UndecodableFileError(f"not valid UTF-8 (byte {err.start})") from None
    return text.removeprefix("\ufeff")


def _title(front_matter: dict, blocks: tuple[Block, ...], doc_id: str) -> str:
    """Front matter ``title``, else the first marked level-1 heading, else the file stem."""
    title = front_matter.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    # Identity never comes from an inferred heading: only a marked H1 may name the document.
    h1 = next((b for b in blocks if b.kind == "heading" and b.level == 1  # Block.is_heading
               and b.provenance in EXPLICIT), None)
    return h1.title if h1 else Path(doc_id).stem


ROWS_AT_ONCE = 1024
"""Top-level blocks made into rows, or read back from them, at a time: the rows of a large
page are never all held at once, beside their JSON or beside the blocks made of them."""


def parse_data(parsed: dict, text: str) -> Lines:
    """A parse (``parse_text``) as JSON data, what ``PARSES`` stores, as lines: first its
    size, references, the nesting limit's lines and warnings as rows, then its blocks as rows
    (``block_rows``), ``ROWS_AT_ONCE`` top-level blocks a line, each line made and encoded
    before the next; the line index and atoms are made again from the text and blocks."""
    blocks = parsed["blocks"]
    head = {"size": len(text), "references": parsed["references"],
            "nesting_limit": list(parsed["nesting_limit"]),
            "warnings": [[w.kind, w.message, w.line] for w in parsed["warnings"]]}
    return Lines(chain([head], (block_rows(blocks[start : start + ROWS_AT_ONCE])
                                for start in range(0, len(blocks), ROWS_AT_ONCE))))


def parse_of_data(lines: Iterator[object]) -> dict:
    """The parse ``parse_data`` stored, from its lines as they are decoded (the blocks of one
    line made before the next is read), every field checked: TypeError or ValueError for data
    of another shape (``ContentCache.decode``)."""
    data = next(lines, None)
    if not isinstance(data, dict) or type(data.get("size")) is not int:
        raise TypeError("not a stored parse")
    references, limit, rows = data["references"], data["nesting_limit"], data["warnings"]
    if not (isinstance(references, dict) and all(type(v) is str for v in references.values())
            and type(limit) is list and all(type(n) is int for n in limit)
            and type(rows) is list):
        raise TypeError("not a stored parse")
    warnings = tuple(DocWarning(kind, message, line) for kind, message, line in rows)
    if not all(type(w.kind) is type(w.message) is str and type(w.line) is int
               for w in warnings):
        raise TypeError("not a stored parse")
    found: list[Block] = []
    for group in lines:
        found.extend(blocks_of_rows(group, data["size"]))
    blocks = tuple(found)
    return {"size": data["size"], "blocks": blocks, "references": references,
            "atoms": tuple(atomic_blocks(blocks)), "nesting_limit": tuple(limit),
            "warnings": warnings}


PARSES = ContentCache("parsed", decode=parse_of_data)
"""Parses of earlier runs, by ``parse_key``: a page is parsed again only when it changed."""


def parse_key(text: str, is_markdown: bool, infer_headings: bool) -> str:
    """What a parse depends on: the text, how it is read, and chunkproof's code and the
    packages that decide a parse (``code_version``: markdown-it-py among them)."""
    return digest(text, f"markdown={is_markdown} infer={infer_headings}", code_version())


@collector_paused()
def parse(text: str, is_markdown: bool, infer_headings: bool) -> dict:
    """What a Document holds of its parse: lines, blocks, references, atoms and where the
    nesting limit was reached; read from ``PARSES`` when this text was parsed before (its
    rows made and read with the cyclic collector held off, as the parse itself is)."""
    key = parse_key(text, is_markdown, infer_headings) if not PARSES.disabled else ""
    kept = PARSES.get(key) if key else None
    if kept is not None and kept.pop("size") == len(text):
        return {**kept, "lines": LineIndex(text)}
    parsed = parse_text(text, is_markdown, infer_headings)
    if key:
        PARSES.put(key, parse_data(parsed, text))
    return parsed


def parse_text(text: str, is_markdown: bool, infer_headings: bool) -> dict:
    """``parse`` done now, with markdown-it."""
    lines = LineIndex(text)
    env: dict = {}
    blocks = parse_blocks(text, is_markdown, infer_headings, lines=lines, env=env)
    reached = tuple(line + 1 for line in env.get(LIMIT_KEY, ()))
    return {"lines": lines, "blocks": blocks, "references": references_of(env),
            "atoms": tuple(atomic_blocks(blocks)), "nesting_limit": reached,
            "warnings": parse_warnings(blocks, lines, reached)}


def make_document(
    doc_id: str, text: str, *, path: str = "", infer_headings: bool = False,
    parse_seconds: float | None = None,
) -> Document:
    """Build a Document from text already decoded (what the loader, the adapters and tests
    use), parsed within the per-document CPU time limit (``parse_seconds``, else
    ``CHUNKPROOF_PARSE_SECONDS``, else ``PARSE_SECONDS``; 0: none): ParseTimeLimitError past
    it (``time_limit``)."""
    with time_limit(parse_limit(parse_seconds)):
        return _document(doc_id, text, path, infer_headings)


def _document(doc_id: str, text: str, path: str, infer_headings: bool) -> Document:
    is_markdown = not doc_id.lower().endswith(".txt")
    parsed = parse(text, is_markdown, infer_headings)
    front_matter, problem = read_front_matter(parsed["blocks"], text)
    if problem is not None:
        parsed["warnings"] = (problem, *parsed["warnings"])
    return Document(
        id=doc_id,
        text=text,
        title=_title(front_matter, parsed["blocks"], doc_id),
        front_matter=front_matter,
        structure_source=structure_source_of(parsed["blocks"]),
        path=path,
        is_markdown=is_markdown,
        infer_headings=infer_headings,
        **parsed,
    )


NOT_REGULAR = "not a regular file"


MAX_FILE_ENV = "CHUNKPROOF_MAX_FILE_MIB"


def file_limit(max_bytes: int | None = None) -> int:
    """``max_bytes``, else ``CHUNKPROOF_MAX_FILE_MIB`` (MiB), else ``MAX_FILE_BYTES``;
    ConfigError naming the value when it is not a positive size."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ConfigError(f"max_bytes: expected a positive number of bytes; got "
                              f"{max_bytes!r}")
        return max_bytes
    return mib_from_env(MAX_FILE_ENV, MAX_FILE_BYTES, what="the largest file to read in MiB",
                        example=32, limit_mib=2**20)


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def read_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file; OSError(NOT_REGULAR) for a FIFO, device or socket, which
    is opened without blocking and never read, and OSError for a file over ``max_bytes``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(NOT_REGULAR)
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than the {_size(max_bytes)} limit "
                                       f"({_size(info.st_size)}): not read")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read()
    finally:
        os.close(fd)


def _reason(err: BaseException) -> str:
    """One line saying why a file could not be read or parsed."""
    if isinstance(err, OSError):
        return err.strerror or str(err)
    if isinstance(err, ParseTimeLimitError):
        return f"{err}: skipped"
    if isinstance(err, UndecodableFileError):
        return str(err)
    text = " ".join(str(err).split())
    return f"could not be loaded: {type(err).__name__}" + (f": {text[:200]}" if text else "")


def _skip_kind(err: BaseException) -> str:
    """The warning kind of a file skipped for ``err``."""
    if isinstance(err, ParseTimeLimitError):
        return PARSE_TIME_LIMIT
    if isinstance(err, OSError) and err.errno == errno.EFBIG:
        return SIZE_LIMIT
    return NOT_LOADED


def _load_file(path: Path, doc_id: str, infer_headings: bool, max_bytes: int,
               seconds: float) -> Document:
    text = decode(read_regular(path, max_bytes))
    return make_document(doc_id, text, path=str(path.resolve()), infer_headings=infer_headings,
                         parse_seconds=seconds)


def corpus_files(root: str | os.PathLike) -> list[tuple[Path, str]]:
    """The files ``load_corpus`` considers under root, as (path, document id) in id order
    (``listing.candidate_files``; ``~`` is the home folder); CorpusError when root is no
    folder."""
    root_path = Path(root).expanduser()
    if not root_path.is_dir():
        raise CorpusError(missing_folder(root))
    return [(path, path.relative_to(root_path).as_posix())
            for path in candidate_files(root_path, SUFFIXES + UNSUPPORTED_SUFFIXES)]


def load_file(path: Path, doc_id: str, *, infer_headings: bool, max_bytes: int,
              seconds: float) -> Document | Skipped:
    """One file under the loader's rules: its Document, or Skipped saying why (a file of an
    unsupported format unread; one that cannot be read, decoded, or parsed within ``seconds``
    of CPU time). A ConfigError (a setting every file shares) is raised: it is no file's
    fault."""
    if path.suffix.lower() in UNSUPPORTED_SUFFIXES:
        return Skipped(doc_id, UNSUPPORTED, UNSUPPORTED_FORMAT)
    try:  # one file's failure, whatever it is, skips that file alone
        return _load_file(path, doc_id, infer_headings, max_bytes, seconds)
    except ConfigError:
        raise
    except Exception as err:
        return Skipped(doc_id, _reason(err), _skip_kind(err))


def load_corpus(root: str | os.PathLike, *, infer_headings: bool = False,
                max_bytes: int | None = None, parse_seconds: float | None = None) -> Corpus:
    """Load every .md/.markdown/.mdx/.txt file under root; unreadable files, files that are no
    regular file (a FIFO, a device), files over ``max_bytes``, files whose parse takes more
    than ``parse_seconds`` of CPU time (None: ``CHUNKPROOF_PARSE_SECONDS`` or
    ``PARSE_SECONDS``; 0: no limit), files whose load fails in any way and files of an
    unsupported format (.rst, .html, .htm, .adoc) are reported, not fatal (``load_file``)."""
    limit = parse_limit(parse_seconds)
    max_bytes = file_limit(max_bytes)
    documents: list[Document] = []
    skipped: list[Skipped] = []
    for path, doc_id in corpus_files(root):
        loaded = load_file(path, doc_id, infer_headings=infer_headings, max_bytes=max_bytes,
                           seconds=limit)
        if isinstance(loaded, Skipped):
            skipped.append(loaded)
        else:
            documents.append(loaded)
    PARSES.flush()
    return Corpus(str(Path(root)), tuple(documents), tuple(skipped), max_bytes)


def text_digest(text: str) -> str:
    """sha256 of a document's text (UTF-8), hex: what ``fingerprint_of`` reads of it."""
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint_of(documents: Iterable[tuple[str, str]]) -> str:
    """The corpus fingerprint of (document id, ``text_digest``) pairs, in document order:
    sha256 over every id and text digest, first 16 hex digits."""
    digest = hashlib.sha256()
    for doc_id, text in documents:
        digest.update(doc_id.encode())
        digest.update(b"\0")
        digest.update(bytes.fromhex(text))
    return digest.hexdigest()[:16]
