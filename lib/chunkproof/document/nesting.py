"""markdown-it's nesting limit, set on purpose: what lies deeper is parsed again as a document
of its own and held in one ``deep`` block, so the structure after it survives.

markdown-it-py stops at ``maxNesting`` open blocks and folds every line left in the enclosing
call into the deepest block, which for a list item is the rest of the document: the headings
after it are gone. Here the block parser instead takes, at the limit, the lines the deepest
block owns (those indented to its content, as markdown-it's own loop decides), parses them as
a document (depth counted from zero again) and puts the result between ``deep_open`` and
``deep_close`` tokens; the parse then goes on after them as usual. Past ``MAX_ROUNDS`` such
regions the lines are read flat (``read_flat``): paragraphs, fences, tables and HTML blocks
side by side, nothing nested, so a chunk boundary can fall between any two of them.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock

MAX_NESTING = 20
"""Blocks open at once before the rest is held in a ``deep`` block (a list and its item are
two: ten nested lists, or twenty nested quotes). markdown-it's CommonMark preset uses 20 as
a guard against runaway recursion; this keeps that value and makes reaching it harmless."""
MAX_ROUNDS = 6
"""Deep regions parsed again inside deep regions (so structure is kept ``MAX_ROUNDS *
MAX_NESTING`` blocks deep); past that a region is read flat (``read_flat``)."""
LIMIT_KEY = "nesting_limit"
"""Parse-environment key: the 0-based lines where a document reached the limit."""
DEPTH_KEY = "container_depth"
"""Parse-environment key: the documentation-dialect containers open where the parse is
(``dialects.MAX_DEPTH``), carried into a deep region."""
_ROUND_KEY = "nesting_round"


class LimitedBlockParser(ParserBlock):
    """markdown-it's block parser, with a deep region parsed on its own at the nesting limit."""

    make_parser: Callable[[], MarkdownIt]
    """The parser a deep region is read with (no front matter: it is not a file's start)."""
    make_flat: Callable[[], MarkdownIt]
    """The parser that reads lines flat: no list, quote, indented code or container rule, so
    nothing it reads holds another block."""

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        if state.level < state.md.options.maxNesting:
            super().tokenize(state, startLine, endLine)
            return
        first = state.skipEmptyLines(startLine)
        if first >= endLine or state.sCount[first] < state.blkIndent:
            super().tokenize(state, startLine, endLine)  # nothing at this depth
            return
        stop = first
        while stop < endLine and (state.isEmpty(stop) or state.sCount[stop] >= state.blkIndent):
            stop += 1
        state.env.setdefault(LIMIT_KEY, []).append(first)
        rounds = state.env.get(_ROUND_KEY, 0) + 1
        opener = state.push("deep_open", "", 1)
        opener.map = [first, stop]
        if rounds > MAX_ROUNDS:
            read_flat(state, first, stop)
        else:
            env = {_ROUND_KEY: rounds, DEPTH_KEY: state.env.get(DEPTH_KEY, 0)}
            read_region(self.make_parser(), state, first, stop, env)
        state.push("deep_close", "", -1)
        state.line = stop


def read_flat(state: StateBlock, first: int, stop: int) -> None:
    """Lines [first, stop) read flat (``LimitedBlockParser.make_flat``), in time linear in
    their length: each paragraph, fence, table, heading or HTML block a block of its own at
    this depth, nothing nested in them."""
    read_region(state.md.block.make_flat(), state, first, stop, {})  # type: ignore[attr-defined]


def read_region(md: MarkdownIt, state: StateBlock, first: int, stop: int, env: dict) -> None:
    """Lines [first, stop) (their container marks and indentation removed) parsed by ``md`` as
    a document with ``env``, its tokens put at this depth and on these lines; the lines where
    it reached the nesting limit and its link definitions join the document's."""
    source = state.getLines(first, stop, state.blkIndent, False)
    tokens = md.parse(source, env)
    for token in tokens:
        token.level += state.level
        if token.map is not None:
            token.map = [token.map[0] + first, token.map[1] + first]
    state.tokens.extend(tokens)
    if env.get(LIMIT_KEY):
        state.env.setdefault(LIMIT_KEY, []).extend(line + first for line in env[LIMIT_KEY])
    references = state.env.setdefault("references", {})
    for label, ref in env.get("references", {}).items():
        references.setdefault(label, ref)


def limit_nesting(md: MarkdownIt, make_parser: Callable[[], MarkdownIt],
                  make_flat: Callable[[], MarkdownIt]) -> MarkdownIt:
    """``md`` with its nesting limit set to MAX_NESTING, deep regions parsed on their own by
    ``make_parser()`` and, past ``MAX_ROUNDS`` of them, read flat by ``make_flat()``."""
    md.options.maxNesting = MAX_NESTING
    md.block.__class__ = LimitedBlockParser
    md.block.make_parser = make_parser  # type: ignore[attr-defined]
    md.block.make_flat = make_flat  # type: ignore[attr-defined]
    return md
