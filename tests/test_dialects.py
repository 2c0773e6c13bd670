"""Documentation dialects: each construct read as a labelled container (or a metadata, target
or jsx block), and the chunks of such pages: labels never cut from their bodies and carried
by every piece, fences inside containers seen as fences, lead-ins kept with what they
introduce."""

from __future__ import annotations

import math

import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.chunking.build import ChunkBuilder
from chunkproof.chunking.records import Piece
from chunkproof.document.blocks import parse_blocks
from chunkproof.evaluation.scoring.chunk_stats import chunk_intact, chunk_stats, label_share
from chunkproof.evaluation.scoring.invariants import check, cut_labels, label_kept
from chunkproof.notebooks.splitter_panorama import panorama
from conftest import fixture_doc


def first_container(text: str):
    """The first container of ``text``, at any depth."""
    pending = list(parse_blocks(text))
    while pending:
        block = pending.pop(0)
        if block.kind == "container":
            return block
        pending = list(block.children) + pending
    raise AssertionError(f"no container in {text!r}")


@pytest.mark.parametrize("text,dialect,label", [
    ("!!! note\n    Body.\n", "mkdocs", "Note"),
    ('!!! warning "Mind the gap"\n    Body.\n', "mkdocs", "Mind the gap"),
    ("???+ tip\n    Open by default.\n", "mkdocs", "Tip"),
    ('??? example "Folded"\n    Body.\n', "mkdocs", "Folded"),
    ('=== "Windows"\n\n    Run it.\n', "mkdocs", "Windows"),
    ('===+ "Selected tab"\n    Run it.\n', "mkdocs", "Selected tab"),
    ("/// tip | Use the CLI\n\nRun it.\n\n///\n", "mkdocs", "Use the CLI"),
    ("/// warning\n    attrs: {class: x}\n\nBody.\n///\n", "mkdocs", "Warning"),
    ("//// tab | Python 3.10+\n\n```py\nx = 1\n```\n\n////\n", "mkdocs", "Python 3.10+"),
    ("```{note}\nBody.\n```\n", "myst", "Note"),
    ("```{admonition} Custom\n:class: tip\n\nBody.\n```\n", "myst", "Custom"),
    (":::{tab-item} Sphinx\nBody.\n:::\n", "myst", "Sphinx"),
    ("> [!WARNING]\n> Careful.\n", "github", "Warning"),
    ("> [!note]\n> Lower case works too.\n", "github", "Note"),
    (":::note Take care\nBody.\n:::\n", "colon", "Take care"),
    (":::tip[Bracketed title]\nBody.\n:::\n", "colon", "Bracketed title"),
    ("::: details Click me\nBody.\n:::\n", "colon", "Click me"),
    ("::: warning\nBody.\n:::\n", "colon", "Warning"),
    ('<TabItem value="npm" label="npm (Node)">\n\nBody.\n\n</TabItem>\n', "mdx", "npm (Node)"),
    ('<TabItem value="yarn">\n\nBody.\n\n</TabItem>\n', "mdx", "yarn"),
    ('<Tabs groupId="pm">\n<TabItem value="a">\n\nA.\n\n</TabItem>\n</Tabs>\n', "mdx", ""),
])
def test_each_dialect_opens_a_labelled_container(text, dialect, label):
    block = first_container(text)
    assert (block.dialect, block.label) == (dialect, label)
    assert text[block.start : block.end] == text.rstrip("\n")
    assert all(child.kind != "code" for child in block.children)


def test_an_admonition_body_is_prose_not_indented_code():
    text = ("# T\n\n!!! note\n    Four spaces in, read as Markdown.\n\n"
            "    ```py\n    x = 1\n    ```\n")
    (_, note) = parse_blocks(text)
    assert [b.kind for b in note.children] == ["paragraph", "fence"]
    assert note.children[1].title == "py"


@pytest.mark.parametrize("text,kinds", [
    ("```{code-block} python\nx = 1\n```\n", ["fence"]),
    ("import Tabs from '@theme/Tabs';\nimport X from \"y\";\n\nText.\n",
     ["metadata", "paragraph"]),
    ("export const meta = {a: 1};\n\nText.\n", ["metadata", "paragraph"]),
    ("import the data first, then run it.\n", ["paragraph"]),  # prose, not a statement
    ("(install-target)=\n# Install\n", ["target", "heading"]),
    ('<Badge text="beta" />\n', ["jsx"]),
    ("::: pkg.module.Name\n    options:\n      members: true\n\nAfter.\n",
     ["paragraph", "paragraph"]),  # mkdocstrings: no container that would run to the end
    ("<Highlight color=\"red\">inline</Highlight>\n", ["jsx"]),
    ('<ThemedImage\n  alt="x"\n  sources={{light: "/a.png"}}\n/>\n', ["jsx"]),
    ("---\ntitle: T\n...\n\nBody.\n", ["front_matter", "paragraph"]),
])
def test_leaf_constructs(text, kinds):
    assert [b.kind for b in parse_blocks(text)] == kinds


def test_a_code_directive_is_a_fence_with_its_language():
    (fence,) = parse_blocks("```{code-block} python\n:caption: x.py\n\nx = 1\n```\n")
    assert (fence.kind, fence.title) == ("fence", "python")


def test_front_matter_closed_by_dots_is_read():
    doc = make_document("page.md", "---\ntitle: Dotted\ntags: [a]\n...\n\n# Heading\n")
    assert doc.front_matter == {"title": "Dotted", "tags": ["a"]} and doc.title == "Dotted"


def test_an_unclosed_component_runs_to_the_end():
    text = "<Tabs>\n<TabItem value=\"a\">\n\nText.\n"
    block = first_container(text)
    assert block.title == "Tabs" and text[block.start : block.end] == text.rstrip()


def test_fences_inside_containers_are_atoms_at_any_depth():
    doc = fixture_doc("realworld/mkdocs_install.md")
    fences = [a for a in doc.atoms if a.kind == "fence"]
    top = [b for b in doc.blocks if b.kind == "fence"]
    assert len(fences) == 12 and len(top) == 1
    assert {a.title for a in fences} >= {"bash", "powershell", "console"}


def test_code_integrity_sees_a_cut_through_a_tabs_fence():
    doc = fixture_doc("realworld/mkdocs_install.md")
    cut = doc.text.index("irm https://example.org/tern/install.ps1")
    builder = ChunkBuilder(doc, make_config(), prefix=False, strategy="ast_merge")
    chunks = builder.build([Piece(0, cut), Piece(cut, len(doc.text.rstrip()))])
    assert check(doc, chunks, make_config()).split_blocks == 1
    assert not chunk_intact(chunks[0], {doc.id: doc})


@pytest.mark.parametrize("name", ["realworld/mkdocs_install.md",
                                  "realworld/docusaurus_setup.mdx",
                                  "realworld/myst_guide.md", "realworld/github_alerts.md"])
@pytest.mark.parametrize("size", [60, 150, 400])
def test_every_piece_inside_a_container_carries_its_labels(name, size):
    doc = fixture_doc(name)
    config = make_config(strategy="ast_breadcrumb", size=size)
    chunks = chunk_document(doc, config)
    inside = [c for c in chunks if label_kept(doc, c) is not None]
    assert all(label_kept(doc, c) for c in inside)
    assert inside or size == 400  # at 400 chars, the alerts lie whole in bigger chunks
    assert cut_labels(doc, chunks) == 0
    report = check(doc, chunks, config)
    assert report.wrong_breadcrumbs == report.split_blocks == report.lost_chars == 0


def test_a_tab_split_between_its_children_is_labelled_in_path_and_prefix():
    doc = fixture_doc("realworld/mkdocs_install.md")
    chunks = chunk_document(doc, make_config(strategy="ast_breadcrumb", size=150))
    windows = [c for c in chunks if "irm https://example.org/tern/install.ps1" in c.text
               or "execution policy" in c.text]
    assert len(windows) >= 2
    for chunk in windows:
        assert chunk.breadcrumb[:2] == ("Standalone installer", "Windows")
        assert "Standalone installer > Windows" in chunk.embed_text
    assert any(c.breadcrumb[2:] == ("Warning",) for c in windows)  # the note inside the tab
    nested = next(c for c in chunks if "sudo dnf install tern" in c.text)
    assert nested.breadcrumb[-2:] == ("Package names", "dnf")


def test_a_piece_spanning_two_tabs_is_labelled_by_neither():
    doc = fixture_doc("realworld/mkdocs_install.md")
    start = doc.text.index('=== "macOS and Linux"')
    end = doc.text.index("??? note")
    builder = ChunkBuilder(doc, make_config(), prefix=True, strategy="ast_breadcrumb")
    (chunk,) = builder.build([Piece(start, end - 2)])
    assert chunk.breadcrumb == ("Standalone installer",)


def test_a_cut_between_a_label_and_its_body_is_counted():
    doc = fixture_doc("realworld/mkdocs_install.md")
    cut = doc.text.index('=== "Windows"') + len('=== "Windows"')
    builder = ChunkBuilder(doc, make_config(), prefix=False, strategy="ast_merge")
    chunks = builder.build([Piece(0, cut), Piece(cut, len(doc.text.rstrip()))])
    assert cut_labels(doc, chunks) == 1


def test_the_recursive_baseline_loses_labels_and_the_metric_says_so():
    doc = fixture_doc("realworld/mkdocs_install.md")
    rct = chunk_document(doc, make_config(strategy="rct", size=150))
    ours = chunk_document(doc, make_config(strategy="ast_breadcrumb", size=150))
    docs = {doc.id: doc}
    assert label_share(ours, docs) == 1.0
    assert label_share(rct, docs) < 1.0
    stats = chunk_stats(rct, make_config(strategy="rct", size=150), docs=[doc])
    assert stats.label_kept == label_share(rct, docs)
    assert math.isnan(label_share(chunk_document(fixture_doc("long_fence.md"), make_config()),
                                  {"long_fence.md": fixture_doc("long_fence.md")}))


def test_the_panorama_reads_label_kept():
    doc = fixture_doc("realworld/mkdocs_install.md")
    frame = panorama(doc, 150, strategies=["ast_breadcrumb", "rct"]).set_index("strategy")
    assert frame.loc["ast_breadcrumb", "label_kept"] == 1.0
    assert frame.loc["rct", "label_kept"] < 1.0


def test_prose_in_a_note_is_prose_and_a_tab_holding_a_fence_is_code():
    text = ('# T\n\n!!! note\n    Only words here.\n\n=== "Linux"\n\n    ```bash\n    ls\n'
            '    ```\n')
    doc = make_document("k.md", text)
    builder = ChunkBuilder(doc, make_config(), prefix=False, strategy="ast_merge")
    note, tab = doc.blocks[1], doc.blocks[2]
    kinds = [c.kind for c in builder.build([Piece(note.start, note.end),
                                            Piece(tab.start, tab.end)])]
    assert kinds == ["prose", "code"]


@pytest.mark.parametrize("lead,body", [
    ("Run the following command:", "```bash\n" + "echo step\n" * 6 + "```"),
    ("The options are:", "\n".join(f"- option {n} does one thing" for n in range(5))),
    ("**Parameters:**", "| name | meaning |\n|---|---|\n| a | first |\n| b | second |"),
])
def test_a_one_line_lead_in_stays_with_what_it_introduces(lead, body):
    intro = "Some words before the lead-in, long enough to fill a chunk of their own here."
    text = f"# T\n\n{intro}\n\n{lead}\n\n{body}\n\nAfter.\n"
    doc = make_document("lead.md", text)
    size = len(lead) + len(body) + 10
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=size))
    holding = next(c for c in chunks if lead in c.text)
    assert body in holding.text
    assert not holding.text.rstrip().endswith(lead)


def test_a_lead_in_stays_with_a_fence_too_long_for_the_size():
    fence = "```bash\n" + "echo step\n" * 20 + "```"
    text = f"# T\n\nRun:\n\n{fence}\n"
    chunks = chunk_document(make_document("lead.md", text),
                            make_config(strategy="ast_merge", size=60))
    assert any(c.text.endswith(f"Run:\n\n{fence}") for c in chunks)


INTRO = "Some words before the lead-in, long enough to fill most of a chunk of their own."


@pytest.mark.parametrize("strategy", ["ast_merge", "ast_breadcrumb", "dominant_level"])
def test_a_lead_in_that_does_not_fit_opens_the_next_chunk(strategy):
    lead = "The options are:"
    first = ("- The first option is described at length here, in one sentence that goes on "
             "and on for a while")
    items = "\n".join([first, *(f"- option {n} does one thing" for n in range(4))])
    text = f"# T\n\n{INTRO}\n\n{lead}\n\n{items}\n"
    size = len(lead) + len(first) - 3  # the lead-in and the first item do not fit together
    assert len(f"# T\n\n{INTRO}\n\n{lead}") <= size  # but the lead-in fits after the intro
    chunks = chunk_document(make_document("lead.md", text),
                            make_config(strategy=strategy, size=size))
    assert not any(c.text.rstrip().endswith(lead) for c in chunks)
    holding = next(c for c in chunks if lead in c.text)
    assert holding.text.startswith(lead) and "- The first option" in holding.text
    assert max(c.n_chars for c in chunks) <= size


def test_a_lead_in_stays_with_the_container_it_introduces():
    group = ("::: code-group\n\n```sh [npm]\n" + "npm add -D vitepress\n" * 4 + "```\n\n"
             "```sh [pnpm]\n" + "pnpm add -D vitepress\n" * 4 + "```\n\n:::")
    text = f"# Install\n\n{INTRO}\n\nRun it in your terminal:\n\n{group}\n"
    chunks = chunk_document(make_document("vp.md", text),
                            make_config(strategy="ast_breadcrumb", size=120))
    holding = next(c for c in chunks if "in your terminal:" in c.text)
    assert "::: code-group\n\n```sh [npm]" in holding.text


def test_a_wrapped_lead_in_inside_a_list_item_stays_with_its_fence():
    fence = "   ```bash\n" + "   echo step\n" * 12 + "   ```"
    text = (f"# T\n\n1. Install the tool first, then check it.\n\n   Add these lines to the"
            f"\n   file of the project:\n\n{fence}\n")
    chunks = chunk_document(make_document("item.md", text),
                            make_config(strategy="ast_merge", size=80))
    holding = next(c for c in chunks if "file of the project:" in c.text)
    assert "echo step" in holding.text


@pytest.mark.parametrize("size", [200, 300])
def test_a_tab_s_first_paragraph_is_not_joined_past_the_size(size):
    paragraph = " ".join(["word"] * 34) + "."  # 171 chars, one line
    tab = '=== "Windows"\n\n' + "\n\n".join([f"    {paragraph}"] * 4)
    chunks = chunk_document(make_document("tab.md", f"# T\n\n{tab}\n"),
                            make_config(strategy="ast_breadcrumb", size=size))
    assert max(c.n_chars for c in chunks) <= size
    assert all("Windows" in (*c.breadcrumb, c.text) or '"Windows"' in c.text for c in chunks)


CODE_GROUP = ("::: code-group\n\n```sh [npm]\n" + "npm add -D vitepress\n" * 4 + "```\n\n"
              "```sh [pnpm]\n" + "pnpm add -D vitepress\n" * 4 + "```\n\n:::")


def test_a_code_group_s_fences_are_tabs_labelled_by_their_titles():
    group = first_container(CODE_GROUP)
    assert [(tab.kind, tab.dialect, tab.label) for tab in group.children] == [
        ("container", "vitepress", "npm"), ("container", "vitepress", "pnpm")]
    assert [tab.children[0].kind for tab in group.children] == ["fence", "fence"]
    doc = make_document("g.md", f"# Install\n\n{CODE_GROUP}\n")
    chunks = chunk_document(doc, make_config(strategy="ast_breadcrumb", size=110))
    pnpm = next(c for c in chunks if "pnpm add" in c.text)
    assert pnpm.breadcrumb[-1] == "pnpm" and "npm add" not in pnpm.text.replace("pnpm", "")
    report = check(doc, chunks, make_config(strategy="ast_breadcrumb", size=110))
    assert report.cut_labels == report.labels_lost == report.split_blocks == 0


VUE_PAGE = """# Counter

<script setup>
import { ref } from 'vue'
const count = ref(0)
</script>

Words about the counter, enough to make a chunk of prose of their own.

<div class="tip custom-block"><pre><code>{{ count }}</code></pre></div>

<VPTeamMembers size="small" :members />

More words about the counter and what it counts, again a chunk of prose.

<style module>
.button {
  color: red;
  padding: 2px 4px;
}
</style>
"""


def test_a_vitepress_page_s_code_and_markup_are_never_prose_nor_a_chunk_of_their_own():
    doc = make_document("v.md", VUE_PAGE)
    assert [(b.kind, b.content) for b in doc.blocks] == [
        ("heading", True), ("metadata", True), ("paragraph", True), ("html", False),
        ("jsx", False), ("paragraph", True), ("metadata", True)]
    assert not [b for b in doc.blocks if b.is_body and b.kind != "paragraph"]
    prose = [b for b in doc.blocks if b.kind == "paragraph"]
    for strategy in ("ast_merge", "ast_breadcrumb", "heading_flush", "paragraph"):
        for size in (40, 120):
            for chunk in chunk_document(doc, make_config(strategy=strategy, size=size)):
                assert any(b.start < chunk.end and chunk.start < b.end for b in prose), (
                    strategy, size, chunk.text)


def test_a_target_leads_the_heading_it_names():
    text = "# A\n\nWords of section A.\n\n(b-target)=\n## B\n\nWords of section B.\n"
    chunks = chunk_document(make_document("t.md", text), make_config(size=30))
    assert [c.text.splitlines()[0] for c in chunks] == ["# A", "(b-target)="]


def test_a_lead_in_wrapped_over_two_lines_stays_with_its_fence():
    lead = "Add the following lines to the configuration\nfile of the project:"
    fence = "```yaml\n" + "key: value\n" * 8 + "```"
    intro = "A paragraph before it, long enough to need a chunk of its own at this size."
    text = f"# T\n\n{intro}\n\n{lead}\n\n{fence}\n"
    chunks = chunk_document(make_document("w.md", text),
                            make_config(strategy="ast_merge", size=len(lead) + len(fence) + 4))
    assert any(c.text == f"{lead}\n\n{fence}" for c in chunks)


def test_an_admonition_goes_on_past_two_blank_lines_while_its_text_is_indented():
    text = ('??? example "Icon sets"\n\n    === "Octicons"\n\n        ```yaml\n        a: 1\n'
            '        ```\n\n\n    === "FontAwesome"\n\n        ```yaml\n        b: 2\n        ```\n'
            '\nAfter.\n')
    note, after = parse_blocks(text)
    assert [(b.kind, b.label) for b in note.children] == [("container", "Octicons"),
                                                          ("container", "FontAwesome")]
    assert after.kind == "paragraph" and text[after.start : after.end] == "After."


def test_an_admonition_with_more_classes_and_a_title():
    block = first_container('!!! info inline end "Lorem ipsum"\n\n    Body.\n')
    assert (block.dialect, block.label, block.title) == ("mkdocs", "Lorem ipsum",
                                                         'info inline end "Lorem ipsum"')
