"""A document's front matter read as a YAML mapping, or a warning saying why it is none."""

from __future__ import annotations

import yaml

from ..errors import FrontMatterTooDeepError
from .blocks import Block
from .doc_warnings import DocWarning, front_matter_warning

FRONT_MATTER_DEPTH = 100
"""Deepest nesting of mappings and lists kept in front matter; a file nested deeper is
skipped (what was read stays walkable by anything that recurses into it: copy, pickle)."""
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (its wheels are), else PyYAML's own:
the same safe tags and values, several times faster."""


def read_front_matter(blocks: tuple[Block, ...], text: str) -> tuple[dict, DocWarning | None]:
    """The front matter's mapping (empty when there is none) and, when it is there but no
    YAML mapping, the warning saying so."""
    fm = next((b for b in blocks if b.kind == "front_matter"), None)
    if fm is None:
        return {}, None
    source = "\n".join(text[fm.start : fm.end].splitlines()[1:-1])
    try:
        data = yaml.load(source, Loader=_YAML_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or type(err).__name__
        line = mark.line + 2 if mark else 1  # its first line follows the opening ---
        return {}, front_matter_warning(f"is not valid YAML ({problem})", line)
    # Deeper than the limit takes a char per level, or an alias (a node met again)
    deep_enough = len(source) > FRONT_MATTER_DEPTH or "*" in source
    if deep_enough and _depth(data) > FRONT_MATTER_DEPTH:
        raise FrontMatterTooDeepError(f"front matter nested more than {FRONT_MATTER_DEPTH} "
                                      "levels deep")
    if data is None or isinstance(data, dict):
        return data or {}, None
    return {}, front_matter_warning(f"is not a mapping (a {type(data).__name__})", 1)


def _depth(data: object) -> int:
    """Levels of mappings and lists in ``data`` (0 for a scalar), walked without recursion;
    a node reached again through a YAML alias is walked once."""
    deepest, pending, seen = 0, [(data, 1)], set()
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list) and id(value) not in seen:
            seen.add(id(value))
            deepest = max(deepest, depth)
            children = value.values() if isinstance(value, dict) else value
            pending.extend((child, depth + 1) for child in children)
    return deepest
