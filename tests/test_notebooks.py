"""The notebooks: committed clean and in shape, executed headless, numbers equal the library's."""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import papermill
import pytest
import yaml

from chunkproof import ConfigError, load_config, load_corpus
from chunkproof.chunking.section_lengths import sections_table
from chunkproof.cli import main
from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.choice.rules import parse_constraint
from chunkproof.evaluation.queries.queries import load_queries
from chunkproof.evaluation.run.defaults import DEFAULT_BUDGETS
from chunkproof.evaluation.run.sweep import SweepParams, headline, run_sweep
from chunkproof.notebooks import choose_and_export as cx
from chunkproof.notebooks import chunk_explorer as ev
from chunkproof.notebooks import corpus_profile as pr
from chunkproof.notebooks import splitter_panorama as pa
from chunkproof.notebooks.params import resolve_output, resolve_path
from chunkproof.notebooks.report import (
    build_report,
    default_gold,
    default_run_name,
    middle_size,
    notebook_values,
    run_notebook,
)
from conftest import FIXTURES, ROOT

NB_DIR = ROOT / "notebooks"
NOTEBOOKS = ["01_corpus_profile", "02_splitter_panorama", "03_strategy_sweep",
             "06_choose_and_export"]
REPORTED = ["01_corpus_profile", "02_splitter_panorama", "03_strategy_sweep",
            "04_chunk_explorer", "05_structure_signal", "06_choose_and_export"]
"""What ``build_report`` runs by default (04 and 05 have their own shape tests)."""
MINI = FIXTURES / "mini_corpus"
MINI_QUERIES = MINI / "queries.jsonl"
SWEEP = {"sizes": [200, 400], "strategies": ["rct", "ast_breadcrumb"], "retrievers": ["bm25"]}
LINKS = {"slug_rule": "vitepress", "url_template": "https://docs.example.com/{route}#{anchor}"}
"""How the report fixture's chunks link into the site: every config of its sweep carries it."""
CONSTRAINTS = ["code_integrity >= 0.95", "over_encoder_limit <= 0.05"]
"""The report fixture's choice rule: 06's default constraint on code relaxed."""


def read(name: str):
    return nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)


def parameters_cell(nb):
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged parameters"
    return tagged[0]


def defaults(name: str) -> dict:
    tree = ast.parse(parameters_cell(read(name)).source)
    return {n.target.id: ast.literal_eval(n.value) for n in tree.body}


# --- parameters ----------------------------------------------------------------------------


def test_paths_resolve_from_the_repo_root_and_from_notebooks(monkeypatch, tmp_path):
    expected = (ROOT / "data" / "sample").resolve()
    monkeypatch.chdir(ROOT)
    assert resolve_path("data/sample", name="CORPUS", kind="folder") == expected
    monkeypatch.chdir(NB_DIR)
    assert resolve_path("data/sample", name="CORPUS", kind="folder") == expected
    assert resolve_output("results/x", name="OUT_DIR") == ROOT / "results" / "x"
    monkeypatch.chdir(tmp_path)  # outside any repo: an output stays where the user is
    assert resolve_output("results/x", name="OUT_DIR") == tmp_path.resolve() / "results" / "x"
    assert resolve_path("data/sample", name="CORPUS", kind="folder") == expected
    with pytest.raises(ConfigError, match=r"^CORPUS: corpus folder 'nowhere' does not exist"):
        resolve_path("nowhere", name="CORPUS", kind="folder")
    with pytest.raises(ConfigError,
                       match=r"^QUERIES: cannot read query file 'data/sample': it is a folder"):
        resolve_path("data/sample", name="QUERIES")


@pytest.mark.parametrize(("values", "message"), [
    ({"strategies": ["nope"]}, r"^STRATEGIES: expected one of .*ast_breadcrumb.*'nope'"),
    ({"sizes": [0]}, r"^SIZES: expected an integer >= 1"),
    ({"retrievers": ["bm99"]}, r"^RETRIEVERS: expected one of bm25"),
    ({"corpus": "no/such/folder"}, r"^CORPUS: corpus folder 'no/such/folder' does not exist"),
])
def test_a_report_with_a_bad_parameter_fails_before_running_anything(tmp_path, values, message):
    args = {"corpus": str(MINI), "queries": str(MINI_QUERIES), **SWEEP, **values}
    with pytest.raises(ConfigError, match=message):
        build_report(tmp_path / "r", progress=False, **args)
    assert not (tmp_path / "r").exists()


def test_a_report_folder_holding_another_run_keeps_it_and_says_what_differs(tmp_path):
    (tmp_path / "params.json").write_text(json.dumps({"run_id": "0123456789ab", "k": 3}))
    report = build_report(tmp_path, corpus=str(MINI), queries=str(MINI_QUERIES), progress=False,
                          notebooks=[], **SWEEP)
    assert report.out_dir.parent == tmp_path and report.out_dir.name.startswith("run-")
    assert "holds run 0123456789ab" in report.note and "k: 3 -> 5" in report.note
    assert json.loads((tmp_path / "params.json").read_text())["run_id"] == "0123456789ab"


def test_a_report_on_a_vitepress_site_points_to_its_slug_rule(tmp_path, capsys):
    site = tmp_path / "site"
    shutil.copytree(MINI, site)
    (site / "install.md").write_text("# Install\n\nRun it:\n\n::: code-group\n\n```sh [npm]"
                                     "\nnpm add -D vitepress\n```\n\n:::\n")
    report = build_report(tmp_path / "r", corpus=str(site), queries=str(MINI_QUERIES),
                          progress=True, notebooks=[], **SWEEP)
    said = "the corpus is written for VitePress"
    assert said in capsys.readouterr().err and "--slug-rule vitepress" in html.unescape(
        report.index.read_text())
    again = build_report(tmp_path / "v", corpus=str(site), queries=str(MINI_QUERIES),
                         progress=True, notebooks=[], slug_rule="vitepress", **SWEEP)
    assert said not in capsys.readouterr().err + again.index.read_text()


def test_default_run_name_is_a_timestamp():
    assert re.fullmatch(r"\d{8}-\d{6}", default_run_name())


@pytest.mark.parametrize(("sizes", "middle"), [
    ([600], 600), ([1200, 300, 600], 600), ([200, 400], 400), ([100, 200, 300, 400], 300)])
def test_middle_size_is_a_size_the_sweep_ran(sizes, middle):
    assert middle_size(sizes) == middle


@pytest.mark.parametrize(("corpus", "gold"), [
    (ROOT / "data" / "sample", str(ROOT / "data" / "sample" / "headings.gold.yaml")),
    (MINI, "")])
def test_every_corpus_gets_values_its_notebooks_accept(tmp_path, corpus, gold):
    params = SweepParams(corpus=str(corpus), sizes=(1200, 300, 600))
    assert default_gold(str(corpus)) == gold
    shared = notebook_values(tmp_path, params, queries="", name="04_chunk_explorer")
    assert shared["PRESET_DOCS"] == [] and shared["DOC"] == "" and shared["GOLD"] == gold
    assert "SIZE" not in shared  # 02 and 04 keep their own page size
    assert (shared["SLUG_RULE"], shared["URL_TEMPLATE"]) == ("github", "")
    linked = notebook_values(tmp_path, params, queries="", name="04_chunk_explorer",
                             slug_rule="mkdocs", url_template="https://x/{route}#{anchor}")
    assert (linked["SLUG_RULE"], linked["URL_TEMPLATE"]) == ("mkdocs",
                                                              "https://x/{route}#{anchor}")
    assert notebook_values(tmp_path, params, queries="", name="05_structure_signal")[
        "SIZE"] == 600


# --- executed ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def holdout(tmp_path_factory):
    """MINI copied to a folder outside the repository and the home folder, as a user's
    held-out docs lie."""
    corpus = tmp_path_factory.mktemp("holdout") / "mini"
    shutil.copytree(MINI, corpus)
    assert not corpus.is_relative_to(ROOT) and not corpus.is_relative_to(Path.home())
    return corpus


@pytest.fixture(scope="module")
def report(tmp_path_factory, holdout):
    """Every default notebook, on a corpus with no gold file (``holdout``)."""
    out = tmp_path_factory.mktemp("report") / "run"
    return build_report(out, corpus=str(holdout), queries=str(holdout / "queries.jsonl"),
                        progress=False, constraints=CONSTRAINTS, **SWEEP, **LINKS)


@pytest.mark.slow
def test_a_report_on_a_corpus_without_gold_runs_every_notebook(report):
    assert not (MINI / "headings.gold.yaml").exists()
    assert [(r.name, r.status) for r in report.runs] == [(n, "ok") for n in REPORTED], [
        (r.name, r.error) for r in report.failed]
    index = report.index.read_text()
    assert all(f'href="{name}.html"' in index for name in REPORTED)
    explorer = nbformat.read(report.out_dir / "04_chunk_explorer.ipynb", as_version=4)
    assert "picked as the page with most fences" in _text(explorer)
    picked = sorted(p.name for p in report.out_dir.glob("*.ast_breadcrumb.html"))
    assert picked == sorted(f"{d}.ast_breadcrumb.html"
                            for d in ev.representative_documents(load_corpus(MINI)))
    assert all(f'href="{name}"' in index for name in picked)  # the views are linked
    signal = nbformat.read(report.out_dir / "05_structure_signal.ipynb", as_version=4)
    assert "Heading detection is not scored: GOLD is empty" in _text(signal)
    numbers = json.loads(
        (report.out_dir / "structure_signal" / "structure_signal.json").read_text())
    assert numbers["gold"] is None and numbers["heading_scores"] is None
    assert numbers["retrieval"]["size"] == middle_size(SWEEP["sizes"])
    assert numbers["retrieval"]["configs"]["structure_routed"]["route"]


def _text(notebook) -> str:
    """Every stream and text output of an executed notebook."""
    return "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
                      for c in notebook.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_every_notebook_runs_and_is_exported(report):
    assert report.exit_code == 0, [(r.name, r.error) for r in report.failed]
    assert [r.name for r in report.runs] == REPORTED
    index = report.index.read_text()
    for run in report.runs:
        assert run.status == "ok" and run.seconds > 0
        assert run.notebook.is_file() and run.html.is_file()
        assert f'href="{run.html.name}"' in index
    for name in ("summary.csv", "significance.csv", "chosen_config.yaml"):
        assert f'href="{name}"' in index
    assert "ast_breadcrumb" in index  # the headline table
    # the corpus load's warnings: counted on the index, linked, and shown in 01
    assert 'href="document_warnings.csv"' in index and "flat.md" in index
    profile = next(r for r in report.runs if r.name == "01_corpus_profile").html.read_text()
    assert "no headings detected: using line anchors" in profile


@pytest.mark.slow
def test_the_report_says_where_its_time_went(report):
    times = report.times()
    assert [t.name for t in times] == REPORTED
    for found, run in zip(times, report.runs, strict=True):
        assert found.total == run.seconds and found.kernel > 0 and found.imports > 0
        assert found.kernel + found.imports + found.cells <= found.total
    text = "\n".join(report.time_lines())
    assert all(name in text for name in REPORTED) and "kernel start + imports" in text
    assert "sweep stages (run.json): load" in text and report.seconds >= sum(
        t.total for t in times)


@pytest.mark.slow
def test_exported_html_needs_no_network(report):
    for run in report.runs:
        page = run.html.read_text()
        assert "cdn.jsdelivr" not in page
        assert not re.search(r"<script[^>]*\bsrc=[\"']?https?:", page), run.name
        assert not re.search(r"@import\s+url\([\"']?https?:", page), run.name
        if run.name not in ("02_splitter_panorama", "04_chunk_explorer"):  # tables, views
            assert "<svg" in page, run.name


@pytest.mark.slow
def test_the_report_s_slug_rule_and_url_template_reach_the_sweep_and_the_choice(report):
    chunks = pd.read_parquet(report.out_dir / "chunks.parquet")
    headed = chunks[chunks["anchor"] != ""]
    assert len(headed) and headed["href"].str.startswith("https://docs.example.com/").all()
    chosen = load_config(report.out_dir / "chosen_config.yaml")
    assert (chosen.slug_rule, chosen.url_template) == tuple(LINKS.values())
    labels = pd.read_csv(report.out_dir / "summary.csv")["options"].dropna()
    assert all(json.loads(o).get("slug_rule") == "vitepress" for o in labels)


@pytest.mark.slow
def test_profile_numbers_equal_the_library(report):
    written = json.loads((report.out_dir / "corpus_profile" / "corpus_profile.json").read_text())
    corpus = load_corpus(MINI)
    assert written == json.loads(json.dumps(pr.profile_numbers(corpus, sections_table(corpus))))


@pytest.mark.slow
def test_panorama_numbers_equal_the_library(report):
    written = json.loads(
        (report.out_dir / "splitter_panorama" / "splitter_panorama.json").read_text())
    corpus = load_corpus(MINI)
    doc = pa.representative(corpus)  # the report passes DOC="" so any corpus works
    size = defaults("02_splitter_panorama")["SIZE"]
    table = pa.panorama(doc, size, queries=load_queries(MINI_QUERIES, corpus))
    assert written["doc"] == doc.id and written["size"] == size
    assert written["strategies"] == json.loads(json.dumps(pa.panorama_numbers(table)))


@pytest.mark.slow
def test_sweep_files_equal_a_direct_run(report, holdout):
    params = SweepParams(corpus=str(holdout), queries=str(holdout / "queries.jsonl"),
                         strategies=tuple(SWEEP["strategies"]), sizes=tuple(SWEEP["sizes"]),
                         retrievers=tuple(SWEEP["retrievers"]), budgets=DEFAULT_BUDGETS,
                         options=LINKS)
    direct = run_sweep(params, progress=False)
    keys = ["config_id", "retriever", "metric", "split", "split_value"]
    written = pd.read_csv(report.out_dir / "summary.csv", keep_default_na=False,
                          na_values=[""]).sort_values(keys, ignore_index=True)
    expected = direct.summary.sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(written[expected.columns], expected, check_dtype=False)
    chunks = pd.read_parquet(report.out_dir / "chunks.parquet")
    assert chunks["id"].tolist() == direct.chunks["id"].tolist()
    numbers = json.loads((report.out_dir / "strategy_sweep.json").read_text())
    assert numbers["run_id"] == params.run_id
    assert numbers["headline"] == json.loads(headline(direct).to_json(orient="records"))


@pytest.mark.slow
def test_chosen_config_equals_choose_called_directly(report):
    data = yaml.safe_load((report.out_dir / "chosen_config.yaml").read_text())
    assert data["rule"]["constraints"] == [str(parse_constraint(c)) for c in CONSTRAINTS]
    recorded = data["rule"]
    rule = cx.make_rule(primary_metric=recorded["primary_metric"], retriever="bm25",
                        constraints=recorded["constraints"], tie_break=recorded["tie_break"])
    corpus = load_corpus(MINI)
    choice = ch.choose(report.out_dir, rule, queries=load_queries(MINI / "queries.jsonl",
                                                                  corpus), corpus=corpus)
    assert data["config_id"] == choice.config.config_id
    assert load_config(report.out_dir / "chosen_config.yaml") == choice.config
    assert data["runner_up"]["config_id"] == choice.runner_up["config_id"]
    assert data["scores"]["answer_hit@5"]["mean"] == pytest.approx(
        choice.scores["answer_hit@5"]["mean"])
    assert data["decided_by"] == choice.decided_by and data["verdict"] == " ".join(
        choice.verdict.sentences())


@pytest.mark.slow
def test_the_exported_config_reproduces_the_scored_chunks(report, tmp_path):
    config = report.out_dir / "chosen_config.yaml"
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(MINI), "--config", str(config),
                 "--out", str(out)]) == 0
    produced = pd.DataFrame([json.loads(line) for line in out.read_text().splitlines()])
    scored = pd.read_parquet(report.out_dir / "chunks.parquet")
    scored = scored[scored["config_id"] == load_config(config).config_id]
    keys = ["id", "doc_id", "start", "end", "text"]
    assert produced[keys].to_dict("records") == scored[keys].to_dict("records")


@pytest.mark.slow
def test_the_choice_page_links_chosen_config_and_holds_no_dump_of_it(report):
    page = (report.out_dir / "06_choose_and_export.html").read_text()
    assert 'href="chosen_config.yaml"' in page and 'href="constraint_margins.svg"' in page
    data = yaml.safe_load((report.out_dir / "chosen_config.yaml").read_text())
    assert data["verdict"][:40] in html.unescape(page)  # the verdict is said
    for key in ("chunkproof_version:", "tie_break_means:", "run_id:", "corpus:"):
        assert key not in page, key


def printed_lines(page: str) -> list[str]:
    """The code blocks of an index page's "Apply the pick" section, as a user copies them."""
    section = page[page.index('<h2 id="apply">'):]
    return [html.unescape(code) for code in re.findall(r'<pre class="apply">(.*?)</pre>',
                                                       section, flags=re.DOTALL)]


@pytest.mark.slow
def test_what_the_index_prints_runs_as_printed_and_gives_the_scored_chunks(report, holdout):
    """The report's corpus lies outside the repository and the home folder (the page shows
    it by its last two names only): the command and the Python lines, run in the report
    folder as the page says, still find it."""
    assert not report.out_dir.is_relative_to(ROOT)
    assert ".../" + "/".join(holdout.parts[-2:]) in report.index.read_text()
    command, python = printed_lines(report.index.read_text())[:2]
    assert command.startswith("chunkproof chunk ")
    scripts = {**os.environ,
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(command, shell=True, cwd=report.out_dir, env=scripts,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    printed = report.out_dir / "chunks.jsonl"
    produced = [json.loads(line)["id"] for line in printed.open()]
    printed.unlink()
    ran = subprocess.run([sys.executable, "-c", python + "\nprint([c.id for c in chunks])"],
                         cwd=report.out_dir, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    scored = pd.read_parquet(report.out_dir / "chunks.parquet")
    chosen = load_config(report.out_dir / "chosen_config.yaml").config_id
    assert produced == list(scored[scored["config_id"] == chosen]["id"])
    assert ast.literal_eval(ran.stdout) == produced


@pytest.mark.slow
@pytest.mark.parametrize(("name", "parameters", "message"), [
    ("02_splitter_panorama", {"DOC": "nope.md"}, "DOC: 'nope.md' is not a document"),
    ("06_choose_and_export", {"CONSTRAINTS": ["__import__('os')"]}, "CONSTRAINTS: cannot parse"),
])
def test_a_bad_value_fails_in_the_validation_cell_naming_it(report, tmp_path, name, parameters,
                                                            message):
    values = {"CORPUS": str(MINI), "QUERIES": str(MINI_QUERIES), "RUN_DIR": str(report.out_dir),
              "OUT_DIR": str(tmp_path), **parameters}
    values = {k: v for k, v in values.items() if k in defaults(name)}
    output = tmp_path / f"{name}.ipynb"
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(str(NB_DIR / f"{name}.ipynb"), str(output),
                                   parameters=values, kernel_name="python3", cwd=str(ROOT),
                                   progress_bar=False)
    assert message in caught.value.evalue
    failed = [c for c in nbformat.read(output, as_version=4).cells
              if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert [c.id for c in failed] == ["validate"]


@pytest.mark.slow
def test_a_mistyped_papermill_parameter_fails_in_one_line_naming_the_valid_ones(tmp_path):
    output = tmp_path / "03_strategy_sweep.ipynb"
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(str(NB_DIR / "03_strategy_sweep.ipynb"), str(output),
                                   parameters={"SIZE": 300, "OUT_DIR": str(tmp_path / "run")},
                                   kernel_name="python3", cwd=str(ROOT), progress_bar=False)
    assert caught.value.evalue.startswith("SIZE: not a parameter of this notebook; valid "
                                          "parameters: ")
    assert "SIZES" in caught.value.evalue
    errors = [o for c in nbformat.read(output, as_version=4).cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1  # one line, no frames
    assert not (tmp_path / "run").exists()  # no default sweep ran


@pytest.mark.slow
def test_the_explorer_widget_is_exported_as_its_static_view(report):
    notebook = nbformat.read(report.out_dir / "04_chunk_explorer.ipynb", as_version=4)
    widgets = [o for c in notebook.cells for o in c.get("outputs", [])
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets and all("text/html" in o["data"] for o in widgets)
    page = (report.out_dir / "04_chunk_explorer.html").read_text(encoding="utf-8")
    assert page.count('class="chunkproof-view') >= len(widgets)  # the view, not an empty cell


@pytest.mark.slow
def test_kernels_started_together_never_share_a_socket(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    sources = []
    for stem in ("a", "b", "c"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"print('{stem}' * 3)")])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, tmp_path / f"{stem}.ipynb")
        sources.append(tmp_path / f"{stem}.ipynb")
    before = set(ROOT.iterdir())
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda s: run_notebook(s.stem, s, tmp_path, {}), sources))
    assert [(r.name, r.status) for r in runs] == [("a", "ok"), ("b", "ok"), ("c", "ok")]
    for run in runs:
        outputs = nbformat.read(run.notebook, as_version=4).cells[0].outputs
        assert outputs[0]["text"] == f"{run.name * 3}\n"  # each kernel answered its own client
    assert set(ROOT.iterdir()) == before  # no socket left in the working folder


@pytest.mark.slow
def test_a_failing_notebook_is_reported_and_the_rest_still_run(tmp_path):
    for stem, source in (("bad", "raise ValueError('boom')"), ("good", "print('fine')")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, tmp_path / f"{stem}.ipynb")
    result = build_report(tmp_path / "out", corpus=str(MINI), queries=str(MINI_QUERIES),
                          notebooks=[str(tmp_path / "bad.ipynb"), str(tmp_path / "good.ipynb")],
                          progress=False, **SWEEP)
    assert result.exit_code == 1
    assert [(r.name, r.status) for r in result.runs] == [("bad", "failed"), ("good", "ok")]
    index = result.index.read_text()
    assert "ValueError: boom" in index and 'href="good.html"' in index


UNMET = FIXTURES / "unmet_rule"
"""Six pages, each with one Python fence of about 1,400 tokens: the strategies that keep the
fence whole make a chunk longer than the encoder window (over_encoder_limit above 0.05), and
those that cut by size split it (code_integrity below 1), so no config meets 06's default
rule for dense retrieval (the encoder limit binds dense and hybrid only)."""
UNMET_GRID = {"corpus": str(UNMET), "queries": "", "sizes": [300, 600],
              "notebooks": ["03_strategy_sweep", "06_choose_and_export"],
              "strategies": ["rct", "ast_merge", "ast_breadcrumb"], "progress": False}


@pytest.mark.slow
def test_the_encoder_limit_binds_no_bm25_choice_and_the_report_says_so(tmp_path):
    report = build_report(tmp_path / "run", retrievers=["bm25"], **UNMET_GRID)
    assert not report.failed, [r.error for r in report.failed]
    data = yaml.safe_load((report.out_dir / "chosen_config.yaml").read_text())
    assert data["meets_rule"] is True and data["chunker"]["strategy"] != "rct"
    assert data["constraints_not_binding"] == [
        "over_encoder_limit <= 0.05 on dense,hybrid (does not apply to bm25)"]
    assert data["excluded_by_constraints"]
    assert all(line.startswith("rct/") and "fails code_integrity@b1024 >= 1" in line
               for line in data["excluded_by_constraints"])
    index = report.index.read_text()
    assert "Constraints that do not bind this retriever" in index
    assert "Excluded by a constraint" in index


@pytest.mark.slow
@pytest.mark.needs("dense")
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_a_report_where_no_config_meets_the_rule_still_completes(tmp_path, strict):
    report = build_report(tmp_path / "run", retrievers=["dense"], strict=strict, **UNMET_GRID)
    assert not report.failed, [r.error for r in report.failed]
    data = yaml.safe_load((report.out_dir / "chosen_config.yaml").read_text())
    assert data["meets_rule"] is False and "closest" in data["note"]
    assert data["decided_by"] == "closest to the rule"
    svg = (report.out_dir / "constraint_margins.svg").read_text()
    assert "code_integrity@b1024 &gt;= 1" in svg or "code_integrity@b1024 >= 1" in svg
    index = report.index.read_text()
    assert "No config meets every constraint" in index and "constraint_margins.svg" in index
    assert report.unmet_rule == data["note"]
    assert report.exit_code == (1 if strict else 0)
    executed = nbformat.read(report.out_dir / "06_choose_and_export.ipynb", as_version=4)
    assert "no config meets every constraint" in _text(executed)
