"""The reference pages made from code: the command line's help, the public Python API (its
names, signatures and docstrings), the result files' schemas, and the study's pages made
from its shipped results (docs/benchmarks.md whole, the validation table of
docs/statistics.md, the README's one-sentence finding).

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
VALIDATION = ("<!-- validation: made from the shipped study by chunkproof.docs -->",
              "<!-- end of validation -->")
FINDING = ("<!-- finding: made from the shipped study by chunkproof.docs -->",
           "<!-- end of finding -->")
KINDS = ("<!-- kinds: made from the shipped study by chunkproof.docs -->",
         "<!-- end of kinds -->")
FOREST_DIR = "img/study"


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


def between(page: str, markers: tuple[str, str], text: str) -> str:
    """``page`` with ``text`` between the two ``markers``."""
    first, last = markers
    head, start, rest = page.partition(first)
    _, end, tail = rest.partition(last)
    if not (start and end):
        raise ValueError(f"the page has no {first} ... {last} markers")
    return f"{head}{first}\n{text}\n{last}{tail}"


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

    return between(page, (TABLES_START, TABLES_END), markdown())


def pages(docs: Path) -> dict[Path, str]:
    """Each generated page and the text it should hold."""
    from .evaluation.study import pages as study
    from .evaluation.study.results import shipped

    results, statistics, readme = docs / "results.md", docs / "statistics.md", \
        docs.parent / "README.md"
    found = shipped()
    made = {docs / "cli.md": cli_page(), docs / "api.md": api_page(),
            results: with_result_tables(results.read_text(encoding="utf-8")),
            docs / "benchmarks.md": benchmarks_page(found)}
    if found is not None:
        parts = {statistics: (VALIDATION, study.validation_markdown(found)),
                 docs / "queries.md": (KINDS, study.kinds_markdown(found)),
                 readme: (FINDING, study.finding(found))}
        for path, (markers, text) in parts.items():
            if path.is_file():  # a docs folder without the page holds none of it
                made[path] = between(path.read_text(encoding="utf-8"), markers, text)
    return made


def forest_files(docs: Path) -> dict[Path, str]:
    """The forest plots docs/benchmarks.md shows, one per budget under BM25 (SVG)."""
    from .evaluation.study.results import shipped
    from .study_runner import forest_svgs

    found = shipped()
    if found is None:
        return {}
    return {docs / FOREST_DIR / name: svg for name, svg in forest_svgs(found, ("bm25",)).items()}


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

    for path, text in {**pages(docs), **forest_files(docs)}.items():
        write_text_atomic(path, text)
        print(f"wrote {path}")
    return 0


BENCHMARKS = """# Benchmarks: the study

<!-- made from the shipped study ({source}) by: {regenerate}; do not edit by hand -->

{finding}

One site's written questions are too few to tell most chunking configs apart; pooled over many
sites they are not. The study runs the same grid on every site of `data/study/`, each with the
questions its users would ask, and pools each site's paired effects by random effects. Its
results ship inside chunkproof (`evaluation/study/study.json`): the verdict reads them as its
prior, and its simulations say how sure a verdict is.

## The sites

{sites}

{questions} questions in all over {pages} pages, written for the study as each site's users would
ask them (data/study/README.md says how), each answered by an exact span of its page. Grid:
{grid}. Study date {date}; data at commit `{commit}`.

## Method

For each config and each site, the effect of the config against a reference is the mean
per-question difference in the metric (each question scores 1 when the text that answers it
lies in what the retriever hands over within the budget). Its standard error is cluster-robust:
questions of one page are a cluster, since a page a config splits well answers all of them. The
sites' effects are pooled by DerSimonian-Laird random effects (tau² clipped at 0), with a
normal 95% interval; I² says how much of the sites' spread is beyond sampling, and the
prediction interval (t with k - 2 degrees of freedom) says where the effect on a site the
study has not seen should lie. A config is set below the best when its pooled difference from
the best excludes 0 and is at least the tie margin ({margin}).

## Pooled results, BM25

{budgets}

## Heterogeneity

{heterogeneity}

## How sure a verdict is

The verdict's rule (docs/choosing.md) is applied to each study site in turn with the prior
built from the other sites, on 10, 20, 30 and 40 of its written questions drawn at random (or
on none: mined questions only), and its pick is judged on all of that site's questions: inside
the configs they cannot separate from their best, and how far below the best (the shortfall).
The former rule (a tie margin on an uncorrected test, then the smallest top-k bundle) is
measured the same way. A report's page quotes the row for its own number of questions.

{calibration}

## What the study can and cannot say

It says which configs answer the most written questions on documentation sites like these, at
each reader budget, and how much that varies from site to site. It cannot say what a site of
another kind (API references generated from code, papers, contracts) needs, what a dense
retriever or a model you deploy would rank, or anything about configs outside its grid: the
verdict uses it only among configs your own questions cannot separate, and says when a config
of yours is one the study never ran.

## Reproduce

```bash
make study        # chunkproof study data/study --out results/study, then ships and documents it
```
"""


def benchmarks_page(results) -> str:
    """docs/benchmarks.md from the study's results (a page saying how to make them when none
    is shipped)."""
    from .evaluation.study import pages as study

    if results is None:
        return ("# Benchmarks: the study\n\nNo study is shipped with this copy of chunkproof: "
                "`make study` makes one from `data/study/`.\n")
    meta = results.meta
    budgets = []
    for metric in sorted({r["metric"] for r in results.table("pooled")},
                         key=lambda m: int(m.rsplit("b", 1)[-1])):
        budget = metric.rsplit("b", 1)[-1]
        budgets.append(f"### Within {int(budget):,} tokens ({metric})\n\n"
                       f"![forest plot, {metric}]({FOREST_DIR}/forest_bm25_"
                       f"{metric.replace('@', '_')}.svg)\n\n"
                       + study.pooled_markdown(results, "bm25", metric))
    spread = study.heterogeneity(results, *study.PRIMARY)
    heterogeneity = ("No result." if not spread else
                     f"At {study.PRIMARY[1]}, over the {spread['configs']} configs' effects "
                     f"against {results.prior.reference}: median I² {spread['i2_median']:.0%}, "
                     f"largest {spread['i2_max']:.0%}; tau² is 0 for {spread['zero']} of them "
                     f"and tau at most {spread['tau_max']:.3f}.")
    grid = meta.get("grid", {})
    return BENCHMARKS.format(
        source="evaluation/study/study.json", regenerate="make study", finding=study.finding(
            results), sites=study.markdown_table(study.sites_table(results)),
        questions=meta.get("questions"), pages=meta.get("pages"),
        grid=(f"strategies {', '.join(grid.get('strategies', []))}; sizes "
              f"{', '.join(map(str, grid.get('sizes', [])))} chars; retrievers "
              f"{', '.join(grid.get('retrievers', []))}; budgets "
              f"{', '.join(map(str, grid.get('budgets', [])))} tokens"),
        date=meta.get("date", ""), commit=str(meta.get("data_commit", ""))[:12] or "unknown",
        margin=meta.get("tie_margin"), budgets="\n\n".join(budgets),
        heterogeneity=heterogeneity, calibration=study.calibration_markdown(results))


if __name__ == "__main__":
    sys.exit(main())
