"""The document stage's C code (``document/_native.c``) gives what its Python twin gives: the
same line starts of any text, and the same Blocks folded from markdown-it-pyrs's nodes on every
fixture, the sample corpus and generated Markdown, whole and window by window."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunklab.document import lines as lines_module
from chunklab.document.blocks import Block, _gaps, _with_gaps
from chunklab.document.corpus import make_document
from chunklab.document.lines import NATIVE_VARIABLE, LineIndex, native_choice
from chunklab.document.parsers import parse_blocks
from chunklab.document.sections import Breadcrumbs
from chunklab.errors import ConfigError
from conftest import FIXTURES, SAMPLE
from generated import line_mixes, markdown_docs

native = lines_module.native
pytestmark = pytest.mark.needs("fast")  # its parse helper reads with the rust parser
needs_native = pytest.mark.skipif(native is None, reason="the install built no C code "
                                  "(no C compiler): the Python code is the only one")
MARKDOWN = sorted(p for root in (FIXTURES, SAMPLE) for p in root.rglob("*.md"))


def with_code(monkeypatch, choice: str, func, *args, **kwargs):
    """``func(*args, **kwargs)`` with ``CHUNKLAB_NATIVE=choice``."""
    monkeypatch.setenv(NATIVE_VARIABLE, choice)
    try:
        return func(*args, **kwargs)
    finally:
        monkeypatch.delenv(NATIVE_VARIABLE)


def line_starts(text: str) -> list[int]:
    return list(LineIndex(text).starts)


@needs_native
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab \n\t\u00e9\u6570\U0001f600\u2028\x85"),
                    max_size=200))
@example(text="")
@example(text="\n")
@example(text="no newline")
@example(text="\n\n\u6570\n")
def test_c_line_starts_equal_pythons(text):
    mp = pytest.MonkeyPatch()
    try:
        assert with_code(mp, "c", line_starts, text) == with_code(mp, "python", line_starts,
                                                                  text)
    finally:
        mp.undo()


@needs_native
def test_c_line_starts_of_a_long_text_fill_8_byte_offsets_too():
    text = "line\n" * 1000
    starts = native.line_ends(text, 8)
    assert len(starts) == 8 * 1000
    assert int.from_bytes(starts[-8:], "little") == len(text)
    with pytest.raises(ValueError, match="itemsize must be 4 or 8"):
        native.line_ends(text, 2)


def folded(text: str, window: int | None = None, infer: bool = False) -> dict:
    env: dict = {}
    blocks = parse_blocks(text, True, infer, env=env, parser="rust", window=window)
    return {"blocks": blocks, "parser": env["parser"], "fallback": env.get("fallback", ""),
            "references": env.get("references", {})}


def both_folds(monkeypatch, text: str, **kwargs) -> tuple[dict, dict]:
    return (with_code(monkeypatch, "c", folded, text, **kwargs),
            with_code(monkeypatch, "python", folded, text, **kwargs))


def same_blocks(a, b) -> None:
    assert a == b
    for x, y in zip(a, b, strict=True):  # every field, and the children's, as Block's eq does
        assert x.as_dict() == y.as_dict()


@needs_native
@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
@pytest.mark.parametrize("infer", [False, True])
def test_c_fold_equals_python_fold_on_every_fixture(path, infer, monkeypatch):
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip(f"{path.name} is not UTF-8 text (a loader fixture)")
    for window in (None, 300):
        c, python = both_folds(monkeypatch, text, window=window, infer=infer)
        assert (c["parser"], c["fallback"]) == (python["parser"], python["fallback"])
        same_blocks(c["blocks"], python["blocks"])
        assert c["references"] == python["references"]


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=markdown_docs(nested=False), infer=st.booleans(), window=st.sampled_from([None, 40]))
@example(text="\n\n```py\n\n```\n\n# |\n---\n\n# alpha\n\n", infer=False, window=None)
@example(text="- a\n  - b\n    > c\n    > ```\n    > x\n    > ```\n", infer=False, window=None)
@example(text="**Bold line**\n\ntext \u00e9\r\n\r\n<h2>T</h2>\n", infer=True, window=None)
@example(text="# a  b\n\n# a\u00a0b\n\n## a\tb #\n\n# T&amp;C\n\n#\n", infer=False, window=None)
@example(text="```  py title \nx\n```\n\n~~~\ny\n~~~\n", infer=False, window=None)
@example(text="``` a|b\nx\n```\n", infer=False, window=None)
@example(text="- x\n\n  1. |\n  ---\n\n> a\n-\n", infer=False, window=None)
@example(text="> > x\n>\n> y\n> 10. a\n", infer=False, window=None)
def test_c_fold_equals_python_fold_on_generated_markdown(text, infer, window, monkeypatch):
    c, python = both_folds(monkeypatch, text, window=window, infer=infer)
    assert (c["parser"], c["fallback"]) == (python["parser"], python["fallback"])
    same_blocks(c["blocks"], python["blocks"])


@needs_native
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=line_mixes(), infer=st.booleans())
@example(text="- a\n\t- b\n", infer=False)  # a tab the C prefilter sends to the check
@example(text="a\n[r]: /x\n:-:\n", infer=True)  # a paragraph the C prefilter sends too
@example(text="> >\n>\n", infer=False)
def test_c_fold_equals_python_fold_on_mixed_lines(text, infer, monkeypatch):
    c, python = both_folds(monkeypatch, text, infer=infer)
    assert (c["parser"], c["fallback"]) == (python["parser"], python["fallback"])
    same_blocks(c["blocks"], python["blocks"])


@needs_native
@pytest.mark.parametrize("code", ["c", "python"])
def test_fence_titles_and_plain_heading_titles_are_read_in_c_as_in_python(code, monkeypatch):
    text = ("# Plain title\n\n#  Two  spaces\n\n```  py x \ncode\n```\n\n``` a|b\nx\n```\n\n"
            "## In | out\n")
    found = with_code(monkeypatch, code, folded, text)
    assert (found["parser"], found["fallback"]) == ("rust", "")
    assert [(b.kind, b.title) for b in found["blocks"]] == [
        ("heading", "Plain title"), ("heading", "Two spaces"), ("fence", "py x"),
        ("fence", "a|b"), ("heading", "In | out")]
    # over a line that may be a delimiter row, markdown-it-py reads a table
    for opening in ("``` a|b", "## In | out", "1. a | b", "> a | b", "[a]: /x 'a|b'"):
        table = with_code(monkeypatch, code, folded, f"{opening}\n--|--\n")
        assert (table["parser"], table["fallback"]) == ("python", "table"), opening


@needs_native
def test_c_blocks_are_records_like_any_other(monkeypatch):
    doc = with_code(monkeypatch, "c", make_document, "a.md",
                    "# T\n\n- one\n- two\n\n  text\n\n---\n\n    code\n")
    blocks = {b.kind: b for b in doc.blocks}
    assert set(blocks) == {"heading", "list", "hr", "code"}
    listed = blocks["list"]
    assert [c.kind for c in listed.children] == ["item", "item"]
    assert listed.children[1].children[1].kind == "paragraph"
    assert (blocks["hr"].content, blocks["code"].content, listed.content) == (False, True, True)
    assert hash(listed) == hash(with_code(monkeypatch, "python", make_document, "a.md",
                                          doc.text).blocks[1])
    with pytest.raises(AttributeError):
        listed.start = 0  # frozen: made in C, still read-only


def test_the_variable_picks_the_code_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.setenv(NATIVE_VARIABLE, "python")
    assert native_choice() == "python"
    monkeypatch.setenv(NATIVE_VARIABLE, "fortran")
    with pytest.raises(ConfigError, match="CHUNKLAB_NATIVE must be one of c, python; got "
                                          "'fortran'"):
        native_choice()


def test_asking_for_c_code_the_install_did_not_build_says_so(monkeypatch):
    monkeypatch.setattr(lines_module, "native", None)
    monkeypatch.setenv(NATIVE_VARIABLE, "c")
    with pytest.raises(ConfigError, match="did not build chunklab's C code"):
        native_choice()
    monkeypatch.delenv(NATIVE_VARIABLE)
    assert native_choice() == "python"
    assert list(LineIndex("a\nb\n").starts) == [0, 2, 4]


def crumbs_of(doc) -> tuple:
    crumbs = Breadcrumbs(doc.blocks)
    return (list(crumbs.starts), crumbs.paths, crumbs.provenances, crumbs.has_headings,
            crumbs.block_starts, crumbs.block_ends)


@needs_native
def test_c_block_spans_are_the_blocks_offsets_in_either_width():
    blocks = make_document("a.md", "# T\n\nsome text\n\n- an item\n").blocks
    for itemsize, code in ((4, "i"), (8, "q")):
        starts, ends = array(code), array(code)
        for found, spans in zip((starts, ends), native.block_spans(blocks, itemsize),
                                strict=True):
            found.frombytes(spans)
        assert list(starts) == [b.start for b in blocks]
        assert list(ends) == [b.end for b in blocks]
    with pytest.raises(ValueError, match="itemsize must be 4 or 8"):
        native.block_spans(blocks, 2)


@needs_native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=markdown_docs(), infer=st.booleans())
@example(text="## b\n\n# a\n\n### c\n\n#### d\n\n## e\n", infer=False)
@example(text="# \u00a0T\u00a0 \n\nx\n", infer=False)
def test_c_heading_stack_equals_pythons(text, infer, monkeypatch):
    doc = make_document("gen.md", text, infer_headings=infer)
    c = with_code(monkeypatch, "c", crumbs_of, doc)
    assert c == with_code(monkeypatch, "python", crumbs_of, doc)
    assert [type(p) for p in c[1]] == [tuple] * len(c[1])


@needs_native
@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_c_heading_stack_equals_pythons_on_every_fixture(path, monkeypatch):
    try:
        doc = make_document(path.name, path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        pytest.skip(f"{path.name} is not UTF-8 text (a loader fixture)")
    assert with_code(monkeypatch, "c", crumbs_of, doc) == with_code(monkeypatch, "python",
                                                                   crumbs_of, doc)


@needs_native
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab \n\t\u00a0\u6570\U0001f600\u2028"), max_size=80),
       cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=12))
def test_c_gaps_equal_pythons(text, cuts):
    # Blocks over any spans in order (overlapping ones too): the text between them that is not
    # whitespace, trimmed, is found the same way.
    points = sorted(min(c, len(text)) for c in cuts)
    spans = list(zip(points[::2], points[1::2], strict=False))
    blocks = [Block("paragraph", start, end) for start, end in spans]
    assert native.gaps(blocks, text) == _gaps(blocks, text)


def test_text_between_blocks_becomes_a_text_block_in_place(monkeypatch):
    text = "para one\n\n  stray words  \n\npara two\ntail"
    blocks = [Block("paragraph", 0, 8), Block("paragraph", 27, 35)]
    for code in ("c", "python") if native is not None else ("python",):
        made = with_code(monkeypatch, code, _with_gaps, blocks, text)
        assert [(b.kind, b.start, b.end) for b in made] == [
            ("paragraph", 0, 8), ("text", 12, 23), ("paragraph", 27, 35), ("text", 36, 40)]
        assert text[12:23] == "stray words" and made[1].content
        assert with_code(monkeypatch, code, _with_gaps, blocks[:1], "para one\n") == blocks[:1]


@needs_native
def test_c_reads_blocks_by_their_slots_and_other_records_by_attribute():
    # Blocks are read slot by slot; a record of another class (no such slots) by attribute,
    # with the same result; a title with whitespace at its ends is stripped either way.
    from types import SimpleNamespace

    blocks = make_document("a.md", "# One\n\ntext\n\n## Two\n").blocks
    spaced = (*blocks, Block("heading", 20, 30, 3, " Three ", "markdown_atx"))
    others = tuple(SimpleNamespace(kind=b.kind, start=b.start, end=b.end, level=b.level,
                                   title=b.title, provenance=b.provenance) for b in spaced)
    found = native.heading_paths(spaced, "heading")
    assert found == native.heading_paths(others, "heading")
    assert found[1][-1] == ("One", "Two", "Three")
    assert native.block_spans(spaced, 4) == native.block_spans(others, 4)


@needs_native
def test_a_record_with_some_of_the_block_slots_leaves_the_blocks_read_right(monkeypatch):
    # Reading another slotted class (kind, start and end slots, then no level) must not change
    # where Block's own slots are read.
    class Span:
        __slots__ = ("pad", "end", "start", "kind")

        def __init__(self, block):
            self.pad, self.end, self.start, self.kind = None, block.end, block.start, block.kind

    blocks = make_document("a.md", "# One\n\ntext\n\n## Two\n").blocks
    assert native.block_spans(tuple(map(Span, blocks)), 8) == native.block_spans(blocks, 8)
    with_code(monkeypatch, "c", folded, "# warm\n")  # the fold reads Block's slots again
    assert native.block_spans(tuple(map(Span, blocks)), 4) == native.block_spans(blocks, 4)
    assert native.heading_paths(blocks, "heading")[1][-1] == ("One", "Two")
