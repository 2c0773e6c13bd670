"""The heading stack: truncation, dense paths, breadcrumb look-ups, dominant level."""

from __future__ import annotations

from chunkproof.document.blocks import parse_blocks
from chunkproof.document.sections import Breadcrumbs, HeadingStack, breadcrumb_at, dominant_level


def test_stack_truncates_on_depth_change():
    stack = HeadingStack()
    stack.push(1, "Returns Policy")
    stack.push(2, "Returns")
    stack.push(3, "Damaged goods")
    assert stack.path() == ("Returns Policy", "Returns", "Damaged goods")
    stack.push(2, "Refunds")
    assert stack.path() == ("Returns Policy", "Refunds")


def test_skipped_levels_leave_no_hole():
    stack = HeadingStack()
    stack.push(1, "Scope")
    stack.push(3, "Exclusions")
    assert stack.path() == ("Scope", "Exclusions")


def test_breadcrumb_at_offsets():
    text = "# A\n\nintro\n\n## B\n\nbody\n\n```\n# not\n```\n\n# C\n\nend\n"
    blocks = parse_blocks(text)
    crumbs = Breadcrumbs(blocks)
    assert crumbs.at(0) == ("A",)
    assert crumbs.at(text.index("body")) == ("A", "B")
    assert crumbs.at(text.index("# not")) == ("A", "B")
    assert breadcrumb_at(blocks, text.index("end")) == ("C",)


def test_dominant_level_is_the_repeated_shallow_level():
    blocks = parse_blocks("# T\n\n## 1\n\n### 1.1\n\n## 2\n\n### 2.1\n\n### 2.2\n")
    assert dominant_level(blocks) == 2
    assert dominant_level(parse_blocks("# Only\n\n### deep\n")) == 1
    assert dominant_level(parse_blocks("no headings\n")) is None
