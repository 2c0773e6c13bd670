"""Parses and BM25 tokenisations kept across runs by content: a page is parsed again only when
its text, chunkproof's code or the parser changed, in this process or another. What is kept is
data: a value is read back only when its checksum holds, a damaged file is moved aside once
and made anew, and the least recently used values go past the size bound."""

from __future__ import annotations

import json
import os
import pickle
import random
import sqlite3
import subprocess
import sys
import time
import warnings
import zlib
from pathlib import Path

import pytest

from chunkproof.chunking.build import chunk_corpus
from chunkproof.chunking.config import make_config
from chunkproof.document import corpus as corpus_module
from chunkproof.document.corpus import load_corpus
from chunkproof.errors import ConfigError
from chunkproof.evaluation.retrieval import retrieve
from chunkproof.util import content_cache, json_bytes
from chunkproof.util.cache import CACHE_VARIABLE
from chunkproof.util.json_bytes import Lines
from conftest import ROOT, SAMPLE

PAGES = {"a.md": "# Alpha\n\nThe alpha page.\n\n```python\nx = 1\n```\n",
         "b.md": "# Beta\n\nThe beta page, with a [link][ref].\n\n[ref]: https://example.org\n",
         "c/d.md": "# Delta\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, str(folder))
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "1")
    anew()
    return folder


def anew() -> None:
    """The process's caches as a new process finds them: closed, none failed."""
    for store in (corpus_module.PARSES, retrieve.TOKENS):
        store.close()
        store.failed = ""


@pytest.fixture
def pages(tmp_path):
    root = tmp_path / "docs"
    for name, text in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def parses(monkeypatch):
    """The texts markdown-it parses from now on."""
    seen: list[str] = []
    real = corpus_module.parse_text

    def counted(text, *args):
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(corpus_module, "parse_text", counted)
    return seen


def shape(corpus) -> list:
    return [(d.id, d.title, d.blocks, d.atoms, d.references, list(d.lines.starts))
            for d in corpus]


def test_a_second_load_parses_nothing_and_an_edit_parses_one_page(cache, pages, parses):
    first = load_corpus(pages)
    assert len(parses) == 3
    again = load_corpus(pages)
    assert len(parses) == 3 and shape(again) == shape(first)
    (pages / "b.md").write_text(PAGES["b.md"] + "\nOne more line.\n")
    edited = load_corpus(pages)
    assert len(parses) == 4 and parses[-1].endswith("One more line.\n")
    assert edited.get("b.md").lines.text is edited.get("b.md").text
    assert content_cache.file_of(cache, "parsed").is_file()


def test_another_process_reads_the_parses_of_this_one(cache, pages, parses):
    load_corpus(pages)
    code = ("import json\nfrom chunkproof.document import corpus as c\nseen = []\n"
            "real = c.parse_text\n"
            "c.parse_text = lambda text, *a: seen.append(text) or real(text, *a)\n"
            f"c.load_corpus({str(pages)!r})\nprint(json.dumps(len(seen)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=os.environ.copy()).stdout
    assert json.loads(out.strip().splitlines()[-1]) == 0


def test_other_code_or_another_reading_parses_again(cache, pages, parses, monkeypatch):
    load_corpus(pages)
    load_corpus(pages, infer_headings=True)  # headings inferred: another parse
    assert len(parses) == 6
    monkeypatch.setattr(corpus_module, "code_version", lambda: "other code")
    load_corpus(pages)
    assert len(parses) == 9


def test_switched_off_nothing_is_kept(cache, pages, parses, monkeypatch):
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "0")
    load_corpus(pages)
    load_corpus(pages)
    assert len(parses) == 6 and not cache.exists()


def test_a_value_that_cannot_be_read_back_is_made_again(cache, pages, parses):
    load_corpus(pages)
    store = corpus_module.PARSES
    with store._lock:
        db = store._connect()
        with db:
            db.execute("UPDATE entries SET value = ?", (b"not a pickle",))
    load_corpus(pages)
    assert len(parses) == 6


def test_a_cache_folder_that_cannot_be_written_is_reported_and_skipped(tmp_path, pages,
                                                                      parses, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocked / "cache"))
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "1")
    store = content_cache.ContentCache("parsed")
    monkeypatch.setattr(corpus_module, "PARSES", store)
    with pytest.warns(content_cache.CacheWarning, match="cannot be used"):
        corpus = load_corpus(pages)
    assert len(corpus) == 3 and len(parses) == 3 and store.failed


def test_bm25_tokens_are_made_once_per_text(cache, pages, monkeypatch):
    made: list[str] = []
    real = retrieve._tokenize

    def counted(texts):
        made.extend(texts)
        return real(texts)

    monkeypatch.setattr(retrieve, "_tokenize", counted)
    from chunkproof.chunking.build import chunk_document
    from chunkproof.chunking.config import make_config

    docs = list(load_corpus(pages))
    chunks = [c for d in docs for c in chunk_document(d, make_config(strategy="ast_breadcrumb",
                                                                     size=40))]
    queries = ["alpha page", "beta link", "delta table"]
    first = retrieve.BM25Retriever()
    first.index(chunks)
    ranked = first.search(queries, 3)
    assert len(made) == len({c.embed_text for c in chunks}) + len(queries)
    second = retrieve.BM25Retriever()
    second.index(chunks)
    assert second.search(queries, 3) == ranked
    assert len(made) == len({c.embed_text for c in chunks}) + len(queries)  # none again
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "0")
    third = retrieve.BM25Retriever()
    third.index(chunks)
    assert third.search(queries, 3) == ranked


def rows_of(store) -> list[tuple]:
    """(key, checksum, value) of every row ``store``'s file holds."""
    store.flush()
    with store._lock:
        return store._connect().execute("SELECT key, checksum, value FROM entries").fetchall()


def set_rows(store, rows) -> None:
    """``rows`` of (key, checksum, value) written over the values ``store``'s file holds."""
    with store._lock:
        db = store._connect()
        with db:
            db.executemany("UPDATE entries SET checksum = ?, value = ? WHERE key = ?",
                           [(check, value, key) for key, check, value in rows])


class Payload:
    """A pickle that, unpickled, writes a file: what a cache holding code would run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def chunk_texts(folder) -> list[tuple]:
    corpus = load_corpus(folder)
    return [(c.doc_id, c.start, c.end, c.breadcrumb, c.embed_text)
            for c in chunk_corpus(corpus, make_config(strategy="ast_breadcrumb", size=300))]


def test_a_pickle_in_the_cache_never_runs(cache, pages, tmp_path):
    expected = chunk_texts(pages)
    store = corpus_module.PARSES
    marker = tmp_path / "ran"
    blob = pickle.dumps(Payload(marker))
    # the payload under every key, with checksums that hold: what a writer of the folder can do
    set_rows(store, [(key, content_cache.checksum(key, blob), blob)
                     for key, _, _ in rows_of(store)])
    assert chunk_texts(pages) == expected
    assert not marker.exists()


def test_a_file_of_the_pickled_layout_is_never_opened(cache, pages, tmp_path):
    marker = tmp_path / "ran"
    cache.mkdir()
    old = sqlite3.connect(cache / "parsed.sqlite")
    old.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
    keys = [corpus_module.parse_key(text, True, False) for text in PAGES.values()]
    old.executemany("INSERT INTO entries VALUES (?, ?)",
                    [(key, pickle.dumps(Payload(marker))) for key in keys])
    old.commit()
    old.close()
    load_corpus(pages)
    assert not marker.exists()


def test_a_value_of_another_shape_is_dropped_though_its_checksum_holds(cache, pages, parses):
    load_corpus(pages)
    store = corpus_module.PARSES
    forged = {}
    for text in PAGES.values():  # the page's size, and a heading ending past it
        head = {"size": len(text), "references": {}, "nesting_limit": [], "warnings": []}
        forged[corpus_module.parse_key(text, True, False)] = content_cache.encode(
            Lines([head, [["paragraph", 0, 1]], [["heading", 0, len(text) + 1]]]))
    set_rows(store, [(key, content_cache.checksum(key, blob), blob)
                     for key, blob in forged.items()])
    again = load_corpus(pages)
    assert len(parses) == 6 and [d.title for d in again] == ["Alpha", "Beta", "Delta"]
    assert all(value != forged[key] for key, _, value in rows_of(store))  # made again


def flip_bits(path, count: int, seed: int, *, start: int) -> None:
    data = bytearray(path.read_bytes())
    chance = random.Random(seed)
    for _ in range(count):
        at = chance.randrange(start, len(data))
        data[at] ^= 1 << chance.randrange(8)
    path.write_bytes(bytes(data))


def run_recording(folder) -> tuple[list[tuple], list[str]]:
    """The chunks of a run as a new process makes them, and the CacheWarnings it gave."""
    anew()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        chunks = chunk_texts(folder)
    return chunks, [str(w.message) for w in seen if w.category is content_cache.CacheWarning]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_flipped_bits_in_the_file_change_no_chunk(cache, seed, monkeypatch):
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "0")
    expected = chunk_texts(SAMPLE)
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "1")
    assert chunk_texts(SAMPLE) == expected
    corpus_module.PARSES.close()
    flip_bits(content_cache.file_of(cache, "parsed"), 300, seed, start=100)
    chunks, warned = run_recording(SAMPLE)
    assert chunks == expected and len(warned) <= 1  # moved aside once, if sqlite noticed
    chunks, warned = run_recording(SAMPLE)
    assert chunks == expected and warned == []


@pytest.mark.parametrize("damage", ["header", "truncated"])
def test_a_damaged_file_is_moved_aside_once_and_made_anew(cache, pages, parses, damage):
    load_corpus(pages)
    corpus_module.PARSES.close()
    path = content_cache.file_of(cache, "parsed")
    data = path.read_bytes()
    path.write_bytes(b"\0" * 100 + data[100:] if damage == "header" else data[: len(data) // 3])
    with pytest.warns(content_cache.CacheWarning, match="moved aside to .*bad-"):
        load_corpus(pages)
    assert [p.name for p in cache.glob("parsed.v*.sqlite.bad-*")]
    seen = len(parses)
    anew()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_corpus(pages)  # no warning: the file was made anew
    assert len(parses) == seen  # and read from


def test_past_its_bound_the_least_recently_used_values_go(cache, monkeypatch):
    store = content_cache.ContentCache("bounded")
    monkeypatch.setenv(content_cache.BOUND_VARIABLE, str(40_000 / 2**20))
    old = int(time.time()) - 10 * content_cache.TOUCH_SECONDS
    store.put_many({f"k{n}": "x" * 2_000 for n in range(15)})  # 30 kB: under the bound
    store.flush()
    with store._lock:
        store._connect().execute("UPDATE entries SET used = ?", (old,))
    store.get("k0")  # read: marked as used now
    store.put_many({f"n{n}": "y" * 2_000 for n in range(15)})
    store.flush()
    with store._lock:
        db = store._connect()
        kept = {key for (key,) in db.execute("SELECT key FROM entries")}
        assert content_cache.stored_bytes(db) <= 40_000
    assert "k0" in kept and {f"n{n}" for n in range(15)} <= kept
    assert "k1" not in kept


def test_a_bound_that_is_no_size_is_one_line(monkeypatch):
    monkeypatch.setenv(content_cache.BOUND_VARIABLE, "lots")
    with pytest.raises(ConfigError, match="CHUNKPROOF_CONTENT_CACHE_MIB"):
        content_cache.bound_bytes()


def test_a_flipped_bit_in_a_value_is_caught_by_its_checksum(cache, pages, parses):
    expected = chunk_texts(pages)
    store = corpus_module.PARSES
    flipped = []
    for key, check, value in rows_of(store):
        data = bytearray(value)
        at = next(i for i, byte in enumerate(data) if 97 <= byte <= 122)  # a letter
        data[at] ^= 0x20  # its case: one bit
        flipped.append((key, check, bytes(data)))
    set_rows(store, flipped)
    anew()
    assert chunk_texts(pages) == expected and len(parses) == 6  # each page parsed again


def test_cache_info_and_clear(cache, pages, capsys):
    from chunkproof import cli

    load_corpus(pages)
    corpus_module.PARSES.close()
    (cache / "parsed.sqlite").write_bytes(b"pickled values of an older layout")
    (cache / "parsed.v2.sqlite").write_bytes(b"the value in a middle column")
    (cache / "parsed.v3.sqlite").write_bytes(b"a parse one JSON value, read whole")
    (cache / "parsed.v4.sqlite.bad-20260101-000000").write_bytes(b"moved aside")
    (cache / "embeddings").mkdir()
    (cache / "embeddings" / "model.sqlite").write_bytes(b"vectors")
    (cache / "notes.txt").write_text("not chunkproof's")
    assert cli.main(["cache", "info"]) == 0
    info = capsys.readouterr().out
    assert f"cache folder {cache}" in info and "parsed: parsed.v4.sqlite: 3 values" in info
    assert "3 file(s) of an older layout, never read" in info
    assert all(f"parsed{v}.sqlite" in info for v in ("", ".v2", ".v3"))
    assert "moved aside" in info and "embeddings/" in info and "1 file(s)" in info
    assert cli.main(["cache", "clear"]) == 0
    removed = capsys.readouterr().out
    assert all(name in removed for name in ("parsed.v4.sqlite\n", "parsed.v3.sqlite\n",
                                            "parsed.v2.sqlite\n",
                                            "parsed.sqlite\n", ".bad-"))
    assert sorted(p.name for p in cache.iterdir()) == ["embeddings", "notes.txt"]
    assert cli.main(["cache", "clear", "--all"]) == 0
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]
    anew()
    load_corpus(pages)  # made anew
    assert content_cache.file_of(cache, "parsed").is_file()


def in_pieces(blob: bytes, size: int) -> list[bytes]:
    return [blob[start : start + size] for start in range(0, len(blob), size)]


def test_a_value_in_lines_is_their_json_compressed_when_long_and_reads_back_in_any_pieces():
    head = {"size": 2501, "references": {"ref": "é\nnot a line"}}
    groups = [[["paragraph", n, n + 1] for n in range(start, min(start + 1000, 2500))]
              for start in range(0, 2500, 1000)]
    stored = content_cache.encode(Lines(iter([head, *groups])))
    dumps = [json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in (head, *groups)]
    expected = "\n".join(dumps).encode()
    assert len(stored) < len(expected) / 4 and zlib.decompress(stored) == expected
    for size in (1, 7, 4096, len(stored)):  # a piece's end anywhere: within a line, a char
        assert list(json_bytes.values(in_pieces(stored, size))) == [head, *groups]
    short = content_cache.encode(Lines([[1], {"a": "b"}, "c"]))
    assert short == b'[1]\n{"a":"b"}\n"c"'
    assert list(json_bytes.values(in_pieces(short, 2))) == [[1], {"a": "b"}, "c"]
    assert json_bytes.decode(content_cache.encode(["x" * 5000])) == ["x" * 5000]


def test_a_value_another_process_replaces_while_it_is_read_is_read_as_listed(cache, pages,
                                                                            monkeypatch):
    # pieces of 64 bytes: values read through sqlite's blob handle after they are listed
    monkeypatch.setattr(content_cache, "PIECE_BYTES", 64)
    first = shape(load_corpus(pages))
    store = corpus_module.PARSES
    rows = rows_of(store)
    real = content_cache._read

    def replaced_meanwhile(db, key, *args):
        other = sqlite3.connect(content_cache.file_of(cache, "parsed"), timeout=30)
        with other:  # the row made anew (another rowid), as another process's put does
            other.execute("INSERT OR REPLACE INTO entries SELECT * FROM entries WHERE key = ?",
                          (key,))
        other.close()
        return real(db, key, *args)

    monkeypatch.setattr(content_cache, "_read", replaced_meanwhile)
    anew()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert shape(load_corpus(pages)) == first
    assert sorted(rows_of(store)) == sorted(rows)


@pytest.mark.parametrize("damage", ["cut", "followed", "not json", "two values"])
def test_a_value_that_is_no_stored_value_is_a_value_error(damage):
    stored = content_cache.encode(Lines([{"a": 1}, list(range(3000))]))
    blob = {"cut": stored[:-9], "followed": stored + b"x", "not json": b"[1]\n[2",
            "two values": b"[1]\n[2]"}[damage]
    with pytest.raises(ValueError):
        if damage == "two values":
            json_bytes.decode(blob)
        list(json_bytes.values(in_pieces(blob, 100)))


@pytest.mark.parametrize("damage", ["bit", "cut", "checksum", "cut, its checksum made"])
def test_a_damaged_value_read_in_pieces_is_dropped_and_made_again(cache, tmp_path, parses,
                                                                  monkeypatch, damage):
    # pieces of 64 bytes: every value here is read through sqlite's blob handle, in pieces
    monkeypatch.setattr(content_cache, "PIECE_BYTES", 64)
    text = "".join(f"# Part {n}\n\nParagraph {n}.\n\n- item\n" for n in range(300))
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "page.md").write_text(text)
    first = load_corpus(tmp_path / "one")
    anew()
    assert shape(load_corpus(tmp_path / "one")) == shape(first) and len(parses) == 1
    store = corpus_module.PARSES
    [(key, check, blob)] = rows_of(store)
    assert blob[:1] == b"x" and len(blob) > 10 * 64  # compressed, read in many pieces
    if damage == "bit":
        blob = blob[:200] + bytes([blob[200] ^ 4]) + blob[201:]
    elif damage.startswith("cut"):
        blob = blob[: len(blob) // 2]
        check = content_cache.checksum(key, blob) if damage.endswith("made") else check
    else:
        check = content_cache.checksum(key, blob + b" ")
    set_rows(store, [(key, check, blob)])
    anew()
    assert shape(load_corpus(tmp_path / "one")) == shape(first) and len(parses) == 2
    [(_, check, blob)] = rows_of(store)  # stored again, whole
    assert check == content_cache.checksum(key, blob)
    anew()
    assert shape(load_corpus(tmp_path / "one")) == shape(first) and len(parses) == 2


def test_a_parse_of_many_blocks_reads_back_as_it_was_made(cache, tmp_path, parses):
    text = "".join(f"Paragraph {n}.\n\n- item {n}\n  - nested\n\n" for n in range(1500))
    (tmp_path / "many").mkdir()
    (tmp_path / "many" / "big.md").write_text(text)
    first = load_corpus(tmp_path / "many")
    assert len(first.documents[0].blocks) > 2 * corpus_module.ROWS_AT_ONCE
    anew()
    again = load_corpus(tmp_path / "many")
    assert len(parses) == 1 and shape(again) == shape(first)


STORE_ONE_PARSE = """
import re, tempfile
from pathlib import Path
from chunkproof.bench.scale import generated_markdown
from chunkproof.document import corpus

def peak():  # this process's (not a parent's, as ru_maxrss may be) peak resident KiB
    return int(re.search(r"VmHWM:\\s*(\\d+) kB", Path("/proc/self/status").read_text())[1])

text = generated_markdown(4)
corpus.PARSES.root = Path(tempfile.mkdtemp())
parsed = corpus.parse_text(text, True, False)
before = peak()
corpus.PARSES.put("key", corpus.parse_data(parsed, text))
corpus.PARSES.flush()
print(len(text), (peak() - before) * 1024, len(corpus.PARSES.get("key")["blocks"]))
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_storing_a_large_parse_adds_little_to_the_peak(cache):
    # A new process parses 4 MB, then stores the parse: its peak resident memory grows by
    # 0.4 bytes per input byte (the compressed JSON, the compressor), not by rows, their JSON
    # made whole and sqlite's copies of it (7 bytes per input byte when so stored; 1.6 to 2.1
    # with the rows and their JSON made piece by piece into one buffer not compressed).
    done = subprocess.run([sys.executable, "-c", STORE_ONE_PARSE], capture_output=True,
                          text=True, check=True)
    size, grown, blocks = map(int, done.stdout.split())
    assert blocks > 10_000 and grown / size < 1


READ_ONE_PARSE = """
import re, sys
from pathlib import Path
from chunkproof.bench.scale import generated_markdown
from chunkproof.document import corpus

def peak():  # this process's peak resident KiB
    return int(re.search(r"VmHWM:\\s*(\\d+) kB", Path("/proc/self/status").read_text())[1])

text = generated_markdown(4)
corpus.PARSES.root = Path(sys.argv[1])
if sys.argv[2] == "store":
    corpus.PARSES.put("key", corpus.parse_data(corpus.parse_text(text, True, False), text))
else:
    before = peak()
    blocks = corpus.PARSES.get("key")["blocks"]
    print(len(text), (peak() - before) * 1024, len(blocks))
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_reading_a_large_parse_holds_no_more_than_its_blocks(cache, tmp_path):
    # A new process reads the stored parse of 4 MB: its peak resident memory grows by the
    # blocks it makes, one line of rows at a time beside them, sharing names and offsets as a
    # parse does (6.4 bytes per input byte measured); read whole (the JSON decompressed, then
    # every row) into blocks each with strings and numbers of its own, it grew by 13.2.
    for step in ("store", "read"):
        done = subprocess.run([sys.executable, "-c", READ_ONE_PARSE, str(tmp_path), step],
                              capture_output=True, text=True, check=True)
    size, grown, blocks = map(int, done.stdout.split())
    assert blocks > 10_000 and grown / size < 9
