"""The block parser a document is read with: markdown-it-py, or markdown-it-pyrs (extra
``fast``, several times faster) giving the same Blocks; ``CHUNKLAB_PARSER`` picks one, else the
rust parser is used when installed. A document the rust parser cannot read the same way is read
by markdown-it-py and the reason kept (``rust_blocks.Fallback``)."""

from __future__ import annotations

import os

from ..errors import ConfigError, MissingExtraError
from ..util.collector import collector_paused
from . import blocks as python_blocks
from .blocks import Block
from .lines import LineIndex
from .rust_blocks import WINDOW as RUST_WINDOW
from .rust_blocks import Fallback, available, rust_blocks

PARSERS = ("python", "rust")
"""Block parsers: markdown-it-py, or markdown-it-pyrs (extra ``fast``) with the same Blocks."""
PARSER_VARIABLE = "CHUNKLAB_PARSER"


def parser_choice() -> str:
    """The parser ``CHUNKLAB_PARSER`` names (python or rust), else rust when markdown-it-pyrs
    is installed, else python."""
    value = os.environ.get(PARSER_VARIABLE, "").strip().lower()
    if not value:
        return "rust" if available() else "python"
    if value not in PARSERS:
        raise ConfigError(f"{PARSER_VARIABLE} must be one of {', '.join(PARSERS)}; got {value!r}")
    if value == "rust" and not available():
        raise MissingExtraError(f"{PARSER_VARIABLE}=rust", "fast", "markdown-it-pyrs")
    return value


@collector_paused()
def parse_blocks(
    text: str,
    is_markdown: bool = True,
    infer: bool = False,
    *,
    lines: LineIndex | None = None,
    env: dict | None = None,
    parser: str | None = None,
    window: int | None = None,
) -> tuple[Block, ...]:
    """``blocks.parse_blocks`` by the parser chosen (``parser``: python, rust, or None for
    ``parser_choice()``). ``env`` also receives ``env["parser"]``, the parser that made the
    blocks, and ``env["fallback"]``, why the rust parser handed the document to python;
    ``window``: the chars the parser reads at once (default: its own ``WINDOW``)."""
    lines = lines or LineIndex(text)
    env = {} if env is None else env
    if is_markdown and (parser or parser_choice()) == "rust":
        try:
            found = rust_blocks(text, lines, infer, env, window or RUST_WINDOW)
        except Fallback as reason:
            env.clear()
            env["fallback"] = str(reason)
        else:
            env["parser"] = "rust"
            return tuple(found)
    env["parser"] = "python"
    return python_blocks.parse_blocks(text, is_markdown, infer, lines=lines, env=env,
                                      window=window or python_blocks.WINDOW)
