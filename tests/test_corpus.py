"""Loading a folder: decoding, skipped files, front matter, titles, symlinks."""

from __future__ import annotations

import os

import pytest
import yaml

from chunkproof import CorpusError, load_corpus


def write(path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", b"\xef\xbb\xbf# Alpha\n\nBody.\n")
    write(root / "sub" / "b.markdown", b"Setext title\n============\n\ntext\n")
    write(root / "notes.txt", b"SAFETY NOTICES\nKeep dry.\n")
    write(root / "bad.md", b"# Bad\n\n\xff\xfe broken\n")
    write(root / "binary.md", b"# Bin\x00ary\n")
    write(root / "image.png", b"\x89PNG")
    write(root / "crlf.md", b"# Windows\r\n\r\nLine one.\r\nLine two.\r\n")
    write(root / "fm.md", b"---\ntitle: From front matter\nowner: ops\n---\n# Heading one\n\nx\n")
    return root


def test_loads_supported_files_and_reports_the_rest(folder):
    corpus = load_corpus(folder)
    assert sorted(d.id for d in corpus) == ["a.md", "crlf.md", "fm.md", "notes.txt",
                                            "sub/b.markdown"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert set(reasons) == {"bad.md", "binary.md"}
    assert "not valid UTF-8" in reasons["bad.md"]
    assert "NUL" in reasons["binary.md"]
    report = {row["path"]: row["status"] for row in corpus.report()}
    assert report["bad.md"] == "skipped" and report["a.md"] == "loaded"


@pytest.mark.parametrize("name", ["index.rst", "page.html", "old.HTM", "book.adoc"])
def test_other_documentation_formats_are_listed_as_skipped(folder, name):
    write(folder / "more" / name, b"Title\n=====\n\ntext\n")
    corpus = load_corpus(folder)
    assert f"more/{name}" not in [d.id for d in corpus]
    assert {s.path: s.reason for s in corpus.skipped}[f"more/{name}"] == "unsupported format"


def test_bom_dropped_newlines_kept(folder):
    corpus = load_corpus(folder)
    assert corpus.get("a.md").text == "# Alpha\n\nBody.\n"
    assert corpus.get("crlf.md").text == "# Windows\r\n\r\nLine one.\r\nLine two.\r\n"


def test_titles_front_matter_then_h1_then_stem(folder):
    corpus = load_corpus(folder)
    fm = corpus.get("fm.md")
    assert fm.title == "From front matter"
    assert fm.front_matter == {"title": "From front matter", "owner": "ops"}
    assert fm.text.startswith("---\ntitle:")  # front matter stays in the text
    assert fm.blocks[0].kind == "front_matter"
    assert corpus.get("a.md").title == "Alpha"
    assert corpus.get("sub/b.markdown").title == "Setext title"
    assert corpus.get("notes.txt").title == "notes"


def test_structure_source(folder):
    corpus = load_corpus(folder)
    assert corpus.get("a.md").structure_source == "explicit"
    assert corpus.get("notes.txt").structure_source == "inferred"


def test_symlink_leaving_root_is_not_followed(tmp_path, folder):
    outside = tmp_path / "outside"
    write(outside / "secret.md", b"# Secret\n")
    os.symlink(outside, folder / "linked")
    os.symlink(outside / "secret.md", folder / "secret-link.md")
    ids = {d.id for d in load_corpus(folder)}
    assert not any("secret" in i for i in ids)


def test_symlink_loop_terminates(folder):
    os.symlink(folder, folder / "sub" / "loop")
    ids = [d.id for d in load_corpus(folder)]
    assert len(ids) == len(set(ids))


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "nope")


def test_fingerprint_changes_with_content(folder):
    before = load_corpus(folder).fingerprint
    (folder / "a.md").write_text("# Alpha\n\nChanged.\n")
    assert load_corpus(folder).fingerprint != before


def test_symlinked_folder_inside_the_root_is_read_once_under_its_own_name(folder):
    os.symlink(folder / "sub", folder / "a-link")  # sorts before "sub": still read as sub/
    os.symlink(folder / "a.md", folder / "alias.md")
    ids = [d.id for d in load_corpus(folder)]
    assert "sub/b.markdown" in ids and not any(i.startswith("a-link/") for i in ids)
    assert "alias.md" not in ids and ids.count("a.md") == 1


def test_symlink_loop_reads_each_file_once(folder):
    os.symlink(".", folder / "loop")
    os.symlink("..", folder / "sub" / "up")
    ids = [d.id for d in load_corpus(folder)]
    assert sorted(ids) == ["a.md", "crlf.md", "fm.md", "notes.txt", "sub/b.markdown"]


def test_a_fifo_is_skipped_not_read(folder):
    os.mkfifo(folder / "pipe.md")
    corpus = load_corpus(folder)  # reading the FIFO would block forever
    assert {s.path: s.reason for s in corpus.skipped}["pipe.md"] == "not a regular file"


def test_a_file_over_the_size_limit_is_skipped_unread(folder):
    # a list nested 600 deep: some 360 KB, the shape that makes a parser take seconds per MB
    write(folder / "huge.md", "".join("  " * i + "- x\n" for i in range(600)).encode())
    corpus = load_corpus(folder, max_bytes=100_000)
    reason = {s.path: s.reason for s in corpus.skipped}["huge.md"]
    assert reason == "larger than the 98 KiB limit (353 KiB): not read", reason
    assert len(corpus) == 5  # the others load
    assert "huge.md" in [d.id for d in load_corpus(folder)]  # under the default limit


def test_front_matter_nested_too_deep_skips_that_file_alone(folder):
    deep = "---\n" + "".join("  " * i + f"k{i}:\n" for i in range(500)) + "---\n# Deep\n"
    write(folder / "deep.md", deep.encode())
    corpus = load_corpus(folder)
    reason = {s.path: s.reason for s in corpus.skipped}["deep.md"]
    assert reason == ("could not be loaded: FrontMatterTooDeepError: front matter nested more "
                      "than 100 levels deep")
    assert len(corpus) == 5


@pytest.mark.parametrize("levels", [1, 100])
def test_front_matter_up_to_the_depth_limit_loads_whole(folder, levels):
    nested = "".join("  " * i + f"k{i}:\n" for i in range(levels - 1))
    nested += "  " * (levels - 1) + f"k{levels - 1}: leaf\n"
    write(folder / "deep.md", f"---\ntitle: Deep page\n{nested}---\n# Body\n".encode())
    doc = load_corpus(folder).get("deep.md")
    value = doc.front_matter
    for i in range(levels):
        value = value[f"k{i}"]
    assert value == "leaf" and doc.title == "Deep page"


def test_front_matter_is_read_as_by_the_safe_loader(folder):
    """libyaml's loader gives the values PyYAML's own safe loader gives, and no other tags."""
    text = "title: Tokens\ndate: 2024-05-01\ntags: [a, b]\nweight: 1.5\ndraft: no\n"
    write(folder / "p.md", f"---\n{text}---\n# P\n".encode())
    assert load_corpus(folder).get("p.md").front_matter == yaml.safe_load(text)
    write(folder / "tagged.md", b"---\nx: !!python/object:os.system ls\n---\n# Bad\n")
    assert load_corpus(folder).get("tagged.md").front_matter == {}  # a tag no safe loader takes


def test_any_exception_while_loading_one_file_skips_that_file(folder, monkeypatch):
    from chunkproof.document import corpus as corpus_module

    real = corpus_module.make_document

    def fragile(doc_id, text, **kwargs):
        if doc_id == "crlf.md":
            raise ValueError("parser gave up")
        return real(doc_id, text, **kwargs)

    monkeypatch.setattr(corpus_module, "make_document", fragile)
    corpus = load_corpus(folder)
    assert "crlf.md" not in [d.id for d in corpus] and len(corpus) == 4
    assert {s.path: s.reason for s in corpus.skipped}["crlf.md"] == (
        "could not be loaded: ValueError: parser gave up")


def test_the_hostile_corpus_loads_what_it_can_and_names_the_rest(tmp_path):
    from hostile import LOADED, write_hostile_corpus

    made = write_hostile_corpus(tmp_path / "docs")
    corpus = load_corpus(tmp_path / "docs")  # a FIFO or a link loop would hang or repeat
    assert len(corpus) == LOADED
    assert made["named"].name in [d.id for d in corpus]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert set(reasons) == {"deep_front_matter.md", "binary.md", "latin1.md", "pipe.md"}
    assert reasons["pipe.md"] == "not a regular file"
    assert all(reason and "\n" not in reason for reason in reasons.values())


def test_an_mdx_page_is_read_as_markdown(folder):
    write(folder / "docs" / "tabs.mdx",
          b"import Tabs from '@theme/Tabs';\n\n# Setup\n\n<Tabs>\n<TabItem value=\"npm\">\n\n"
          b"```sh\nnpm i\n```\n\n</TabItem>\n</Tabs>\n")
    doc = load_corpus(folder).get("docs/tabs.mdx")
    assert [b.kind for b in doc.blocks] == ["metadata", "heading", "container"]
    assert doc.title == "Setup" and [a.kind for a in doc.atoms] == ["fence"]


def test_the_file_size_limit_is_an_option_and_the_profile_reports_it(tmp_path, monkeypatch,
                                                                     capsys):
    from chunkproof.chunking.section_lengths import sections_table
    from chunkproof.cli import main
    from chunkproof.notebooks.corpus_profile import profile_numbers

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "big.md").write_text("# Big\n\n" + "word " * 60_000)  # ~293 KiB
    (tmp_path / "docs" / "small.md").write_text("# Small\n\nA short page.\n")
    monkeypatch.setenv("CHUNKPROOF_MAX_FILE_MIB", "0.25")
    corpus = load_corpus(tmp_path / "docs")
    assert [s.path for s in corpus.skipped] == ["big.md"]
    assert corpus.max_file_bytes == 2**18
    assert profile_numbers(corpus, sections_table(corpus))["max_file_bytes"] == 2**18
    monkeypatch.delenv("CHUNKPROOF_MAX_FILE_MIB")
    assert not load_corpus(tmp_path / "docs").skipped  # 8 MiB by default
    out = tmp_path / "c.jsonl"
    assert main(["chunk", "--corpus", str(tmp_path / "docs"), "--strategy", "rct",
                 "--max-file-mib", "0.1", "--out", str(out)]) == 0
    assert "skipped big.md: larger than the 102 KiB limit" in capsys.readouterr().err
    monkeypatch.setenv("CHUNKPROOF_MAX_FILE_MIB", "lots")
    assert main(["summary", "--corpus", str(tmp_path / "docs")]) == 2
    assert capsys.readouterr().err.startswith(
        "chunkproof: error: CHUNKPROOF_MAX_FILE_MIB: expected")
    assert main(["summary", "--max-file-mib", "-1", "--corpus", str(tmp_path / "docs")]) == 2
    assert "--max-file-mib: expected a number of MiB > 0" in capsys.readouterr().err
