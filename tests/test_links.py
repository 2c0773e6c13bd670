"""Links into the rendered page: each chunk's anchor (its section's heading, by the config's slug
rule) and its href (the config's url_template), in the records and through the command line."""

from __future__ import annotations

import json

import pytest

from chunkproof import ConfigError, chunk_document, load_config, make_config, make_document
from chunkproof.chunking.config import save_config
from chunkproof.cli import main
from chunkproof.document.links import link_scheme, page_fields, render_href

SITE = "https://docs.example.com/{route}#{anchor}"
PAGE = ("# Install\n\nintro\n\n## With pip\n\nrun pip\n\n### Options {#pip-options}\n\nflags\n\n"
        "## With pip\n\nagain\n")


@pytest.mark.parametrize("doc_id,fields", [
    ("guide/install.md", {"path": "guide/install.md", "path_without_ext": "guide/install",
                          "route": "guide/install/", "dir": "guide", "stem": "install"}),
    ("guide/index.md", {"path": "guide/index.md", "path_without_ext": "guide/index",
                        "route": "guide/", "dir": "guide", "stem": "index"}),
    ("README.md", {"path": "README.md", "path_without_ext": "README", "route": "",
                   "dir": "", "stem": "README"}),
    ("notes.txt", {"path": "notes.txt", "path_without_ext": "notes", "route": "notes/",
                   "dir": "", "stem": "notes"}),
])
def test_page_fields(doc_id, fields):
    assert page_fields(doc_id) == fields


def test_an_empty_anchor_links_the_page_itself():
    fields = page_fields("guide/install.md")
    assert render_href(SITE, fields, "") == "https://docs.example.com/guide/install/"
    assert render_href(SITE, fields, "with-pip") == (
        "https://docs.example.com/guide/install/#with-pip")


@pytest.mark.parametrize("rule,anchors", [
    ("github", ["install", "with-pip", "options-pip-options", "with-pip-1"]),
    ("mkdocs", ["install", "with-pip", "pip-options", "with-pip_1"]),
    ("vitepress", ["install", "with-pip", "pip-options", "with-pip-1"]),
])
def test_each_chunk_links_to_its_sections_heading(rule, anchors):
    doc = make_document("guide/install.md", PAGE)
    config = make_config(strategy="ast_merge", size=20, slug_rule=rule, url_template=SITE)
    chunks = chunk_document(doc, config)
    by_text = {c.text.split("\n")[-1]: c for c in chunks}
    found = [by_text[word].anchor for word in ("intro", "run pip", "flags", "again")]
    assert found == anchors  # "intro" lies in the title's section: its heading's anchor
    assert all(c.href == render_href(SITE, page_fields(doc.id), c.anchor) for c in chunks)


def test_a_chunk_before_any_heading_links_the_page():
    doc = make_document("a/b.md", "Opening words.\n\n## Later\n\ntext\n")
    first = chunk_document(doc, make_config(strategy="paragraph", url_template=SITE))[0]
    assert (first.anchor, first.href) == ("", "https://docs.example.com/a/b/")


def test_a_heading_without_an_id_links_its_nearest_linked_parent():
    # An HTML heading gets no id from a generator: its chunks link the heading above it.
    text = "## Setup\n\nfirst\n\n<h3>Raw html</h3>\n\nsecond\n"
    doc = make_document("s.md", text)
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=10))
    second = next(c for c in chunks if "second" in c.text)
    assert second.breadcrumb[-1] == "Raw html"
    assert second.anchor == "setup"
    assert second.href == ""  # no url_template: no href


def test_links_do_not_change_the_config_id_until_set():
    plain = make_config(strategy="ast_merge")
    assert plain.config_id == make_config(strategy="ast_merge", slug_rule="github").config_id
    assert plain.config_id != make_config(strategy="ast_merge", url_template=SITE).config_id
    assert plain.config_id != make_config(strategy="ast_merge", slug_rule="mkdocs").config_id


@pytest.mark.parametrize("template,message", [
    ("https://x/{page}#{anchor}", r"url_template: unknown field \{page\}.*route"),
    ("https://x/{route}#{anchor!r}", r"url_template: .*conversion"),
    ("https://x/{route", r"url_template: .*braces"),
    ("https://x/{0}", r"url_template: unknown field \{0\}"),
    ("javascript:alert(1)//{route}", r"url_template: makes javascript: links.*http or https"),
    (" JavaScript:{path}", r"url_template: makes javascript: links"),
    ("java\tscript:{path}", r"url_template: makes javascript: links"),
    ("data:text/html,{route}", r"url_template: makes data: links"),
    ("file:///srv/site/{path}", r"url_template: makes file: links"),
    ("{dir}javascript:{path}", r"url_template: makes \w*javascript: links"),
])
def test_a_bad_template_is_refused_naming_the_fields(template, message):
    with pytest.raises(ConfigError, match=message):
        make_config(url_template=template)


@pytest.mark.parametrize("template", [SITE, "http://x/{path}", "/{route}#{anchor}",
                                      "../{path_without_ext}.html", "#{anchor}", "{route}"])
def test_http_relative_and_fragment_templates_are_taken(template):
    assert make_config(url_template=template).url_template == template


@pytest.mark.parametrize("doc_id", ["javascript:alert(1).md", "data:text/html,x/a.md",
                                    "JavaScript:x/index.md"])
def test_a_page_named_like_a_scheme_links_as_a_path(doc_id):
    doc = make_document(doc_id, PAGE)
    for template in ("{route}#{anchor}", "{path}", "{dir}/{stem}"):
        chunks = chunk_document(doc, make_config(strategy="ast_merge", url_template=template))
        assert chunks and all(c.href and link_scheme(c.href) == "" for c in chunks)


@pytest.mark.parametrize("href,drawn", [
    ("https://docs.example.com/guide/#install", True), ("guide/install/#x", True),
    ("#install", True), ("javascript:alert(1)", False), (" data:text/html,<b>x</b>", False),
    ("vbscript:x", False), ("java\nscript:alert(1)", False), ("", False)])
def test_the_explorer_draws_only_http_relative_and_fragment_links(href, drawn):
    from types import SimpleNamespace

    from chunkproof.viz.explorer import page_link

    shown = page_link(SimpleNamespace(href=href), "Install")
    assert ("<a " in shown) is drawn and ("script" not in shown or not drawn)


def test_an_unknown_slug_rule_is_refused():
    with pytest.raises(ConfigError, match="slug_rule"):
        make_config(slug_rule="hugo")


@pytest.mark.parametrize("template,named", [("https://x/{page}", "{page}"),
                                            ("javascript:alert(1)//{path}", "javascript:")])
def test_the_chunk_command_refuses_a_bad_template_in_one_line(tmp_path, capsys, template,
                                                              named):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\ntext\n")
    code = main(["chunk", "--corpus", str(tmp_path / "docs"), "--strategy", "ast_merge",
                 "--set", f"url_template={template}", "--out", str(tmp_path / "c.jsonl")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and named in err
    assert not (tmp_path / "c.jsonl").exists()


def test_a_chosen_config_carries_the_links_to_the_chunk_command(tmp_path):
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "install.md").write_text(PAGE)
    chosen = save_config(make_config(strategy="ast_merge", size=20, slug_rule="mkdocs",
                                     url_template=SITE), tmp_path / "chosen_config.yaml")
    assert load_config(chosen).url_template == SITE
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(docs), "--config", str(chosen),
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {"section_id", "parent_section_id", "anchor", "href"} <= set(rows[0])
    assert "https://docs.example.com/guide/install/#with-pip_1" in {r["href"] for r in rows}


def test_the_links_of_a_chosen_config_can_be_set_at_chunk_time(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Part\n\ntext\n")
    chosen = save_config(make_config(strategy="ast_merge"), tmp_path / "chosen.yaml")
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(docs), "--config", str(chosen), "--set",
                 "url_template=https://site/{path_without_ext}.html#{anchor}",
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[-1]["href"] == "https://site/a.html#part"
    assert main(["chunk", "--corpus", str(docs), "--config", str(chosen), "--set",
                 "size=20", "--out", str(out)]) == 2


def test_the_report_refuses_a_bad_template_before_running(tmp_path, capsys):
    code = main(["report", "--corpus", str(tmp_path), "--out", str(tmp_path / "rep"),
                 "--url-template", "https://x/{page}#{anchor}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "{page}" in err
    assert not (tmp_path / "rep").exists()
