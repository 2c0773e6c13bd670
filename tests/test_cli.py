"""The command line: strategies, chunk (with --strategy or --config), errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from chunkproof import make_config, save_config
from chunkproof.cli import main
from conftest import FIXTURES

FIELDS = {"id", "doc_id", "ordinal", "start", "end", "start_line", "end_line", "text",
          "breadcrumb", "embed_text", "context_text", "kind", "strategy", "config_id",
          "structure_source", "verbatim", "part"}


def test_strategies_lists_every_name(capsys):
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for name in ["rct", "mhs_rct", "mts", "emsts", "ast_merge", "ast_breadcrumb",
                 "heading_flush", "paragraph"]:
        assert f"\n{name} " in f"\n{out}"


def test_chunk_writes_one_object_per_chunk(tmp_path):
    out = tmp_path / "chunks.jsonl"
    code = main(["chunk", "--corpus", str(FIXTURES), "--strategy", "ast_breadcrumb",
                 "--size", "300", "--set", "number_parts=true", "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) > 10 and FIELDS <= set(rows[0])
    assert {r["doc_id"] for r in rows} >= {"contract_renewal.md", "standard_deep.md"}
    source = (FIXTURES / rows[0]["doc_id"]).read_text()
    assert source[rows[0]["start"] : rows[0]["end"]] == rows[0]["text"]


def test_chunk_with_config_file_matches_strategy_flags(tmp_path):
    config = make_config(strategy="ast_merge", size=250)
    path = save_config(config, tmp_path / "c.yaml")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["chunk", "--corpus", str(FIXTURES), "--config", str(path), "--out", str(a)]) == 0
    assert main(["chunk", "--corpus", str(FIXTURES), "--strategy", "ast_merge", "--size", "250",
                 "--out", str(b)]) == 0
    assert a.read_text() == b.read_text()


def test_unknown_strategy_exits_2_with_the_valid_names(tmp_path, capsys):
    code = main(["chunk", "--corpus", str(FIXTURES), "--strategy", "astmerge",
                 "--out", str(tmp_path / "x.jsonl")])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown strategy 'astmerge'; did you mean 'ast_merge'?" in err
    assert "valid strategies: ast_breadcrumb, ast_merge" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_a_typo_in_a_report_parameter_suggests_the_name_meant(tmp_path, capsys):
    code = main(["report", "--corpus", str(FIXTURES), "--strategies", "rct,ast_breadcrum",
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "did you mean 'ast_breadcrumb'?" in err


def test_bad_option_names_the_field(tmp_path, capsys):
    code = main(["chunk", "--corpus", str(FIXTURES), "--strategy", "ast_merge",
                 "--set", "overlap=-3", "--out", str(tmp_path / "x.jsonl")])
    assert code == 2 and "overlap" in capsys.readouterr().err


def test_python_dash_m_works():
    done = subprocess.run([sys.executable, "-m", "chunkproof", "strategies"],
                          capture_output=True, text=True, check=True)
    assert "ast_breadcrumb" in done.stdout


def test_an_unknown_set_key_lists_the_valid_keys(tmp_path, capsys):
    code = main(["chunk", "--corpus", str(FIXTURES), "--strategy", "ast_merge",
                 "--set", "overlapp=3", "--out", str(tmp_path / "x.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "unknown option overlapp; valid options: " in err
    assert "overlap" in err.split("valid options:")[1]


def test_every_subcommand_help_shows_defaults_and_an_example(capsys):
    for command in (["sweep"], ["report"], ["summary"], ["queries", "mine"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        out = capsys.readouterr().out
        assert "example:\n  chunkproof " in out, command
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "(default: " in capsys.readouterr().out


def test_no_on_off_flag_claims_a_default():
    """``--no-document-text ... (default: True)`` read as "on by default" for a flag that is
    off unless given: a flag's help names no default."""
    import argparse

    from chunkproof.cli_args import build_parser

    def parsers(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield from parsers(child)

    flags = 0
    for parser in parsers(build_parser()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.option_strings and action.nargs == 0:
                flags += 1
                assert formatter._get_help_string(action) == (action.help or ""), action.dest
    assert flags > 10


def test_summary_runs_the_strategies_asked_for_with_progress(capsys):
    code = main(["summary", "--corpus", str(FIXTURES), "--strategies", "ast_merge,rct",
                 "--size", "300"])
    out, err = capsys.readouterr()
    rows = [line.split()[0] for line in out.splitlines()[2:]]
    assert code == 0 and rows == ["ast_merge", "rct"]
    assert "doc" in err and "rct" in err  # the bar names the strategy it is on


def test_progress_into_a_log_is_one_line_per_stage_with_no_bar_frames(tmp_path):
    with (tmp_path / "err").open("w") as log:
        done = subprocess.run([sys.executable, "-m", "chunkproof", "summary", "--corpus",
                               str(FIXTURES), "--strategies", "ast_merge,rct", "--size", "300"],
                              stdout=subprocess.DEVNULL, stderr=log, check=False)
    err = (tmp_path / "err").read_bytes().decode()  # as written: no newline translation
    assert done.returncode == 0 and "\r" not in err
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["ast_merge", "rct"], err
    assert all(re.fullmatch(r"\w+: \d+ doc \(\d+\.\d s, \d+ doc/s\)", line) for line in lines)
