"""chunkproof gate: a candidate config against a baseline on the same questions, exit 1 when it
is worse by more than the margin with significance, 0 otherwise, 2 on bad input; one line on
stdout and a JSON summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chunkproof.chunking.config import make_config, save_config
from chunkproof.cli import main
from chunkproof.evaluation.choice import gate
from chunkproof.evaluation.scoring import stats
from conftest import SAMPLE

ROOT = Path(__file__).resolve().parent.parent
QUERIES = SAMPLE / "queries.jsonl"
RULE = {"primary_metric": "answer_hit@b1024", "retriever": "bm25", "alpha": 0.05}


def config_file(path: Path, strategy: str, size: int, **extra) -> str:
    save_config(make_config(strategy=strategy, size=size), path, **extra)
    return str(path)


@pytest.fixture
def files(tmp_path):
    return {"baseline": config_file(tmp_path / "chosen_config.yaml", "ast_breadcrumb", 800,
                                    rule=RULE),
            "worse": config_file(tmp_path / "worse.yaml", "rct", 100),
            "out": str(tmp_path / "gate.json")}


def run(files, candidate: str, *extra: str) -> int:
    return main(["gate", "--corpus", str(SAMPLE), "--queries", str(QUERIES), "--baseline",
                 files["baseline"], "--candidate", candidate, "--out", files["out"], *extra])


def test_a_significantly_worse_candidate_fails_with_exit_1(files, capsys):
    assert run(files, files["worse"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("gate: fail: candidate rct 100 chars is worse")
    summary = json.loads(Path(files["out"]).read_text())
    assert summary["verdict"] == "fail" and summary["exit_code"] == 1
    assert summary["metric"] == "answer_hit@b1024" and summary["retriever"] == "bm25"
    test = summary["test"]
    assert test["mean_diff"] < -summary["margin"] and test["p_value"] < summary["alpha"]
    assert test["mean_diff"] == pytest.approx(
        summary["candidate"]["mean"] - summary["baseline"]["mean"])
    assert summary["questions"] == 95 and summary["pages"] == test["clusters"] > 1
    assert f"{summary['questions']} questions on {summary['pages']} pages" in out[0]


def test_the_same_config_passes_with_exit_0(files, capsys):
    assert run(files, files["baseline"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("gate: pass:")
    summary = json.loads(Path(files["out"]).read_text())
    assert summary["test"]["mean_diff"] == 0 and summary["verdict"] == "pass"


def test_a_drop_within_the_margin_passes(files, capsys):
    assert run(files, files["worse"], "--margin", "0.5") == 0
    summary = json.loads(Path(files["out"]).read_text())
    assert summary["test"]["p_value"] < 0.05 and summary["test"]["mean_diff"] > -0.5


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.update(worse=f["worse"] + ".missing"), "worse.yaml.missing"),
    (lambda f: f.update(baseline=config_file(Path(f["out"]).with_name("bad.yaml"), "rct", 300,
                                             rule={"primary_metric": "answer_hit@top"})),
     "primary metric 'answer_hit@top'"),
    (lambda f: f.update(margin="-0.1"), "--margin"),
])
def test_bad_input_is_exit_2_and_one_line(files, capsys, change, message):
    change(files)
    margin = files.pop("margin", "0.02")
    assert run(files, files["worse"], "--margin", margin) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert message in captured.err and not Path(files["out"]).exists()


def test_the_paired_test_counts_the_pages_the_questions_are_on():
    found = gate.paired_test(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.0, 0.0, 1.0, 0.0]),
                             ["a.md", "a.md", "b.md", "c.md"], alpha=0.05)
    assert found["clusters"] == 3 and found["mean_diff"] == pytest.approx(0.5)


def test_the_gate_tests_questions_grouped_by_page():
    # eight questions on two pages: the page-clustered test is the one the choice uses, and
    # it is not the test that counts each question on its own
    cand = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    base = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    pages = ["a.md"] * 4 + ["b.md"] * 4
    found = gate.paired_test(cand, base, pages, alpha=0.05)
    grouped = stats.paired_comparison(cand.tolist(), base.tolist(), clusters=pages)
    alone = stats.paired_comparison(cand.tolist(), base.tolist())
    assert found["clustered"] and found["p_value"] == pytest.approx(grouped.p_value)
    assert grouped.p_value != pytest.approx(alone.p_value)


def test_the_ci_page_s_commands_run_as_printed(tmp_path):
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    block = page.split("## Try it on the sample", 1)[1]
    commands = re.search(r"```bash\n(.*?)```", block, re.S)[1]
    (tmp_path / "data").symlink_to(ROOT / "data")
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", commands], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    verdicts = [line.split(":")[1].strip() for line in done.stdout.splitlines()
                if line.startswith("gate:")]
    assert verdicts == ["fail", "pass"] and "gate failed: exit 1" in done.stdout
