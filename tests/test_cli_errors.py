"""Every ordinary mistake on the command line ends in one line naming the input and the fix,
with exit 2 and no traceback (``--debug`` shows the traceback)."""

from __future__ import annotations

import errno
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from chunkproof import make_config, save_config
from chunkproof.cli import main
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"
REPO_RESULTS = Path(__file__).resolve().parents[1] / "results"
"""Where a report with no --out goes (under the repo root, whatever the working folder)."""
QUICK = ["--strategies", "rct", "--sizes", "300", "--budgets", "none", "--contrast", "none"]


@pytest.fixture(scope="module")
def where(tmp_path_factory) -> dict[str, str]:
    """Files and folders the bad parameters point at."""
    root = tmp_path_factory.mktemp("cli")
    corpus = root / "docs"
    shutil.copytree(MINI, corpus)
    flat = root / "flat"  # no headings, no title, no sentence long enough to ask (6 words)
    flat.mkdir()
    (flat / "notes.txt").write_text("just words\nand more\n", encoding="utf-8")
    empty = root / "empty"
    empty.mkdir()
    save_config(make_config(strategy="ast_merge", size=300), root / "good.yaml")
    files = {
        "scalar.yaml": b"chunker: ast_merge\n",
        "latin1.yaml": "chunker:\n  strategy: caf\xe9\n".encode("latin-1"),
        "list.yaml": b"- ast_merge\n",
        "broken.yaml": b"chunker: {size: [1\n",
        "deep.yaml": b"[" * 5000 + b"]" * 5000 + b"\n",
        "edited.yaml": (root / "good.yaml").read_bytes().replace(b"size: 300", b"size: 301"),
        "badfield.yaml": b"chunker:\n  strategy: ast_merge\n  colour: red\n",
        "badjson.jsonl": b'{"id": "q1", "query": \n',
        "deep.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "latin1.jsonl": '{"id": "q1", "query": "caf\xe9"}\n'.encode("latin-1"),
        "nosource.jsonl": b'{"id": "q1", "query": "what", "sources": ["nope.md"]}\n',
        "noanswer.jsonl": b'{"id": "q1", "query": "what", "sources": ["guide.md"], '
                          b'"answer": "not in the text at all"}\n',
        "empty.jsonl": b"",
        "scalar.jsonl": b"42\n",
        "a-file": b"x",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "run-other").mkdir()
    (root / "run-other" / "run.json").write_text(json.dumps({"run_id": "0123456789ab"}))
    return {"root": str(root), "corpus": str(corpus), "queries": str(MINI / "queries.jsonl"),
            "flat": str(flat), "empty": str(empty), "good": str(root / "good.yaml"),
            **{name: str(root / name) for name in files}, "other": str(root / "run-other"),
            "missing": str(root / "missing"), "under-file": str(root / "a-file" / "x.jsonl")}


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch) -> Path:
    """Each case runs in an empty folder of its own, so that nothing a mistake writes lands in
    the working tree (``--out ''`` once meant the current folder)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


# (command line with {placeholders} from ``where``, text the error line must hold)
CASES = [
    # chunk
    ("chunk --corpus {missing} --strategy rct --out {root}/o.jsonl", "does not exist"),
    ("chunk --corpus {a-file} --strategy rct --out {root}/o.jsonl", "not a folder"),
    ("chunk --corpus {corpus} --strategy nope --out {root}/o.jsonl", "valid strategies"),
    ("chunk --corpus {corpus} --strategy rct --size 0 --out {root}/o.jsonl", "size"),
    ("chunk --corpus {corpus} --strategy rct --size -5 --out {root}/o.jsonl", "size"),
    ("chunk --corpus {corpus} --strategy rct --set colour --out {root}/o.jsonl", "KEY=VALUE"),
    ("chunk --corpus {corpus} --strategy ast_merge --set strategy=rct --out {root}/o.jsonl",
     "--set strategy=rct: strategy has its own option; give it with --strategy alone"),
    ("chunk --corpus {corpus} --strategy rct --size 300 --set size=400 --out {root}/o.jsonl",
     "give it with --size alone"),
    ("sweep --corpus {corpus} --queries {queries} --set strategy=rct --out {root}/r1",
     "give it with --strategies alone"),
    ("chunk --corpus {corpus} --strategy rct --size 99999999999999999999999 "
     "--out {root}/o.jsonl", "size: Input should be less than or equal to 1000000000"),
    ("chunk --corpus {corpus} --strategy rct --set min_size=99999999999999999999999 "
     "--out {root}/o.jsonl", "min_size: Input should be less than or equal to 1000000000"),
    ("sweep --corpus {corpus} --queries {queries} --sizes 99999999999999999999999 "
     "--out {root}/r1", "less than or equal to 1000000000"),
    ("sweep --corpus {corpus} --queries {queries} --k 99999999999999999999999 "
     "--out {root}/r1", "k: Input should be less than or equal to 10000"),
    ("sweep --corpus {corpus} --queries {queries} --budgets 99999999999999999999999 "
     "--out {root}/r1", "less than or equal to 1000000000"),
    ("report --corpus {corpus} --sizes 99999999999999999999999 --out {root}/rep",
     "less than or equal to 1000000000"),
    ("report --corpus {corpus} --k 99999999999999999999999 --out {root}/rep",
     "K: Input should be less than or equal to 10000"),
    ("chunk --corpus {corpus} --strategy rct --set colour=red --out {root}/o.jsonl", "colour"),
    ("chunk --corpus {corpus} --strategy rct --set prefix_template={{path}}_{{x}} "
     "--out {root}/o.jsonl", "only the placeholder {path}"),
    ("chunk --corpus {corpus} --strategy rct --set prefix_template=plain --out {root}/o.jsonl",
     "placeholder {path}"),
    ("chunk --corpus {corpus} --strategy rct --set prefix_template={{path}}}} "
     "--out {root}/o.jsonl", "braces"),
    ("chunk --corpus {corpus} --strategy rct --set overlap=5000 --out {root}/o.jsonl",
     "overlap"),
    ("chunk --corpus {corpus} --strategy rct --set min_size=5000 --out {root}/o.jsonl",
     "min_size"),
    ("chunk --corpus {corpus} --strategy rct --set size=abc --out {root}/o.jsonl", "size"),
    ("chunk --corpus {corpus} --config {missing} --out {root}/o.jsonl", "cannot read config"),
    ("chunk --corpus {corpus} --config {scalar.yaml} --out {root}/o.jsonl",
     "'chunker:' must be a mapping"),
    ("chunk --corpus {corpus} --config {latin1.yaml} --out {root}/o.jsonl", "not UTF-8"),
    ("chunk --corpus {corpus} --config {root} --out {root}/o.jsonl", "is a folder"),
    ("chunk --corpus {corpus} --config {broken.yaml} --out {root}/o.jsonl", "not valid YAML"),
    ("chunk --corpus {corpus} --config {deep.yaml} --out {root}/o.jsonl", "nested too deep"),
    ("chunk --corpus {corpus} --config {edited.yaml} --out {root}/o.jsonl", "config_id"),
    ("chunk --corpus {corpus} --config {list.yaml} --out {root}/o.jsonl", "YAML mapping"),
    ("chunk --corpus {corpus} --config {badfield.yaml} --out {root}/o.jsonl", "colour"),
    ("chunk --corpus {corpus} --config {good} --size 3 --out {root}/o.jsonl",
     "cannot be combined"),
    ("chunk --corpus {corpus} --strategy rct --out ''", "--out: name a file"),
    ("chunk --corpus {corpus} --strategy rct --out {root}", "--out: .* is a folder"),
    ("chunk --corpus {corpus} --strategy rct --out {under-file}", "not a folder"),
    # summary
    ("summary --corpus {missing}", "does not exist"),
    ("summary --corpus {corpus} --size 0", "size"),
    ("summary --corpus {corpus} --size -1", "size"),
    ("summary --corpus {corpus} --unit pages", "unit"),
    ("summary --corpus {empty}", "no documents"),
    ("summary --corpus {corpus} --strategies ''", "strategies: give at least one"),
    ("summary --corpus {corpus} --strategies bogus", "valid strategies"),
    # queries mine
    ("queries mine --corpus {missing} --out {root}/q.jsonl", "does not exist"),
    ("queries mine --corpus {corpus} --out ''", "--out: name a file"),
    ("queries mine --corpus {corpus} --out {root}", "--out: .* is a folder"),
    ("queries mine --corpus {corpus} --out {root}/q.jsonl --max-sources 0", "--max-sources"),
    ("queries mine --corpus {flat} --out {root}/q.jsonl", "no queries"),
    ("queries mine --corpus {empty} --out {root}/q.jsonl", "no documents"),
    # sweep: the grid
    ("sweep --corpus {corpus} --queries {queries} --strategies '' --out {root}/r1",
     "strategies: give at least one"),
    ("sweep --corpus {corpus} --queries {queries} --strategies ,, --out {root}/r1",
     "strategies: give at least one"),
    ("sweep --corpus {corpus} --queries {queries} --strategies bogus --out {root}/r1",
     "valid strategies"),
    ("sweep --corpus {corpus} --queries {queries} --strategies rct --sizes '' --out {root}/r1",
     "sizes: give at least one"),
    ("sweep --corpus {corpus} --queries {queries} --sizes abc --out {root}/r1", "--sizes"),
    ("sweep --corpus {corpus} --queries {queries} --sizes 0 --out {root}/r1", "size"),
    ("sweep --corpus {corpus} --queries {queries} --sizes -100 --out {root}/r1", "size"),
    ("sweep --corpus {corpus} --queries {queries} --retrievers '' --out {root}/r1",
     "retrievers: give at least one"),
    ("sweep --corpus {corpus} --queries {queries} --retrievers bogus --out {root}/r1",
     "valid retrievers"),
    ("sweep --corpus {corpus} --queries {queries} --k 0 --out {root}/r1", "k"),
    ("sweep --corpus {corpus} --queries {queries} --k -1 --out {root}/r1", "k"),
    ("sweep --corpus {corpus} --queries {queries} --budgets abc --out {root}/r1", "--budgets"),
    ("sweep --corpus {corpus} --queries {queries} --budgets 0 --out {root}/r1", "budgets"),
    ("sweep --corpus {corpus} --queries {queries} --budgets -5 --out {root}/r1", "budgets"),
    ("sweep --corpus {corpus} --queries {queries} --strategies rct --contrast rct:mts "
     "--out {root}/r1", "names mts, not among the swept strategies (rct): add it"),
    ("report --corpus {corpus} --strategies rct --contrast rct:mts --out {root}/rep",
     "names mts, not among the swept strategies (rct): add it"),
    ("sweep --corpus {corpus} --queries {queries} --contrast rct --out {root}/r1",
     "expected 'A:B'"),
    ("sweep --corpus {corpus} --queries {queries} --contrast rct:rct --out {root}/r1",
     "expected 'A:B'"),
    ("sweep --corpus {corpus} --queries {queries} --set colour=red --out {root}/r1", "colour"),
    ("sweep --corpus {corpus} --queries {queries} --set overlap=1000 --out {root}/r1",
     "overlap"),
    ("sweep --corpus {corpus} --queries {queries} --set prefix_template={{x}} "
     "--out {root}/r1", "only the placeholder {path}"),
    ("sweep --corpus {corpus} --queries {queries} --set min_size=5000 --out {root}/r1",
     "min_size"),
    # sweep: the inputs
    ("sweep --corpus {missing} --queries {queries} --out {root}/r1", "does not exist"),
    ("sweep --corpus {empty} --mine-queries --out {root}/r1", "no documents"),
    ("sweep --corpus {corpus} --queries {missing} --out {root}/r1",
     "cannot read query file .*: no such file$"),
    ("sweep --corpus {corpus} --queries {root} --out {root}/r1", "is a folder"),
    ("sweep --corpus {corpus} --queries {latin1.jsonl} --out {root}/r1", "UTF-8"),
    ("sweep --corpus {corpus} --queries {badjson.jsonl} --out {root}/r1", "not valid JSON"),
    ("sweep --corpus {corpus} --queries {deep.jsonl} --out {root}/r1", "nested too deep"),
    ("sweep --corpus {corpus} --queries {nosource.jsonl} --out {root}/r1",
     "not a document of the corpus"),
    ("sweep --corpus {corpus} --queries {noanswer.jsonl} --out {root}/r1", "exact substring"),
    ("sweep --corpus {corpus} --queries {empty.jsonl} --out {root}/r1", "holds no queries"),
    ("sweep --corpus {corpus} --queries {scalar.jsonl} --out {root}/r1", "JSON object"),
    ("sweep --corpus {flat} --mine-queries --out {root}/r1", "no queries"),
    ("sweep --corpus {corpus} --mine-queries --test-queries {queries} --out {root}/r1",
     "held_out_queries"),
    ("sweep --corpus {corpus} --queries {queries} --test-queries {missing} --out {root}/r1",
     "cannot read"),
    # sweep: the output folder
    ("sweep --corpus {corpus} --queries {queries} --out ''", "--out: name a folder"),
    ("sweep --corpus {corpus} --queries {queries} --out {a-file}", "is a file, not a folder"),
    # (--out holding another run is no error: that run is kept and this one goes into its own
    # run-<id> subfolder; tests/test_reruns.py)
    ("sweep --corpus {corpus} --queries {queries} --out {under-file}", "not a folder"),
    # view
    ("view --corpus {corpus} --doc nope.md --strategy rct --out {root}/v.html",
     "no document 'nope.md'"),
    ("view --corpus {missing} --doc guide.md --strategy rct --out {root}/v.html",
     "does not exist"),
    ("view --corpus {corpus} --doc guide.md --strategy nope --out {root}/v.html",
     "valid strategies"),
    ("view --corpus {corpus} --doc guide.md --strategy rct --vs nope --out {root}/v.html",
     "valid strategies"),
    ("view --corpus {corpus} --doc guide.md --strategy rct --vs-config {missing} "
     "--out {root}/v.html", "cannot read config"),
    ("view --corpus {corpus} --doc guide.md --config {scalar.yaml} --out {root}/v.html",
     "'chunker:' must be a mapping"),
    ("view --corpus {corpus} --doc guide.md --strategy rct --out ''", "--out: name a file"),
    ("view --corpus {corpus} --doc guide.md --strategy rct --out {root}",
     "--out: .* is a folder"),
    ("view --corpus {corpus} --doc guide.md --strategy rct --size 0 --out {root}/v.html",
     "size"),
    # report (checked before any notebook runs)
    ("report --corpus {corpus} --strategies '' --out {root}/rep", "STRATEGIES"),
    ("report --corpus {corpus} --sizes '' --out {root}/rep", "SIZES"),
    ("report --corpus {corpus} --sizes abc --out {root}/rep", "--sizes"),
    ("report --corpus {corpus} --out {a-file}", "is a file, not a folder"),
    ("report --corpus {corpus} --out ''", "--out: name a folder"),
    ("report --corpus {corpus} --queries {missing} --out {root}/rep", "QUERIES"),
    ("report --corpus {corpus} --k 0 --out {root}/rep", "K"),
    ("report --corpus {missing} --out {root}/rep", "CORPUS"),
    ("report --corpus {corpus} --retrievers bogus --out {root}/rep",
     "RETRIEVERS: expected one of"),
    ("report --corpus {corpus} --budgets abc --out {root}/rep", "--budgets"),
    ("report --corpus {corpus} --constraint 'code_integrity about 1' --out {root}/rep",
     "cannot parse constraint 'code_integrity about 1'"),
    ("report --corpus {corpus} --slug-rule vitepress --url-template 'https://x/{{nope}}' "
     "--out {root}/rep", "unknown field {nope}"),
]


def argv(line: str, where: dict[str, str]) -> list[str]:
    """The command line with each ``{name}`` replaced (names hold dots, so not str.format)."""
    for name in sorted(where, key=len, reverse=True):
        line = line.replace("{" + name + "}", shlex.quote(where[name]))
    return shlex.split(line.replace("{{", "{").replace("}}", "}"))


@pytest.mark.parametrize("line,expected", CASES, ids=[c[0][:70] for c in CASES])
def test_a_bad_parameter_is_one_line_and_exit_2(line, expected, where, capsys, elsewhere):
    args = argv(line, where)
    before = set(REPO_RESULTS.glob("*"))
    code = main(args)  # an uncaught exception here is the traceback this test forbids
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("chunkproof: error: "), err
    assert "unexpected" not in lines[0], err  # named by its own message, not the safety net
    assert re.search(expected if ".*" in expected else re.escape(expected), lines[0]), err
    assert not list(elsewhere.iterdir()), "a refused command wrote into the current folder"
    assert set(REPO_RESULTS.glob("*")) == before, "a refused report wrote into results/"


def test_debug_shows_the_traceback(where):
    with pytest.raises(Exception, match="does not exist"):
        main(["--debug", "summary", "--corpus", where["missing"]])
    with pytest.raises(Exception, match="does not exist"):
        main(["summary", "--corpus", where["missing"], "--debug"])


@pytest.mark.parametrize("number,words", [(errno.EROFS, "read-only"), (errno.EACCES,
                                                                       "permission denied"),
                                          (errno.ENOSPC, "disk is full")])
@pytest.mark.parametrize("command", ["chunk", "sweep", "queries"])
def test_a_disk_that_refuses_writes_is_one_line_naming_the_file(where, monkeypatch, capsys,
                                                                 number, words, command):
    import os

    from chunkproof.util import atomic

    def refused(src, dst):
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(atomic.os, "replace", refused)
    out = Path(where["root"]) / f"{command}-{number}"
    line = {"chunk": f"chunk --corpus {{corpus}} --strategy rct --out {out}.jsonl",
            "queries": f"queries mine --corpus {{corpus}} --out {out}.jsonl",
            "sweep": f"sweep --corpus {{corpus}} --queries {{queries}} {' '.join(QUICK)} "
                     f"--out {out}"}[command]
    assert main(argv(line, where)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err.lower() and str(out) in err, err
    assert not list(Path(where["root"]).rglob("*.tmp"))


@pytest.mark.parametrize("what,lines", [
    ("missing", ["chunk --corpus {missing} --strategy rct --out {root}/o.jsonl",
                 "summary --corpus {missing}", "queries mine --corpus {missing} --out {root}/q",
                 "sweep --corpus {missing} --mine-queries --out {root}/r1",
                 "view --corpus {missing} --doc a.md --strategy rct --out {root}/v.html",
                 "report --corpus {missing} --out {root}/rep"]),
    ("query", ["sweep --corpus {corpus} --queries {missing} --out {root}/r1",
               "sweep --corpus {corpus} --queries {queries} --test-queries {missing} "
               "--out {root}/r1",
               "report --corpus {corpus} --queries {missing} --out {root}/rep"]),
])
def test_a_missing_corpus_or_query_file_is_one_message_from_every_command(what, lines, where,
                                                                           capsys):
    messages = set()
    for line in lines:
        assert main(argv(line, where)) == 2
        error = capsys.readouterr().err.strip()
        # a notebook parameter's error names the parameter first; the message is the same
        messages.add(re.sub(r"^chunkproof: error: (CORPUS|QUERIES): ", "chunkproof: error: ",
                            error))
    assert len(messages) == 1, messages
    assert "bad line" not in messages.pop()


@pytest.mark.parametrize("variable,value,line", [
    ("CHUNKPROOF_WORKERS", "x", "report --corpus {corpus} --out {root}/rep"),
    ("CHUNKPROOF_WORKERS", "0", "sweep --corpus {corpus} --queries {queries} --out {root}/r1"),
    ("CHUNKPROOF_PARSE_SECONDS", "soon", "chunk --corpus {corpus} --strategy rct "
                                       "--out {root}/o.jsonl"),
    ("CHUNKPROOF_PARSE_SECONDS", "-1", "summary --corpus {corpus}"),
])
def test_a_bad_setting_fails_the_command_in_one_line_before_any_file_is_read(
        variable, value, line, where, capsys, monkeypatch):
    import chunkproof.document.corpus as corpus_module

    read = []
    monkeypatch.setattr(corpus_module, "read_regular",
                        lambda *a: read.append(a) or pytest.fail("a file was read"))
    monkeypatch.setenv(variable, value)
    assert main(argv(line, where)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"chunkproof: error: {variable}"), lines
    assert not read


def test_a_configuration_error_met_while_loading_a_file_fails_the_command(where, capsys,
                                                                          monkeypatch):
    """A setting every file shares (a parser choice, say) is no document's fault: it is not
    skipped file by file, leaving the one file it did not touch chunked and exit 0."""
    import chunkproof.document.corpus as corpus_module
    from chunkproof.errors import ConfigError

    def refuse(*args, **kwargs):
        raise ConfigError("CHUNKPROOF_SOMETHING must be one of a, b; got 'bogus'")

    monkeypatch.setattr(corpus_module, "make_document", refuse)
    out = Path(where["root"]) / "cfg.jsonl"
    assert main(["chunk", "--corpus", where["corpus"], "--strategy", "rct",
                 "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["chunkproof: error: CHUNKPROOF_SOMETHING must be one of a, b; got 'bogus'"]
    assert not out.exists()


@pytest.mark.parametrize("line,expected", [
    ("report --corpus {corpus} --queries {badjson.jsonl} --out {root}/fresh", "not valid JSON"),
    ("report --corpus {corpus} --queries {nosource.jsonl} --out {root}/fresh",
     "not a document of the corpus"),
    ("report --corpus {flat} --out {root}/fresh", "no queries could be mined"),
    ("report --corpus {empty} --out {root}/fresh", "no documents"),
    ("sweep --corpus {corpus} --queries {badjson.jsonl} --out {root}/fresh", "not valid JSON"),
    ("sweep --corpus {flat} --mine-queries --out {root}/fresh", "no queries could be mined"),
])
def test_bad_inputs_are_refused_before_any_notebook_runs_or_folder_is_made(
        line, expected, where, capsys, monkeypatch):
    import chunkproof.notebooks.report as report_module

    monkeypatch.setattr(report_module, "run_notebook",
                        lambda *a, **k: pytest.fail("a notebook ran"))
    assert main(argv(line, where)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], lines
    assert not (Path(where["root"]) / "fresh").exists()  # no folder, no lock file left
