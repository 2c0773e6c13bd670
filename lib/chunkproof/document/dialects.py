"""Documentation dialects as markdown-it block rules: mkdocs-material admonitions, content
tabs and blocks, MyST directives and targets, Docusaurus/MDX components and
import/export lines. Each container's opening token carries its dialect, name and label in
``meta`` (``container_meta``), so ``blocks.py`` folds every dialect into one kind of block."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock
from mdit_py_plugins.utils import is_code_block

from .nesting import DEPTH_KEY, read_flat

ADMONITIONS = frozenset({
    "note", "abstract", "summary", "tldr", "info", "todo", "tip", "hint", "important",
    "success", "check", "done", "question", "help", "faq", "warning", "caution", "attention",
    "failure", "fail", "missing", "danger", "error", "bug", "example", "quote", "cite",
    "seealso", "admonition", "details", "dropdown", "versionadded", "versionchanged",
    "deprecated", "secondary", "primary",
})
"""Admonition names across the dialects (an untitled one is labelled by its name)."""
CODE_DIRECTIVES = frozenset({"code-block", "code", "code-cell", "sourcecode"})
"""MyST directives whose body is code: read as a fence whose info string is the language."""
MYST_DIRECTIVES = ADMONITIONS | CODE_DIRECTIVES | frozenset({
    "tab-set", "tab-item", "grid", "grid-item", "grid-item-card", "card", "figure",
    "figure-md", "image", "table", "list-table", "csv-table", "math", "toctree", "include",
    "literalinclude", "eval-rst", "raw", "rubric", "contents", "glossary", "margin",
    "sidebar", "topic", "epigraph", "mermaid", "button-ref", "button-link", "only",
    "versionremoved", "automodule", "autoclass", "autofunction",
})
"""Directive names read as known (``dialect_profile`` lists any other as unknown)."""
ALERTS = frozenset({"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"})
"""GitHub alert types (``> [!NOTE]``)."""
MAX_DEPTH = 8
"""Containers of the dialects below open inside one another at most: the body of the
eighth is read flat (``nesting.read_flat``), and a ``:::`` line that would open a ninth is
text. So an unclosed or over-deep container costs at most eight scans of the lines after it
(each rule reads a line once), and the blocks read flat are cut between."""

_TAB = re.compile(r'===[!+]{0,2}[ \t]+"(.*)"[ \t]*$')
_ADMONITION = re.compile(
    r'(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)((?:[ \t]+[\w-]+)*)(?:[ \t]+"(.*)")?[ \t]*$')
_DIRECTIVE = re.compile(r"(`{3,}|~{3,}|:{3,})[ \t]*\{([A-Za-z][\w:.+-]*)\}[ \t]*(.*)$")
_OPTION = re.compile(r":[\w-]+:")
_SLASHES = re.compile(r"(/{3,})[ \t]*([A-Za-z][\w-]*)(?:[ \t]*\|[ \t]*(.*))?")
"""Matched whole against the line with its trailing blanks stripped (``_opening``): no
blank-eating quantifier follows another, so a line is read in time linear in its length."""
_TARGET = re.compile(r"\(([^()\s]+)\)=[ \t]*$")
_COMPONENT = re.compile(r"<([A-Z][\w.]*)(?=[\s/>]|$)")
_ATTRIBUTE = re.compile(r"""\b(label|title|value)=(?:"([^"]*)"|'([^']*)'|\{["'`]([^"'`]*))""")
_ESM = re.compile(r"(import|export)\b")
_ESM_FORMS = re.compile(
    r"""^(import\s*['"{*]|import\s.*\bfrom\s*['"]|export\s+(default|const|let|var|function|"""
    r"""class|async|\{|\*))""", re.MULTILINE)
_ALERT = re.compile(r"[>\s]*\[!([A-Za-z]+)\]")


def meta(dialect: str, name: str, label: str) -> dict[str, str]:
    """What a container's opening token carries."""
    return {"dialect": dialect, "name": name, "label": " ".join(label.split())}


def titled(name: str) -> str:
    """An untitled admonition's label: its name as a title (``note`` -> ``Note``)."""
    return name.replace("-", " ").capitalize() if name.lower() in ADMONITIONS else ""


def colon_meta(params: str) -> dict[str, str]:
    """``::: tip Note`` (VitePress), ``:::note Title`` or ``:::note[Title]`` (Docusaurus)."""
    params = params.strip()
    name = re.match(r"[\w-]*", params).group()  # type: ignore[union-attr]
    rest = params[len(name):].strip()
    if rest.startswith("[") and rest.endswith("]"):
        rest = rest[1:-1]
    return meta("colon", name.lower(), rest.strip("\"'") or titled(name))


def container_meta(opener) -> dict[str, str]:
    """The dialect, name and label of a container's opening token (a markdown-it Token)."""
    if "dialect" in (opener.meta or {}):
        return opener.meta
    return colon_meta(opener.info)


def alert_label(first_line: str) -> str:
    """The label of a blockquote opening with a GitHub alert (``> [!NOTE]`` -> ``Note``),
    else an empty string."""
    found = _ALERT.match(first_line)
    kind = found.group(1).upper() if found else ""
    return kind.capitalize() if kind in ALERTS else ""


def _opens(state: StateBlock, line: int, chars: str) -> bool:
    """Whether ``line``'s first char (after its indentation) is one of ``chars``: each rule
    looks at that one char before it reads the line."""
    pos = state.bMarks[line] + state.tShift[line]
    return pos < state.eMarks[line] and state.src[pos] in chars


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]


def _opening(state: StateBlock, line: int) -> str:
    """``line``'s text as an opening pattern reads it: indentation and trailing blanks off."""
    return _line(state, line).rstrip(" \t")


def _indented_end(state: StateBlock, first: int, end: int, indent: int) -> int:
    """The first line from ``first`` that holds text indented less than ``indent``."""
    line = first
    while line < end and (state.isEmpty(line) or state.sCount[line] >= indent):
        line += 1
    return line


def _children(state: StateBlock, first: int, stop: int, indent: int, parent: str) -> None:
    """Lines [first, stop) tokenized as blocks indented by ``indent``: the body of a container
    opened inside as many others as it may be (``MAX_DEPTH``) is read flat."""
    saved = state.parentType, state.lineMax, state.blkIndent
    state.parentType, state.lineMax, state.blkIndent = parent, stop, indent
    depth = state.env.get(DEPTH_KEY, 0) + 1
    state.env[DEPTH_KEY] = depth
    if depth < MAX_DEPTH:
        state.md.block.tokenize(state, first, stop)
    else:
        read_flat(state, first, stop)
    state.env[DEPTH_KEY] = depth - 1
    state.parentType, state.lineMax, state.blkIndent = saved


def _indented(state: StateBlock, start: int, end: int, kind: str, found: dict) -> None:
    """A container opened on line ``start`` whose body is indented four spaces past its
    marker, blank lines included (as Python-Markdown reads it): ``kind``_open, its blocks,
    ``kind``_close."""
    indent = state.sCount[start] + 4
    stop = _indented_end(state, start + 1, end, indent)
    token = state.push(f"{kind}_open", "div", 1)
    token.map, token.meta = [start, stop], found
    token.info = _line(state, start).lstrip("!?+=").strip()
    _children(state, start + 1, stop, indent, kind)
    state.push(f"{kind}_close", "div", -1)
    state.line = stop


def content_tab(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """``=== "Label"`` (mkdocs-material, pymdownx.tabbed): a tab whose body is indented four
    spaces past its marker."""
    if is_code_block(state, start) or not _opens(state, start, "="):
        return False
    found = _TAB.match(_line(state, start))
    if found is not None and not silent:
        _indented(state, start, end, "content_tab", meta("mkdocs", "tab", found.group(1)))
    return found is not None


def admonition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """``!!! note``, ``??? tip "Title"``, ``???+ info inline end "Title"`` (Python-Markdown,
    pymdownx.details): an admonition whose body is indented four spaces past its marker.
    mdit-py-plugins' admon rule reads the same lines but closes the body at two blank lines
    in a row, where Python-Markdown goes on while the text is indented."""
    if is_code_block(state, start) or not _opens(state, start, "!?"):
        return False
    found = _ADMONITION.match(_line(state, start))
    if found is not None and not silent:
        name, title = found.group(1).lower(), found.group(3)
        label = titled(name) or name.capitalize() if title is None or title == "" else title
        _indented(state, start, end, "admonition", meta("mkdocs", name, label))
    return found is not None


def _closing_fence(state: StateBlock, first: int, end: int, marker: str) -> tuple[int, bool]:
    """(the line closing a fence opened by ``marker``, True), or (the line its parent ends
    on, False) when none closes it."""
    line = first
    while line < end:
        text = _line(state, line).rstrip()
        if text and state.sCount[line] < state.blkIndent:
            return line, False
        if (state.sCount[line] - state.blkIndent < 4 and len(text) >= len(marker)
                and text.strip(marker[0]) == ""):
            return line, True
        line += 1
    return end, False


def _options(state: StateBlock, first: int, stop: int) -> int:
    """A directive's options (``:key: value`` lines, or YAML between ``---`` lines) as one
    ``directive_options`` token; the line its body starts on."""
    line = first
    if first < stop and _line(state, first).rstrip() == "---":
        line = first + 1
        while line < stop and _line(state, line).rstrip() != "---":
            line += 1
        line = min(line + 1, stop)
    else:
        while line < stop and _OPTION.match(_line(state, line)):
            line += 1
    if line > first:
        token = state.push("directive_options", "", 0)
        token.map = [first, line]
    return line


def directive(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """MyST ```` ```{name} args ```` and ``:::{name} args``: a container whose body is
    Markdown (after its options), or a fence for ``{code-block} python`` and its kin."""
    if is_code_block(state, start) or not _opens(state, start, "`~:"):
        return False
    text = _line(state, start)
    found = _DIRECTIVE.match(text)
    if found is None or (found.group(1)[0] == "`" and "`" in found.group(3)):
        return False
    if silent:
        return True
    marker, name, args = found.groups()
    close, closed = _closing_fence(state, start + 1, end, marker)
    stop = close + 1 if closed else close
    if name in CODE_DIRECTIVES:
        token = state.push("fence", "code", 0)
        token.info, token.markup, token.map = args.strip(), marker, [start, stop]
        token.content = state.getLines(start + 1, close, state.sCount[start], True)
    else:
        token = state.push("directive_open", "div", 1)
        token.map, token.info = [start, stop], f"{{{name}}} {args}".strip()
        token.meta = meta("myst", name, args.strip() or titled(name))
        body = _options(state, start + 1, close)
        _children(state, body, close, state.blkIndent, "directive")
        state.push("directive_close", "div", -1)
    state.line = stop
    return True


def slash_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """``/// note | Title`` ... ``///`` (pymdownx.blocks, as mkdocs-material and FastAPI's docs
    write admonitions, details and tabs: ``//// tab | Python 3.10+``): a container whose
    body is Markdown, after its options (lines indented past the opening one)."""
    if is_code_block(state, start) or not _opens(state, start, "/"):
        return False
    found = _SLASHES.fullmatch(_opening(state, start))
    if found is None:
        return False
    if silent:
        return True
    marker, name, title = found.group(1), found.group(2), found.group(3) or ""
    close, closed = _closing_fence(state, start + 1, end, marker)
    token = state.push("slash_block_open", "div", 1)
    token.map, token.info = [start, close + 1 if closed else close], f"{name} {title}".strip()
    token.meta = meta("mkdocs", name.lower(), title or titled(name))
    body = _indented_end(state, start + 1, close, state.sCount[start] + 4)
    while body > start + 1 and state.isEmpty(body - 1):
        body -= 1
    if body > start + 1:
        options = state.push("directive_options", "", 0)
        options.map = [start + 1, body]
    _children(state, body, close, state.blkIndent, "slash_block")
    state.push("slash_block_close", "div", -1)
    state.line = close + 1 if closed else close
    return True


def target(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A MyST target line ``(label)=``: a wordless block naming what follows."""
    if (is_code_block(state, start) or not _opens(state, start, "(")
            or not _TARGET.match(_line(state, start))):
        return False
    if not silent:
        token = state.push("target", "", 0)
        token.map = [start, start + 1]
        state.line = start + 1
    return True


def _tag_end(state: StateBlock, start: int, end: int) -> tuple[int, int, bool] | None:
    """(line, offset) just past a JSX opening tag that starts ``start``'s line, and whether
    it closes itself (``/>``); None when no ``>`` ends it before a blank line."""
    src, depth, quote = state.src, 0, ""
    line = start
    pos = state.bMarks[start] + state.tShift[start]
    while line < end:
        stop = state.eMarks[line]
        if line > start and state.isEmpty(line):
            return None
        while pos < stop:
            char = src[pos]
            if quote:
                quote = "" if char == quote else quote
            elif char in "\"'`":
                quote = char
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
            elif char == ">" and depth <= 0:
                return line, pos + 1, src[pos - 1] == "/"
            pos += 1
        line += 1
        if line < end:
            pos = state.bMarks[line] + state.tShift[line]
    return None


def _component_close(state: StateBlock, first: int, end: int, name: str) -> int:
    """The line holding the ``</name>`` that closes a component opened before ``first``
    (components of the same name nested in it counted, lines of fences skipped); ``end``
    when none does (an unclosed component runs to the end, as an unclosed fence does)."""
    depth, fence = 1, ""
    opening, closing = re.compile(rf"<{re.escape(name)}(?=[\s>])"), f"</{name}>"
    for line in range(first, end):
        text = _line(state, line)
        if fence:
            fence = "" if text.rstrip().startswith(fence) and not text.strip(fence[0]) else fence
            continue
        if text[:3] in ("```", "~~~"):
            fence = text[:3]
            continue
        depth += len(opening.findall(text)) - text.count(f"<{name}/>") - text.count(closing)
        if depth <= 0:
            return line
    return end


def component(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A JSX component (``<Tabs>``, ``<TabItem value="x" label="Y">``) opening a line: one
    ``jsx`` block when it closes on the line its tag ends (or closes itself), else a
    container of the Markdown between its tags, labelled by its ``label``, ``title`` or
    ``value`` attribute."""
    if is_code_block(state, start) or not _opens(state, start, "<"):
        return False
    found = _COMPONENT.match(_line(state, start))
    tag = _tag_end(state, start, end) if found else None
    if found is None or tag is None:
        return False
    name, (tag_line, after, closes) = found.group(1), tag
    inline = closes or f"</{name}>" in state.src[after : state.eMarks[tag_line]]
    if silent:
        return True
    if inline:
        token = state.push("jsx", "", 0)
        token.map = [start, tag_line + 1]
        state.line = tag_line + 1
        return True
    opener = state.src[state.bMarks[start] : after]
    attributes = {m.group(1): m.group(2) or m.group(3) or m.group(4) or ""
                  for m in _ATTRIBUTE.finditer(opener)}
    label = attributes.get("label") or attributes.get("title") or attributes.get("value", "")
    close = _component_close(state, tag_line + 1, end, name)
    token = state.push("jsx_open", "div", 1)
    token.map, token.info = [start, min(close + 1, end)], name
    token.meta = meta("mdx", name, label)
    body = [line for line in range(tag_line + 1, close) if not state.isEmpty(line)]
    indent = min((state.sCount[line] for line in body), default=state.blkIndent)
    _children(state, tag_line + 1, close, max(indent, state.blkIndent), "jsx")
    state.push("jsx_close", "div", -1)
    state.line = min(close + 1, end)
    return True


def esm(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """MDX ``import``/``export`` statements at the top level, up to a blank line: one
    ``esm`` block (the page's metadata, not its content)."""
    if (state.level or state.sCount[start] or not _opens(state, start, "ie")
            or not _ESM.match(_line(state, start))):
        return False
    stop = start + 1
    while stop < end and not state.isEmpty(stop):
        stop += 1
    if not _ESM_FORMS.match(state.getLines(start, stop, 0, False)):
        return False
    if not silent:
        token = state.push("esm", "", 0)
        token.map = [start, stop]
        state.line = stop
    return True


def directive_line(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A MyST directive's opening line where lines are read flat: one line of text, so that
    ```` ```{note} ```` does not open a code fence holding the rest."""
    if (is_code_block(state, start) or not _opens(state, start, "`~:")
            or _DIRECTIVE.match(_line(state, start)) is None):
        return False
    if not silent:
        token = state.push("flat_opener", "", 0)
        token.map = [start, start + 1]
        state.line = start + 1
    return True


def use_flat_dialects(md: MarkdownIt) -> MarkdownIt:
    """``md`` reading a MyST directive's opening line as a line of text (``directive_line``):
    the only dialect rule of lines read flat."""
    md.block.ruler.before("fence", "directive_line", directive_line,
                          {"alt": ["paragraph", "reference"]})
    return md


def limit_depth(md: MarkdownIt, name: str) -> MarkdownIt:
    """``md`` with its block rule ``name`` (a container that parses its own body, as
    mdit-py-plugins' ``:::`` container does) opening a container only where fewer than
    ``MAX_DEPTH - 1`` are open (its body cannot be read flat, so it never holds the last
    level), and counted as one while it reads its body."""
    rule = md.block.ruler.__rules__[md.block.ruler.__find__(name)]
    inner = rule.fn

    def limited(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        depth = state.env.get(DEPTH_KEY, 0)
        if depth + 1 >= MAX_DEPTH:
            return False
        state.env[DEPTH_KEY] = depth + 1
        try:
            return inner(state, start, end, silent)
        finally:
            state.env[DEPTH_KEY] = depth

    md.block.ruler.at(name, limited, {"alt": rule.alt})
    return md


def use_dialects(md: MarkdownIt) -> MarkdownIt:
    """``md`` reading every dialect above (before its fence rule: a directive is no fence)."""
    terminates: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    md.block.ruler.before("fence", "admonition", admonition, terminates)
    md.block.ruler.before("fence", "directive", directive, terminates)
    md.block.ruler.before("fence", "content_tab", content_tab)
    md.block.ruler.before("fence", "slash_block", slash_block, terminates)
    md.block.ruler.before("html_block", "component", component)
    md.block.ruler.before("paragraph", "esm", esm)
    md.block.ruler.before("paragraph", "target", target)
    return md
