"""emsts feeds LangChain's ExperimentalMarkdownSyntaxTextSplitter a long text in pieces cut
before a heading (the splitter takes each line from the front of a list: quadratic in a
whole file's lines); every piece splits as it would within the whole text."""

from __future__ import annotations

from pathlib import Path

import langchain_text_splitters as splitters
import pytest

from chunkproof.chunking.strategies.baselines import emsts_pieces

FIXTURES = Path(__file__).parent / "fixtures"
TRICKY = """# Title

intro
### deep first
text under h3
## back to two
```bash
# not a heading: inside a fence
~~~
```
after the fence
~~~
## also not a heading
~~~
---
# New top
#### four
body\r\nwith a carriage return
####### seven hashes: not a heading
#no space: not a heading
## last
```
unterminated fence swallows the rest
# still fenced
"""


def split(text: str) -> list[tuple[str, dict]]:
    atoms = splitters.ExperimentalMarkdownSyntaxTextSplitter().split_text(text)
    return [(a.page_content, dict(a.metadata)) for a in atoms]


def fed_in_pieces(text: str, lines: int) -> list[tuple[str, dict]]:
    return [atom for piece in emsts_pieces(text, lines) for atom in split(piece)]


@pytest.mark.parametrize("name", ["fence_hash.md", "stack_truncation.md", "h1_h3_jump.md",
                                  "unterminated_fence.md", "long_fence.md", "hostile.md",
                                  "standard_deep.md", "tricky"])
@pytest.mark.parametrize("lines", [1, 3, 50])
def test_pieces_split_as_the_whole_text_does(name, lines):
    text = TRICKY if name == "tricky" else (FIXTURES / name).read_text()
    assert fed_in_pieces(text, lines) == split(text)


def test_a_long_text_is_cut_into_pieces_of_about_the_given_lines():
    text = "# Guide\n\n" + "".join(f"## Part {n}\n\nline\n\n" for n in range(1000))
    pieces = list(emsts_pieces(text, 400))
    assert len(pieces) == 10
    assert all(p.startswith("# Guide\n## Part ") for p in pieces[1:])  # the heading held
    assert max(len(p.splitlines()) for p in pieces) <= 400 + 2
