"""Generated Markdown for property tests: leaves (lead-ins and a VitePress page's code and
markup among them), nested containers (lists, quotes, ``:::``, and the labelled containers of
documentation dialects: mkdocs-material admonitions and tabs, MyST directives, MDX
components, GitHub alerts, VitePress code groups; nested in each other and in list items), deep
nesting (up to 30 levels, past the parser's nesting limit), front matter, CRLF and
non-ASCII text."""

from __future__ import annotations

from hypothesis import strategies as st

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "renewal", "#", "`x`", "**b**",
                         "|", "~~~", "```", "-", "1.", "##[error]", "é", "数据", ":::", "[a][r1]",
                         "[b]", "<!--", "-->", "Dr.", "e.g.", "end.", "完了。"])
line = st.lists(words, min_size=1, max_size=12).map(" ".join)
LEAF_KINDS = ["heading", "para", "fence", "open_fence", "table", "list", "blank", "setext",
              "empty_heading", "definitions", "html", "comment", "hr", "long_line", "cjk",
              "piped", "lazy_quote", "tabbed", "lead_in", "vue"]
NESTED_KINDS = ["steps", "quote", "directive", "admonition", "tab", "myst", "component",
                "alert", "slash", "code_group"]
TITLES = ["Windows", "macOS and Linux", "CUDA 12.8", "数据", "Note: read", ""]
"""Labels of the generated containers (an empty one: the container's name labels it)."""


def indent(text: str, prefix: str, first: str | None = None) -> str:
    lines = text.split("\n")
    head = first if first is not None else prefix
    return "\n".join([head + lines[0]] + [prefix + ln if ln else ln for ln in lines[1:]])


@st.composite
def leaf_blocks(draw, kinds=LEAF_KINDS):
    kind = draw(st.sampled_from(kinds))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(line)
    if kind == "empty_heading":
        marks = "#" * draw(st.integers(1, 6))
        return draw(st.sampled_from([marks, f"{marks} {marks}", f"{marks} "]))
    if kind == "setext":
        underline = draw(st.sampled_from(["===", "---"]))
        return draw(line).replace("#", "x").strip("-= ") + "\n" + underline
    if kind == "para":
        return "\n".join(draw(st.lists(line, min_size=1, max_size=4)))
    if kind in ("fence", "open_fence"):
        mark = draw(st.sampled_from(["```", "~~~"]))
        body = "\n".join(draw(st.lists(st.sampled_from([*LINES, ""]), min_size=0, max_size=5)))
        return f"{mark}py\n{body}" + (f"\n{mark}" if kind == "fence" else "")
    if kind == "table":
        rows = draw(st.integers(1, 4))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | v{i} |" for i in range(rows))
    if kind == "list":
        return "\n".join(f"- {draw(line)}" for _ in range(draw(st.integers(1, 3))))
    if kind == "definitions":
        labels = draw(st.lists(st.sampled_from(["r1", "r2", "docs", "Guide"]), min_size=1,
                               max_size=3))
        return "\n".join(f"[{label}]: https://example.org/{label} \"T\"" for label in labels)
    if kind == "html":
        return f"<div class=\"note\">\n{draw(line)}\n</div>"
    if kind == "comment":
        return "<!-- " + draw(st.sampled_from(["TODO", "generated", "数据"])) + " -->"
    if kind == "hr":
        return draw(st.sampled_from(["---", "***", "___", ":::"]))
    if kind == "piped":  # a block opening on a line with a '|', over one like a delimiter row
        opener = draw(st.sampled_from(["1.", "10.", "-", "*", ">", "#", "~~~", "<!--",
                                       "[a]: /x", "- [ ]", ""]))
        cells = draw(st.sampled_from(["|", "a | b", "`a|b` | c", "a \\| b"]))
        row = draw(st.sampled_from(["---", "--|--", ":-:", "|---|---|", "  ---", "-", "- -"]))
        return f"{opener} {cells}".strip() + "\n" + row
    if kind == "lazy_quote":  # a quote's next line without its '>'
        lazy = draw(st.sampled_from(["-", "10. a", "1.", "*", "- a", "continued", "2) b"]))
        return "> " + draw(line) + "\n" + lazy
    if kind == "tabbed":  # a list item or quote carried on by a tab-indented line
        head = draw(st.sampled_from(["-", "- a", "1. # h", "> q", "- > q", "-\tx"]))
        return head + "\n" + draw(st.sampled_from(["\t", "  \t", "\t\t"])) + draw(line)
    if kind == "long_line":  # an unwrapped paragraph: sentences on one line
        return " ".join(draw(st.lists(st.sampled_from(SENTENCES), min_size=3, max_size=12)))
    if kind == "cjk":
        return "".join(draw(st.lists(st.sampled_from(CJK), min_size=2, max_size=10)))
    if kind == "lead_in":  # a short paragraph introducing what follows it
        return draw(st.sampled_from(["Run:", "**Options:**", "Then, in your terminal:"]))
    if kind == "vue":  # a VitePress page's code and template markup
        return draw(st.sampled_from([
            "<script setup>\nimport { ref } from 'vue'\nconst n = ref(0)\n</script>",
            "<style module>\n.b { color: red; }\n</style>",
            '<div class="tip"><span>{{ n }}</span></div>', "<VPTeamMembers :members />"]))
    return ""


LINES = ["x = 1", "# not a heading", "| a |", ":::", "- item", "> quoted", "[r1]: /x"]
SENTENCES = ["Run the installer first.", "It asks for the install path, e.g. /opt/tern.",
             "Dr. Lee wrote the defaults!", "Does it work?", "Version 2.4.1 is required.",
             "Each step below assumes a shell with sudo."]
CJK = ["客户端会检查配置文件。", "令牌文件必须只对当前用户可读！", "同期します。",
       "完了しましたか？"]


@st.composite
def nested_blocks(draw, depth=0):
    """A list item, quote or ``:::`` container holding leaves and (once) nested containers."""
    kind = draw(st.sampled_from(NESTED_KINDS))
    inner_kinds = ["para", "fence", "table", "list", "definitions", "long_line", "cjk", "hr",
                   "piped", "lazy_quote", "lead_in"]
    children = draw(st.lists(leaf_blocks(inner_kinds), min_size=1, max_size=4))
    if depth == 0 and draw(st.booleans()):
        children.append(draw(nested_blocks(depth=1)))
    gap = draw(st.sampled_from(["\n\n", "\n"]))
    if kind == "steps":
        items = []
        for n, child in enumerate(children, 1):
            lead = f"{n}. {draw(line)}"
            items.append(lead + "\n\n" + indent(child, "   "))
        return gap.join(items)
    if kind == "quote":
        return indent("\n\n".join(children), "> ").replace("\n\n", "\n>\n")
    if kind in DIALECTS:
        return DIALECTS[kind](draw, children)
    name = draw(st.sampled_from(["tip", "warning Careful", "details Click me"]))
    return f"::: {name}\n" + "\n\n".join(children) + "\n:::"


def _admonition(draw, children: list[str]) -> str:
    marker = draw(st.sampled_from(["!!!", "???", "???+"]))
    title = draw(st.sampled_from(TITLES))
    head = f"{marker} {draw(st.sampled_from(['note', 'warning', 'tip']))}"
    return (head + (f' "{title}"' if title else "") + "\n\n"
            + indent("\n\n".join(children), "    ", "    "))


def _tab(draw, children: list[str]) -> str:
    tabs = []
    for n in range(draw(st.integers(1, 3))):
        label = draw(st.sampled_from(TITLES)) or f"Tab {n}"
        body = children if n == 0 else [draw(leaf_blocks(["para", "fence", "list"]))]
        tabs.append(f'=== "{label}"\n\n' + indent("\n\n".join(body), "    ", "    "))
    return "\n\n".join(tabs)


def _myst(draw, children: list[str]) -> str:
    name = draw(st.sampled_from(["{note}", "{admonition} Custom title", "{tab-item} Linux",
                                 "{dropdown} More"]))
    marker = draw(st.sampled_from(["````", "::::"]))
    options = draw(st.sampled_from(["", ":class: tip\n", "---\nclass: tip\n---\n"]))
    return f"{marker}{name}\n{options}\n" + "\n\n".join(children) + f"\n{marker}"


def _component(draw, children: list[str]) -> str:
    label = draw(st.sampled_from(TITLES))
    attrs = f'value="v" label="{label}"' if label else 'value="plain"'
    body = "\n\n".join(children)
    return (f'<Tabs groupId="g">\n<TabItem {attrs}>\n\n{body}\n\n</TabItem>\n</Tabs>'
            if draw(st.booleans()) else f"<TabItem {attrs}>\n\n{body}\n\n</TabItem>")


def _code_group(draw, children: list[str]) -> str:
    """VitePress' code group: fences titled ``[label]``, any other child kept as it is."""
    fences = [f"```sh [{draw(st.sampled_from(TITLES)) or 'npm'}]\n{child}\n```"
              for child in children]
    return "::: code-group\n\n" + "\n\n".join(fences) + "\n\n:::"


def _alert(draw, children: list[str]) -> str:
    kind = draw(st.sampled_from(["NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"]))
    return indent(f"[!{kind}]\n" + "\n\n".join(children), "> ").replace("\n\n", "\n>\n")


def _slash(draw, children: list[str]) -> str:
    head = draw(st.sampled_from(["//// tab | Python 3.10+", "//// note", "//// details | More"]))
    options = draw(st.sampled_from(["", "    attrs: {class: x}\n"]))
    return f"{head}\n{options}\n" + "\n\n".join(children) + "\n\n////"


DIALECTS = {"admonition": _admonition, "tab": _tab, "myst": _myst, "component": _component,
            "alert": _alert, "slash": _slash, "code_group": _code_group}
"""Each dialect's container around generated children."""


MAX_DEPTH = 30


@st.composite
def deep_blocks(draw, max_depth=MAX_DEPTH):
    """Lists and quotes nested up to ``max_depth`` deep (a leaf at the bottom, a paragraph or
    a fence beside some levels): past the parser's nesting limit when deep enough."""
    depth = draw(st.integers(1, max_depth))
    kinds = draw(st.lists(st.sampled_from(["item", "quote"]), min_size=depth, max_size=depth))
    text = draw(leaf_blocks(["para", "fence", "table", "list", "cjk", "piped", "lazy_quote"]))
    for kind in reversed(kinds):
        if draw(st.integers(0, 4)) == 0:
            text = draw(leaf_blocks(["para", "fence"])) + "\n\n" + text
        text = indent(text, "  ", "- ") if kind == "item" else indent(text, "> ")
    return text


@st.composite
def markdown_blocks(draw):
    """One block: a leaf (twice as likely), a nested container or a deep nesting."""
    return draw(st.one_of(leaf_blocks(), leaf_blocks(), nested_blocks(), deep_blocks()))


@st.composite
def markdown_docs(draw):
    blocks = draw(st.lists(markdown_blocks(), min_size=1, max_size=14))
    if draw(st.booleans()):
        blocks.insert(0, "---\ntitle: " + draw(st.sampled_from(["Guide", "数据", "x"])) +
                      "\ndescription: d\n---")
    gaps = draw(st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n"]), min_size=len(blocks),
                         max_size=len(blocks)))
    text = "".join(b + g for b, g in zip(blocks, gaps, strict=True))
    if draw(st.booleans()):
        text = text.rstrip("\n")  # many files end without a newline
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text
