"""Notebook parameters: one validator for all six notebooks. Each notebook declares a pydantic
model whose fields are its UPPER_CASE parameters; every problem is reported as one
ConfigError line ``NAME: what was wrong (got value)``."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    ValidationInfo,
)

from ..chunking.registry import check_strategy, strategy_names
from ..chunking.sizes import UNITS
from ..document.anchors import SLUG_RULES
from ..document.corpus import Corpus, load_corpus
from ..errors import (
    A_FOLDER,
    MISSING_FILE,
    ChunkproofError,
    ConfigError,
    FileReadError,
    UnknownStrategyError,
    did_you_mean,
    missing_folder,
)
from ..evaluation.queries.queries import Query, load_queries
from ..evaluation.retrieval.modes import MODES
from ..evaluation.retrieval.retrieve import retriever_names
from ..util.paths import repo_root, shared_path

KINDS = ("file", "folder")
Model = TypeVar("Model", bound=BaseModel)


def _exists(path: Path, kind: str) -> bool:
    try:
        return path.is_dir() if kind == "folder" else path.is_file()
    except OSError:  # a name too long, a loop of links: not there for us
        return False


WHAT = {"CORPUS": "corpus folder", "QUERIES": "query file", "HELD_OUT_QUERIES": "query file"}
"""What a path parameter names, as the commands' messages call it (else "file" or "folder")."""


def resolve_path(value: str | os.PathLike, *, name: str, kind: str = "file") -> Path:
    """An existing file or folder: ``value`` as given, else relative to the repo root.

    So ``data/sample`` works from the repo root (papermill) and from ``notebooks/``
    (JupyterLab). A missing one raises ConfigError naming the parameter, with the message
    every command gives for it (and where else it looked).
    """
    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if not isinstance(value, str | os.PathLike) or not str(value).strip():
        raise ConfigError(f"{name}: expected a {kind} path; got {value!r}")
    given = Path(value).expanduser()
    tried = [given.resolve()]
    root = repo_root()
    if not given.is_absolute() and root is not None:
        tried.append((root / given).resolve())
    for path in tried:
        if _exists(path, kind):
            return path
    what = WHAT.get(name, kind)
    folder = kind == "file" and any(_exists(path, "folder") for path in tried)
    problem = (missing_folder(value, what) if kind == "folder" else str(FileReadError(
        value, what, A_FOLDER if folder else MISSING_FILE)))
    elsewhere = [str(p) for p in dict.fromkeys(tried) if str(p) != str(value)]
    looked = f" (looked for {' or '.join(elsewhere)})" if elsewhere else ""
    raise ConfigError(f"{name}: {problem}{looked}")


def resolve_output(value: str | os.PathLike, *, name: str) -> Path:
    """A folder to write into: absolute as given; a relative one is under the repo root
    above the working folder (so notebooks/ and the root agree), else under the working
    folder. It is not created here."""
    if not isinstance(value, str | os.PathLike) or not str(value).strip():
        raise ConfigError(f"{name}: expected an output folder; got {value!r}")
    given = Path(value).expanduser()
    if given.is_absolute():
        return given
    return ((repo_root(package=False) or Path.cwd()) / given).resolve()


# --- field types: a validator raises ValueError("what was wrong; got value"), reported with
# the parameter's name by ``validate`` ----------------------------------------------------


def _got(value: Any) -> str:
    return f"got {value!r}"


def _unnamed(err: ChunkproofError, name: str) -> ValueError:
    return ValueError(str(err).removeprefix(f"{name}: "))


def _folder(value: Any, info: ValidationInfo) -> str:
    try:
        return str(resolve_path(value, name=info.field_name or "", kind="folder"))
    except ConfigError as err:
        raise _unnamed(err, info.field_name or "") from None


def _optional_file(value: Any, info: ValidationInfo) -> str:
    if value == "":
        return ""
    try:
        return str(resolve_path(value, name=info.field_name or ""))
    except ConfigError as err:
        raise _unnamed(err, info.field_name or "") from None


def _optional_folder(value: Any, info: ValidationInfo) -> str:
    return "" if value == "" else _folder(value, info)


def _output(value: Any, info: ValidationInfo) -> str:
    try:
        return str(resolve_output(value, name=info.field_name or ""))
    except ConfigError as err:
        raise _unnamed(err, info.field_name or "") from None


def _optional_output(value: Any, info: ValidationInfo) -> str:
    return "" if value == "" else _output(value, info)


def _integer(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"expected an integer >= {minimum}; {_got(value)}")
        return value
    return check


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected True or False; {_got(value)}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string; {_got(value)}")
    return value


def one_of(names: Callable[[], Sequence[str]]) -> Callable[[Any], str]:
    """A validator accepting only the names ``names()`` returns when it runs."""
    def check(value: Any) -> str:
        allowed = list(names())
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}; {_got(value)}"
                             f"{did_you_mean(value, allowed)}")
        return value
    return check


def _list_of(item: type, *, allow_empty: bool = False) -> Callable[[Any], list]:
    def check(value: Any) -> list:
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, item) and not isinstance(v, bool) for v in value
        ):
            raise ValueError(f"expected a list of {item.__name__}; {_got(value)}")
        if not value and not allow_empty:
            raise ValueError("expected at least one value; got an empty list")
        return list(value)
    return check


PATH_CHECKS = (_folder, _optional_folder, _optional_file, _output, _optional_output)
"""The checks of the parameters that name a folder or a file."""


def shared_parameters(checked: BaseModel) -> dict[str, Any]:
    """Checked parameters as a file of the run folder records them: each one naming a folder
    or a file (``PATH_CHECKS``) as ``util.paths.shared_path`` names it, never spelled as the
    machine does."""
    found = {}
    for name, info in type(checked).model_fields.items():
        value = getattr(checked, name)
        names_a_path = any(getattr(m, "func", None) in PATH_CHECKS for m in info.metadata)
        found[name] = shared_path(value) if names_a_path and isinstance(value, str) else value
    return found


ExistingFolder = Annotated[str, BeforeValidator(_folder)]
"""An existing folder, resolved to an absolute path."""
CorpusFolder = ExistingFolder
"""A corpus folder, resolved to an absolute path."""
ModelFolder = Annotated[str, BeforeValidator(_optional_folder)]
"""A model folder resolved to an absolute path, or "" for the one this process uses."""
OptionalFolder = ModelFolder
"""An existing folder resolved to an absolute path, or "" for none."""
QueryFile = Annotated[str, BeforeValidator(_optional_file)]
"""A query (or gold) file resolved to an absolute path, or "" for none."""
OutputFolder = Annotated[str, BeforeValidator(_output)]
"""A folder to write into, absolute; not created here."""
OptionalOutput = Annotated[str, BeforeValidator(_optional_output)]
"""A folder to write into, or "" to write nothing."""
PositiveInt = Annotated[int, BeforeValidator(_integer(1))]
NonNegativeInt = Annotated[int, BeforeValidator(_integer(0))]
Flag = Annotated[bool, BeforeValidator(_bool)]
Text = Annotated[str, BeforeValidator(_text)]
def _strategy(value: Any) -> str:
    """A registered strategy's name, or a plug-in's (its import path, which an entry point's
    name becomes)."""
    if not isinstance(value, str):
        return one_of(strategy_names)(value)
    try:
        return check_strategy(value)
    except UnknownStrategyError:
        return one_of(strategy_names)(value)  # says which names there are
    except ChunkproofError as err:  # a plug-in that cannot be used
        raise ValueError(str(err)) from None


StrategyName = Annotated[str, BeforeValidator(_strategy)]
RetrieverName = Annotated[str, BeforeValidator(one_of(retriever_names))]
Unit = Annotated[str, BeforeValidator(one_of(lambda: UNITS))]
SlugRuleName = Annotated[str, BeforeValidator(one_of(lambda: list(SLUG_RULES)))]
"""How the site makes heading anchors (``document.anchors.SLUG_RULES``)."""
Strategies = Annotated[list[str], BeforeValidator(_list_of(str)),
                       AfterValidator(lambda v: [_strategy(x) for x in v])]
Retrievers = Annotated[list[str], BeforeValidator(_list_of(str)),
                       AfterValidator(lambda v: [one_of(retriever_names)(x) for x in v])]
Modes = Annotated[list[str], BeforeValidator(_list_of(str)),
                  AfterValidator(lambda v: [one_of(lambda: MODES)(x) for x in v])]
"""Retrieval modes (``evaluation.retrieval.modes``), at least one."""
Sizes = Annotated[list[int], BeforeValidator(_list_of(int)),
                  AfterValidator(lambda v: [_integer(1)(x) for x in v])]
PositiveInts = Annotated[list[int], BeforeValidator(_list_of(int, allow_empty=True)),
                         AfterValidator(lambda v: [_integer(1)(x) for x in v])]
"""Positive integers, possibly none (e.g. token budgets)."""
Texts = Annotated[list[str], BeforeValidator(_list_of(str))]
TextsOrNone = Annotated[list[str], BeforeValidator(_list_of(str, allow_empty=True))]


PARAMETER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
"""A notebook parameter's name: upper case, as the ``parameters`` cell spells them."""


def notebook_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A notebook's parameters as its kernel holds them: every upper-case name a cell
    assigned at top level (IPython's input history ``In``: the ``parameters`` cell and
    whatever papermill injected after it) or annotated (the ``parameters`` cell's
    ``NAME: type = value``). So a mistyped name (``-p SIZE 300`` where the notebook takes
    ``SIZES``) reaches the validator, which refuses it naming the valid ones; an imported
    constant is not a parameter. The validation cell passes ``notebook_parameters(globals())``."""
    names = set(namespace.get("__annotations__", {}))
    for source in namespace.get("In", ()):
        names |= _assigned_names(source)
    return {name: namespace[name] for name in sorted(names)
            if PARAMETER_NAME.fullmatch(name) and name in namespace}


def _assigned_names(source: str) -> set[str]:
    """Names a cell's top-level statements assign (plain or annotated assignment)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set()
    targets = [t for node in body for t in (
        node.targets if isinstance(node, ast.Assign)
        else [node.target] if isinstance(node, ast.AnnAssign) else [])]
    return {t.id for t in targets if isinstance(t, ast.Name)}


class NotebookParams(BaseModel):
    """A notebook's parameters, as its ``parameters`` cell names them (upper case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def validate(model: type[Model], **values: Any) -> Model:
    """``model(**values)``; every problem raises one ConfigError ``NAME: problem``, problems
    joined by "; " (an unknown name lists the valid ones)."""
    try:
        return model(**values)
    except ValidationError as err:
        raise ConfigError("; ".join(_problem(model, item) for item in err.errors())) from None


def _problem(model: type[BaseModel], item: Any) -> str:
    name = str(item["loc"][0]) if item["loc"] else model.__name__
    if item["type"] == "extra_forbidden":
        valid = ", ".join(model.model_fields)
        return f"{name}: not a parameter of this notebook; valid parameters: {valid}"
    if item["type"] == "missing":
        return f"{name}: missing (every parameter must be given)"
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] != "value_error":
        message = f"{message}; {_got(item['input'])}"
    return f"{name}: {message}"


@contextmanager
def parameter(name: str) -> Iterator[None]:
    """Errors inside (loading what a parameter names) become ConfigError ``NAME: ...``."""
    try:
        yield
    except ChunkproofError as err:
        raise ConfigError(f"{name}: {str(err).removeprefix(f'{name}: ')}") from None


def load_corpus_param(folder: str, *, name: str = "CORPUS", infer_headings: bool = False,
                      nonempty: bool = False) -> Corpus:
    """The corpus in ``folder`` (already resolved); ``nonempty`` refuses one without a file."""
    with parameter(name):
        corpus = load_corpus(folder, infer_headings=infer_headings)
    if nonempty and not len(corpus):
        raise ConfigError(f"{name}: no readable .md/.markdown/.mdx/.txt file in {folder}")
    return corpus


def load_queries_param(path: str, corpus: Corpus, *, name: str = "QUERIES") -> list[Query]:
    """The query file ``path`` (already resolved) checked against ``corpus``; "" gives none."""
    if not path:
        return []
    with parameter(name):
        return load_queries(path, corpus)
