"""The reference pages made from code: the command line's help, the public Python API (its
names, signatures and docstrings) and the result files' schemas.

``python -m chunkproof.docs`` (``make docs``) writes them into ``docs/``; ``--check`` only says
which page differs. ``tests/test_docs.py`` fails when a page is not what this renders."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REGENERATE = "python -m chunkproof.docs  (or: make docs)"
HELP_WIDTH = "100"
TABLES_START = "<!-- result tables: made by chunkproof.evaluation.run.tables.markdown() -->"
TABLES_END = "<!-- end of result tables -->"


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser, then every sub-command's parser, depth first, in the order declared."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _commands(sub)


def _help(parser: argparse.ArgumentParser) -> str:
    """A parser's help as a terminal 100 columns wide, without colour, shows it."""
    fixed = {"COLUMNS": HELP_WIDTH, "NO_COLOR": "1"}
    before = {name: os.environ.get(name) for name in fixed}
    os.environ.update(fixed)
    try:
        return parser.format_help()
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def cli_page() -> str:
    """docs/cli.md: every command's ``--help``, as ``chunkproof`` prints it."""
    from .cli_args import build_parser

    lines = ["# Command line reference", "",
             f"<!-- made from chunkproof.cli_args by: {REGENERATE}; do not edit by hand -->", "",
             "Every command's `--help`. `python -m chunkproof ...` works the same as `chunkproof "
             "...`.", ""]
    for parser in _commands(build_parser()):
        lines += [f"## `{parser.prog}`", "", "```text", _help(parser).rstrip(), "```", ""]
    return "\n".join(lines)


API_STAGES = (("errors", "Errors"), ("document", "Documents"), ("chunking", "Chunking"),
              ("evaluation", "Evaluation"))
"""The public names' stages, in the order the work flows (ARCHITECTURE.md), and the section
each is listed under."""


class _Written(str):
    """An annotation as the source writes it (the modules postpone them): shown bare."""

    def __repr__(self) -> str:
        return str(self)


def signature(obj: Any) -> str:
    """``obj``'s call signature with its annotations as written, "" when it has none."""
    try:
        found = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    bare = [p.replace(annotation=_Written(p.annotation)) if isinstance(p.annotation, str) else p
            for p in found.parameters.values()]
    returns = found.return_annotation
    return str(found.replace(parameters=bare, return_annotation=_Written(returns)
                             if isinstance(returns, str) else returns))


def api_entry(name: str, obj: Any) -> list[str]:
    """One public name: a heading with its signature (a class by its bases), then its
    docstring."""
    if inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        head = f"class {name}" + (f"({bases})" if bases else "")
    else:
        head = f"{name}{signature(obj)}"
    return [f"### `{head}`", "", f"`{obj.__module__}`", "",
            inspect.getdoc(obj) or "(no docstring)", ""]


def api_page() -> str:
    """docs/api.md: every name ``chunkproof`` exports (``__init__.pyi``), by stage, with its
    signature and docstring."""
    import chunkproof

    names = {stage: [] for stage, _ in API_STAGES}  # type: dict[str, list[str]]
    for name in chunkproof.__all__:
        module = getattr(chunkproof, name).__module__.split(".")
        names[module[1] if module[1] in names else "errors"].append(name)
    lines = ["# Python API", "",
             f"<!-- made from chunkproof/__init__.pyi by: {REGENERATE}; do not edit by hand -->",
             "", "Every name `from chunkproof import ...` gives, declared once in "
             "`lib/chunkproof/__init__.pyi`, with its signature and docstring, by stage. "
             "`import chunkproof` loads none of them until it is used. How to use them: "
             "[chunking.md](chunking.md) (chunking a corpus, a chosen config), "
             "[evaluation.md](evaluation.md) (queries, retrievers, a sweep).", ""]
    for stage, title in API_STAGES:
        lines += [f"## {title}", ""]
        for name in sorted(names[stage], key=str.casefold):
            lines += api_entry(name, getattr(chunkproof, name))
    return "\n".join(lines)


def with_result_tables(page: str) -> str:
    """``page`` with the text between the result-table markers made from the schemas."""
    from .evaluation.run.tables import markdown

    head, start, rest = page.partition(TABLES_START)
    _, end, tail = rest.partition(TABLES_END)
    if not (start and end):
        raise ValueError(f"the page has no {TABLES_START} ... {TABLES_END} markers")
    return f"{head}{TABLES_START}\n{markdown()}\n{TABLES_END}{tail}"


def pages(docs: Path) -> dict[Path, str]:
    """Each generated page and the text it should hold."""
    results = docs / "results.md"
    return {docs / "cli.md": cli_page(), docs / "api.md": api_page(),
            results: with_result_tables(results.read_text(encoding="utf-8"))}


def stale(docs: Path) -> list[Path]:
    """The generated pages whose text is not what the code renders."""
    return [path for path, text in pages(docs).items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.docs", description=__doc__)
    parser.add_argument("docs", nargs="?", default="docs", help="the docs folder (default: docs)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each page that differs")
    args = parser.parse_args(argv)
    docs = Path(args.docs)
    if args.check:
        differing = stale(docs)
        for path in differing:
            print(f"{path} is out of date: run {REGENERATE}", file=sys.stderr)
        return 1 if differing else 0
    from .util.atomic import write_text_atomic

    for path, text in pages(docs).items():
        write_text_atomic(path, text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
