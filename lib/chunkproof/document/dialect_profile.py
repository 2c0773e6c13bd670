"""What a corpus writes in documentation dialects: its containers, components, metadata and
targets counted per construct, and the lines that look like markup no rule reads (template
shortcodes, Liquid or Jinja tags, reST directives, directives of unknown names)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .blocks import Block
from .dialects import ADMONITIONS, MYST_DIRECTIVES

_COMPONENT = re.compile(r"<([A-Z][\w.]*)")
COLON_NAMES = ADMONITIONS | frozenset({"code-group", "details", "raw", "v-pre"})
"""``:::`` container names read as known (VitePress, Docusaurus)."""
UNKNOWN_MARKUP = {
    "template shortcode": re.compile(r"\{\{[<%].*?[>%]\}\}"),
    "template tag": re.compile(r"\{%-?\s*\w+.*?%\}|\{\{-?\s*[\w.]+(\(\))?\s*(\|[^{}]*)?\}\}"),
    "reST directive": re.compile(r"^\s*\.\. [\w:-]+::"),
    "MkDocs snippet": re.compile(r"^\s*-{2,}8<-{2,}"),
    "mkdocstrings identifier": re.compile(r"^:::[ \t]+[\w.]+\.\w+[ \t]*$"),
}
"""Syntax read as plain text though a site generator reads it as markup."""
_READ_AS_TEXT = frozenset({"paragraph", "text", "html", "heading"})


@dataclass(frozen=True, slots=True)
class Construct:
    """One construct found at one place: a dialect's container or leaf, or unknown markup."""

    doc_id: str
    dialect: str
    construct: str
    line: int
    """1-based line of the construct's first line."""
    text: str
    """That line, stripped (the example a report shows)."""
    known: bool = True


def _walk(blocks: Iterable[Block]) -> Iterator[Block]:
    for block in blocks:
        yield block
        yield from _walk(block.children)


def _known(block: Block) -> bool:
    name = block.title.split(" ", 1)[0].strip("{}").lower() if block.title else ""
    if block.dialect == "myst":
        return name in MYST_DIRECTIVES
    if block.dialect == "colon":
        return re.match(r"[\w-]*", name).group() in COLON_NAMES  # type: ignore[union-attr]
    return True


def _construct(block: Block, line: str) -> tuple[str, str] | None:
    """(dialect, construct) of a block a dialect made (a component kept whole is named with
    its tag), else None."""
    if block.kind == "metadata":
        if line.startswith("<"):
            return "vue", f"<{block.title}> block"
        return ("mdx", "import/export") if line.startswith(("import", "export")) else (
            "myst", "directive options")
    if block.kind == "target":
        return "myst", "target"
    if block.kind == "jsx":
        tag = _COMPONENT.match(line)
        return "mdx", f"{tag.group(1) if tag else 'component'} (kept whole)"
    if block.kind == "container":
        name = block.title.split(" ", 1)[0].split("[", 1)[0].strip("{}\"") or block.dialect
        named = {"mkdocs": "tab" if block.title.startswith('"') else name.lower(),
                 "github": "alert", "vitepress": "code-group tab"}
        return block.dialect, named.get(block.dialect, name.lower() if block.dialect != "mdx"
                                        else name)
    return None


def constructs(doc) -> list[Construct]:
    """Every dialect construct of ``doc`` and every line of unknown markup, in order."""
    found: list[Construct] = []
    lines, text = doc.lines, doc.text
    for block in _walk(doc.blocks):
        first = lines.line_of(block.start)
        line = text[block.start : text.find("\n", block.start) % (len(text) + 1)].strip()
        if (kind := _construct(block, line)) is not None:
            found.append(Construct(doc.id, *kind, first, line, _known(block)))
        if block.kind in _READ_AS_TEXT and not block.children:
            found += _unknown(doc, block)
    return found


def _unknown(doc, block: Block) -> Iterator[Construct]:
    """Lines of ``block`` that hold unknown markup."""
    start = block.start
    for number, line in enumerate(doc.text[block.start : block.end].splitlines()):
        for name, pattern in UNKNOWN_MARKUP.items():
            if pattern.search(line):
                yield Construct(doc.id, "unknown", name, doc.lines.line_of(start) + number,
                                line.strip(), known=False)
                break


def construct_counts(found: Iterable[Construct]) -> list[dict]:
    """One row per (dialect, construct, known): how many, in how many documents, and the first
    example (document, line, text)."""
    counts: Counter[tuple[str, str, bool]] = Counter()
    documents: dict[tuple[str, str, bool], set[str]] = {}
    first: dict[tuple[str, str, bool], Construct] = {}
    for item in found:
        key = (item.dialect, item.construct, item.known)
        counts[key] += 1
        documents.setdefault(key, set()).add(item.doc_id)
        first.setdefault(key, item)
    return [{"dialect": key[0], "construct": key[1], "known": key[2], "count": n,
             "documents": len(documents[key]), "example_doc": first[key].doc_id,
             "example_line": first[key].line, "example": first[key].text[:120]}
            for key, n in counts.most_common()]


SITE_RULES = {
    "vitepress": ("VitePress", lambda row: row["dialect"] in ("vue", "vitepress")
                  or (row["dialect"], row["construct"]) == ("colon", "code-group")),
    "mkdocs": ("MkDocs", lambda row: row["dialect"] == "mkdocs"),
    "docusaurus": ("Docusaurus", lambda row: row["dialect"] == "mdx"),
}
"""The slug rules a corpus' constructs point to: the site generator that reads them, and
which rows of ``construct_counts`` are its own (VitePress' Vue blocks and code groups,
mkdocs-material's admonitions, tabs and blocks, MDX's components and imports)."""


def site_rule(counts: Iterable[dict]) -> tuple[str, str] | None:
    """(slug rule, why) of the site generator most of a corpus' own constructs belong to
    (``SITE_RULES``, rows of ``construct_counts``), or None when none of them is found."""
    rows = list(counts)
    found = {rule: sum(row["count"] for row in rows if own(row))
             for rule, (_, own) in SITE_RULES.items()}
    rule = max(found, key=lambda name: found[name])
    if not found[rule]:
        return None
    kinds = sorted({row["construct"] for row in rows if SITE_RULES[rule][1](row)})
    return rule, f"{found[rule]} {SITE_RULES[rule][0]} constructs ({', '.join(kinds)})"


def slug_rule_note(counts: Iterable[dict], slug_rule: str) -> str:
    """A line saying which slug rule the corpus' site generator makes its anchors by, when it
    is not ``slug_rule``; "" otherwise."""
    found = site_rule(counts)
    if found is None or found[0] == slug_rule:
        return ""
    rule, why = found
    return (f"the corpus is written for {SITE_RULES[rule][0]} ({why}): its heading anchors "
            f"are made as --slug-rule {rule} makes them (SLUG_RULE in the notebooks); this "
            f"run uses {slug_rule}")
