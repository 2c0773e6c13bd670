"""Heading anchors as a site generator makes them: one slug function per generator, its suffix
for a repeated heading, and the explicit ``{#id}`` it honours (docs/anchors.md)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .blocks import Block
from .headings import MARKDOWN
from .inline import attribute_block

_GITHUB_DROPPED = frozenset(("No", "Pe", "Pf", "Pi", "Ps", "Po", "Pd", "Sm", "Sc", "Sk", "So",
                             "Cc", "Co", "Cf", "Cn", "Zs", "Zl", "Zp"))
"""Unicode general categories github-slugger removes (a plain space and hyphen excepted):
other numbers, punctuation but the connector (``_``), symbols, controls, format and
unassigned characters, separators."""
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
                       (0x1F170, 0x1F189))
"""Symbols Unicode counts as alphabetic (circled and squared Latin letters), which
github-slugger keeps."""


def _github_keeps(char: str) -> bool:
    if char in " -":
        return True
    if unicodedata.category(char) not in _GITHUB_DROPPED:
        return True
    point = ord(char)
    return any(lo <= point <= hi for lo, hi in _ALPHABETIC_SYMBOLS)


_GITHUB_ASCII_DROPPED = {point: None for point in range(128) if not _github_keeps(chr(point))}
"""``str.translate``'s table of the ASCII chars ``_github_keeps`` drops: most headings are
ASCII, and are slugged without a look-up per char."""


@lru_cache(maxsize=8192)
def github_slug(text: str) -> str:
    """GitHub's heading id (github-slugger): lowercased, punctuation and symbols dropped, each
    space a hyphen (``A - B`` -> ``a---b``); letters and digits of any script kept."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered.translate(_GITHUB_ASCII_DROPPED).replace(" ", "-")
    return "".join(c for c in lowered if _github_keeps(c)).replace(" ", "-")


_NOT_WORD = re.compile(r"[^\w\s-]")
_SEPARATORS = re.compile(r"[-\s]+")


@lru_cache(maxsize=8192)
def mkdocs_slug(text: str) -> str:
    """Python-Markdown's toc ``slugify`` (MkDocs' default): NFKD reduced to ASCII, what is not
    a word char, space or hyphen dropped, lowercased, runs of hyphens and spaces one ``-``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _SEPARATORS.sub("-", _NOT_WORD.sub("", ascii_text).strip().lower())


_CONTROL = re.compile(r"[\u0000-\u001f]")
_COMBINING = re.compile(r"[\u0300-\u036f]")
_SPECIAL = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'“”‘’<>,.?/]+")


@lru_cache(maxsize=8192)
def vitepress_slug(text: str) -> str:
    """VitePress' slugify (``@mdit-vue/shared``): NFKD without combining accents or controls,
    each run of spaces and ASCII punctuation one ``-`` (none at the ends), ``_`` before a
    leading digit, lowercased."""
    value = _CONTROL.sub("", _COMBINING.sub("", unicodedata.normalize("NFKD", text)))
    value = _SPECIAL.sub("-", value).strip("-")
    if value[:1].isdigit() and value[:1].isascii():
        value = "_" + value
    return value.lower()


def github_unique(slug: str, seen: dict[str, int]) -> str:
    """github-slugger's repeat rule: the n-th repeat of a slug is ``slug-n``, counted per slug
    (a suffixed slug already taken is counted on)."""
    found = slug
    while found in seen:
        seen[slug] += 1
        found = f"{slug}-{seen[slug]}"
    seen[found] = 0
    return found


def mkdocs_unique(slug: str, seen: dict[str, int]) -> str:
    """Python-Markdown's ``unique``: an empty or taken id gets ``_1``, an id ending in ``_n``
    counts on to ``_n+1``."""
    found = slug
    while found in seen or not found:
        stem, mark, number = found.rpartition("_")
        counted = mark and number.isdigit() and number.isascii()
        found = f"{stem}_{int(number) + 1}" if counted else f"{found}_1"
    seen[found] = 0
    return found


def vitepress_unique(slug: str, seen: dict[str, int]) -> str:
    """markdown-it-anchor's ``uniqueSlug`` (VitePress): ``slug-1``, ``slug-2``, ... until free."""
    found, n = slug, 1
    while found in seen:
        found, n = f"{slug}-{n}", n + 1
    seen[found] = 0
    return found


@dataclass(frozen=True)
class SlugRule:
    """How one generator names a heading."""

    slug: Callable[[str], str]
    unique: Callable[[str, dict[str, int]], str]
    attributes: str
    """Which trailing attribute block it reads: ``none``, ``id`` (``{#id}`` alone) or ``any``
    (``{#id .class key=value}``, also ``{: #id}``; an attribute block is not heading text)."""
    counts_explicit: bool
    """Whether an explicit id takes its name from the generated ones."""
    reserves_explicit: bool = False
    """Whether explicit ids are taken before any is generated (else in document order)."""


SLUG_RULES: dict[str, SlugRule] = {
    "github": SlugRule(github_slug, github_unique, "none", counts_explicit=False),
    "mkdocs": SlugRule(mkdocs_slug, mkdocs_unique, "any", counts_explicit=True,
                       reserves_explicit=True),
    "vitepress": SlugRule(vitepress_slug, vitepress_unique, "any", counts_explicit=True),
    "docusaurus": SlugRule(github_slug, github_unique, "id", counts_explicit=False),
}
"""The slug rules by name (``ChunkerConfig.slug``)."""


def explicit_id(raw: str, attributes: str = "any") -> str | None:
    """The id an attribute block ending ``raw`` (a heading's Markdown) sets, if any
    (``attributes="id"``: only a block that is ``{#id}`` alone)."""
    found = attribute_block(raw)
    if found is None or "id" not in found[1]:
        return None
    if attributes == "id" and (len(found[1]) != 1 or not raw[found[0]:].startswith("{#")):
        return None
    return found[1]["id"] or None


def linked_headings(blocks: Sequence[Block]) -> Iterator[Block]:
    """The headings a generator gives an id, at any depth, in document order: Markdown
    headings (an HTML ``<h2>`` is passed through untouched, an inferred heading is a paragraph
    on the page)."""
    for block in blocks:
        if block.kind == "heading" and block.provenance in MARKDOWN:
            yield block
        elif block.children:
            yield from linked_headings(block.children)


def _text_and_id(block: Block, rule: SlugRule) -> tuple[str, str | None]:
    """The heading text the rule slugs, and its explicit id (None when it has none). A
    heading's title leaves out the attribute block ending it (``inline.heading_title``); a
    generator that does not read that block shows it, and slugs it with the title."""
    raw = block.raw_title
    found = attribute_block(raw)
    if found is None:
        return block.title, None
    ident = None if rule.attributes == "none" else explicit_id(raw, rule.attributes)
    if rule.attributes == "any" or ident is not None:
        return block.title, ident
    at = found[0]
    return block.title + raw[len(raw[:at].rstrip()):], None


def heading_anchors(blocks: Sequence[Block], rule: str) -> dict[int, str]:
    """Heading start offset -> its anchor under the slug ``rule``, for every heading a
    generator gives an id (``linked_headings``)."""
    slug_rule = SLUG_RULES[rule]
    read = [(block, *_text_and_id(block, slug_rule)) for block in linked_headings(blocks)]
    seen: dict[str, int] = {}
    if slug_rule.reserves_explicit:
        seen.update((ident, 0) for _, _, ident in read if ident)
    found: dict[int, str] = {}
    for block, text, ident in read:
        if ident is None:
            found[block.start] = slug_rule.unique(slug_rule.slug(text), seen)
        elif slug_rule.counts_explicit and not slug_rule.reserves_explicit:
            found[block.start] = slug_rule.unique(ident, seen)
        else:
            found[block.start] = ident
    return found
