"""Terms a document defines: the terms of definition lists (``term`` then ``: definition``)
and the first cell of each table row, found by markdown-it-py (tables and the definition-list
plugin), with the offset of their line."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from mdit_py_plugins.deflist import deflist_plugin

from .lines import LineIndex

DEFINITION_LIST = "definition list"
TABLE = "table"


@dataclass(frozen=True, slots=True)
class Term:
    """A defined term as written (inline Markdown kept), where its line starts, and what
    defines it: a definition list or a table row."""

    raw: str
    offset: int
    where: str


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(deflist_plugin)
    md.disable("inline")  # the raw term is read; its inline Markdown is parsed where it is used
    return md


def defined_terms(text: str, lines: LineIndex | None = None) -> list[Term]:
    """Every definition-list term and first body cell of a table row in ``text``, in order
    (text inside fences and code blocks is code, never a term)."""
    lines = lines or LineIndex(text)
    tokens = _markdown().parse(text)
    found: list[Term] = []
    row_line: int | None = None
    first_cell = False
    in_body = False
    for i, tok in enumerate(tokens):
        if tok.type == "tbody_open":
            in_body = True
        elif tok.type == "tbody_close":
            in_body = False
        elif tok.type == "tr_open" and in_body and tok.map:
            row_line, first_cell = tok.map[0], True
        elif tok.type == "td_open" and first_cell and row_line is not None:
            found.append(Term(tokens[i + 1].content.strip(), lines.offset(row_line), TABLE))
            first_cell = False
        elif tok.type == "dt_open" and tok.map:
            found.append(Term(tokens[i + 1].content.strip(), lines.offset(tok.map[0]),
                              DEFINITION_LIST))
    return [t for t in found if t.raw]
