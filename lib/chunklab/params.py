"""Notebook parameters: paths found from the repo root, values checked with errors naming them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import ChunklabError, ConfigError

KINDS = ("file", "folder")


def repo_root(start: str | os.PathLike | None = None, *,
              package: bool = True) -> Path | None:
    """The nearest folder at or above ``start`` (default: the working folder) holding
    pyproject.toml, else (with ``package``) the one holding this editable install, else None."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    package_root = Path(__file__).resolve().parents[2]
    found = package and (package_root / "pyproject.toml").is_file()
    return package_root if found else None


def _exists(path: Path, kind: str) -> bool:
    return path.is_dir() if kind == "folder" else path.is_file()


def resolve_path(value: str | os.PathLike, *, name: str, kind: str = "file") -> Path:
    """An existing file or folder: ``value`` as given, else relative to the repo root.

    So ``data/sample`` works from the repo root (papermill) and from ``notebooks/``
    (JupyterLab). A missing one raises ConfigError naming the parameter and where it looked.
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
    looked = " or ".join(str(p) for p in dict.fromkeys(tried))
    raise ConfigError(f"{name}: no {kind} {str(value)!r} (looked for {looked})")


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


def check_int(value: Any, *, name: str, minimum: int = 1) -> int:
    """An integer of at least ``minimum`` (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name}: expected an integer >= {minimum}; got {value!r}")
    return value


def check_list(value: Any, *, name: str, item: type = str, allow_empty: bool = False) -> list:
    """A list (or tuple) whose items are all of type ``item``."""
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, item) and not isinstance(v, bool) for v in value
    ):
        raise ConfigError(f"{name}: expected a list of {item.__name__}; got {value!r}")
    if not value and not allow_empty:
        raise ConfigError(f"{name}: expected at least one value; got an empty list")
    return list(value)


def check_choice(value: Any, *, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ConfigError(f"{name}: expected one of {', '.join(allowed)}; got {value!r}")
    return value


def validate(model: type[BaseModel], **values: Any) -> BaseModel:
    """``model(**values)``; every problem raises one ConfigError naming the upper-cased
    field (the notebook parameter), what was wrong and what was received."""
    try:
        return model(**values)
    except ValidationError as err:
        problems = []
        for item in err.errors():
            cause = (item.get("ctx") or {}).get("error")
            field = str(item["loc"][0]).upper() if item["loc"] else model.__name__
            message = str(cause) if isinstance(cause, ChunklabError) else item["msg"]
            problems.append(f"{field}: {message.removeprefix('Value error, ')} "
                            f"(got {item['input']!r})")
        raise ConfigError("; ".join(problems)) from None


def sweep_params(*, corpus: str, queries: str, strategies: Sequence[str], sizes: Sequence[int],
                 retrievers: Sequence[str], k: int = 5, unit: str = "chars",
                 options: dict | None = None):
    """SweepParams from notebook parameters, paths resolved to absolute ones; ``options``
    are config options fixed for every config of the sweep."""
    from .retrieve import retriever_names
    from .strategies import strategy_names
    from .sweep import SweepParams

    for value in check_list(strategies, name="STRATEGIES"):
        check_choice(value, name="STRATEGIES", allowed=strategy_names())
    for value in check_list(retrievers, name="RETRIEVERS"):
        check_choice(value, name="RETRIEVERS", allowed=retriever_names())
    for size in check_list(sizes, name="SIZES", item=int):
        check_int(size, name="SIZES")
    check_int(k, name="K")
    corpus_dir = resolve_path(corpus, name="CORPUS", kind="folder")
    query_file = resolve_path(queries, name="QUERIES") if queries else ""
    return validate(SweepParams, corpus=str(corpus_dir), queries=str(query_file),
                    strategies=tuple(strategies), sizes=tuple(sizes),
                    retrievers=tuple(retrievers), k=k, unit=unit, options=options or {})


def corpus_param(value: str, *, name: str = "CORPUS"):
    """The corpus folder ``value`` (resolved as ``resolve_path``) loaded."""
    from .corpus import load_corpus

    return load_corpus(resolve_path(value, name=name, kind="folder"))


def queries_param(value: str, corpus, *, name: str = "QUERIES") -> list:
    """The query file ``value`` checked against ``corpus`` ("" gives no queries); a bad
    line raises ConfigError naming the parameter and listing every problem."""
    from .queries import load_queries

    if not value:
        return []
    path = resolve_path(value, name=name)
    try:
        return load_queries(path, corpus)
    except ChunklabError as err:
        raise ConfigError(f"{name}: {err}") from None


def check_metrics(metrics: Any, *, k: int, name: str = "METRICS") -> list[str]:
    """Metric names ``<metric>@k``; the first one must be among the metrics the sweep tests
    pairwise (its significance matrix is drawn)."""
    from .sweep import KEY_METRICS

    values = check_list(metrics, name=name)
    wrong = [m for m in values if not m.endswith(f"@{k}")]
    if wrong:
        raise ConfigError(f"{name}: every metric must be measured at K={k} (name@{k}); "
                          f"got {wrong}")
    tested = [t.format(k=k) for t in KEY_METRICS]
    if values[0] not in tested:
        raise ConfigError(f"{name}: the first metric is tested pairwise and must be one of "
                          f"{', '.join(tested)}; got {values[0]!r}")
    return values
