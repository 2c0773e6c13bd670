"""The reference pages made from code (docs/cli.md, docs/results.md's tables) are what the code
renders today, and every page the documentation links to exists or is announced."""

from __future__ import annotations

import argparse
import re

import pytest
from markdown_it import MarkdownIt

from chunkproof import docs
from chunkproof.cli_args import build_parser
from conftest import ROOT

DOCS = ROOT / "docs"
ANNOUNCED = {"statistics.md", "queries.md", "dialects.md", "troubleshooting.md"}
"""Pages linked before they are written."""


GENERATED = ["cli.md", "api.md", "results.md", "benchmarks.md", "statistics.md", "../README.md"]
"""Pages made whole or in part from code (statistics.md and the README only with a shipped
study: their generated parts are the study's)."""


@pytest.mark.parametrize("page", GENERATED)
def test_a_generated_page_is_what_the_code_renders(page):
    made = {path.resolve(): text for path, text in docs.pages(DOCS).items()}
    path = (DOCS / page).resolve()
    if path not in made:
        pytest.skip(f"{page} holds nothing generated without a shipped study")
    assert path.read_text(encoding="utf-8") == made[path], \
        f"{path.name} is out of date: run {docs.REGENERATE}"


def command_names(parser, name: str) -> set[str]:
    """``name`` and every (sub)command below it, as typed."""
    found = {name}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                found |= command_names(subparser, f"{name} {sub}")
    return found


def test_the_cli_page_holds_every_command_s_help():
    page = docs.cli_page()
    parser = build_parser()
    assert command_names(parser, "chunkproof") == set(re.findall(r"^## `(.+)`$", page, re.M))
    assert docs._help(parser).strip() in page


def test_the_api_page_lists_every_public_name_with_its_docstring():
    import inspect

    import chunkproof

    page = docs.api_page()
    listed = re.findall(r"^### `(?:class )?(\w+)", page, re.M)
    assert sorted(listed) == sorted(chunkproof.__all__)
    for name in chunkproof.__all__:
        assert inspect.getdoc(getattr(chunkproof, name)).splitlines()[0] in page, name


def test_the_check_names_a_stale_page_and_the_command_that_remakes_it(tmp_path, capsys):
    (tmp_path / "results.md").write_text(f"x\n{docs.TABLES_START}\nSTALE TEXT\n{docs.TABLES_END}\n")
    assert docs.main([str(tmp_path), "--check"]) == 1
    assert docs.REGENERATE in capsys.readouterr().err
    assert docs.main([str(tmp_path)]) == 0 and docs.main([str(tmp_path), "--check"]) == 0
    assert "STALE TEXT" not in (tmp_path / "results.md").read_text()


def test_a_page_without_the_table_markers_is_refused(tmp_path):
    (tmp_path / "results.md").write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        docs.pages(tmp_path)


def local_links(text: str) -> list[str]:
    """The targets of a page's links and images (markdown-it reads them: code spans are not
    links), without their #fragment, that are not URLs."""
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        for child in token.children or []:
            target = child.attrGet("href") or child.attrGet("src")
            if isinstance(target, str) and "://" not in target and not target.startswith("#"):
                found.append(target.partition("#")[0])
    return found


def test_links_are_read_as_markdown_reads_them():
    page = "[a](x.md#top) `[b](url)` ![c](img/c.png) [d](https://e.org) [f](#here)\n"
    assert local_links(page) == ["x.md", "img/c.png"]


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p.name}" for p in DOCS.glob("*.md")),
                                  "ARCHITECTURE.md"])
def test_every_local_link_leads_to_a_file(page):
    path = ROOT / page
    for target in local_links(path.read_text(encoding="utf-8")):
        found = (path.parent / target).resolve()
        assert found.exists() or (found.parent == DOCS and found.name in ANNOUNCED), \
            f"{page} links to {target}, which does not exist"


def table_names(text: str, heading: str) -> set[str]:
    """The `names` in the first column of the tables under ``heading`` (up to the next one)."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)`", section, re.M))


def test_the_readme_s_strategy_table_names_every_registered_strategy():
    from chunkproof.chunking.registry import REGISTRY

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table_names(readme, "## Strategies") == set(REGISTRY)


def test_the_options_table_names_every_config_field():
    from chunkproof.chunking.config import ChunkerConfig

    page = (DOCS / "strategies.md").read_text(encoding="utf-8")
    section = page.split("## Options", 1)[1].split("\n## ", 1)[0]
    for name in set(ChunkerConfig.model_fields) - {"strategy"}:
        assert f"`{name}`" in section, f"docs/strategies.md's options do not name {name}"
