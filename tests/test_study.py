"""``chunkproof study`` end to end on three small sites, the pooled numbers checked against an
independent computation (each site's effect and its cluster-robust standard error worked
out here, pooled by statsmodels' combine_effects or by hand), the mined kinds' agreement
pooled and judged (``--mined``), and the results file: the same study gives the same bytes,
and a damaged file is refused in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chunkproof.errors import ConfigError, StudyError
from chunkproof.evaluation.run.engine import Engine
from chunkproof.evaluation.run.runs import load_run
from chunkproof.evaluation.scoring.agreement import written_ceiling
from chunkproof.evaluation.study import pages as study_pages
from chunkproof.evaluation.study.kinds import (
    admitted_without,
    evidence_by_site,
    judge_all,
    kind_tables,
    pooled_all,
)
from chunkproof.evaluation.study.pooling import pool
from chunkproof.evaluation.study.results import read_results
from chunkproof.evaluation.study.sites import find_sites, read_source
from chunkproof.study_runner import StudyPlan, run_study
from study_sites import make_study

pytestmark = pytest.mark.slow
GRID = {"strategies": ("rct", "ast_breadcrumb"), "sizes": (300, 600),
        "budgets": (512, 1024, 2048), "draws": 4, "mined": True}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    folder = make_study(root)
    plan = StudyPlan(str(folder), str(root / "run"), engine=Engine(kind="local", workers=1),
                     **GRID)
    return folder, plan, run_study(plan, progress=lambda _: None)


def _site_effect_by_hand(values_a, values_b, pages):
    diff = np.asarray(values_a, dtype=float) - np.asarray(values_b, dtype=float)
    n, mean = len(diff), diff.mean()
    totals = {}
    for page, d in zip(pages, diff, strict=True):
        totals.setdefault(page, [0.0, 0])
        totals[page][0] += d
        totals[page][1] += 1
    g = len(totals)
    square = sum((t - size * mean) ** 2 for t, size in totals.values())
    se = math.sqrt(g / (g - 1) * square) / n
    return mean, max(se, 0.5 / n)


def test_each_site_is_swept_into_a_run_folder_and_the_results_file_is_written(study):
    folder, plan, results = study
    for name in ("alpha", "beta", "gamma"):
        assert (plan.out and (folder.parent / "run" / "sites" / name / "written" /
                              "per_query.parquet").is_file())
    assert (folder.parent / "run" / "study.json").is_file()
    assert (folder.parent / "run" / "forest_bm25_answer_hit_b1024.svg").is_file()
    assert results.meta["questions"] == 95
    assert results.meta["sites"] == ["alpha", "beta", "gamma"]
    assert results.meta["date"] == "2026-12-03"


def test_the_pooled_effects_match_an_independent_computation(study):
    _, _, results = study
    prior = results.prior
    rows = [r for r in results.table("pooled") if r["retriever"] == "bm25"
            and r["metric"] == "answer_hit@b1024" and r["config"] != prior.reference]
    assert rows
    statsmodels = pytest.importorskip("statsmodels.stats.meta_analysis")
    for row in rows:
        effects, variances = [], []
        for site in prior.sites:
            table = site.table("bm25", "answer_hit@b1024")
            mean, se = _site_effect_by_hand(table[row["config"]], table[prior.reference],
                                            site.pages)
            effects.append(mean)
            variances.append(se * se)
        found = statsmodels.combine_effects(np.array(effects), np.array(variances),
                                            method_re="chi2")
        weights = 1 / np.array(variances)
        fixed = (weights * effects).sum() / weights.sum()
        q = (weights * (np.array(effects) - fixed) ** 2).sum()
        assert row["q"] == pytest.approx(q)
        if found.tau2 > 0:  # statsmodels leaves a negative tau^2 unclipped
            assert row["tau2"] == pytest.approx(found.tau2)
            assert row["effect"] == pytest.approx(found.mean_effect_re)
            assert row["se"] == pytest.approx(found.sd_eff_w_re)
        else:  # clipped at 0: the random-effects mean is the fixed-effect one
            assert row["tau2"] == 0.0
            assert row["effect"] == pytest.approx(fixed)
            assert row["se"] == pytest.approx(math.sqrt(1 / weights.sum()))


def test_dersimonian_laird_worked_by_hand_with_heterogeneity():
    effects, ses = [0.1, 0.5, 0.2, -0.1, 0.35], [0.001 ** 0.5, 0.002 ** 0.5, 0.0015 ** 0.5,
                                                 0.001 ** 0.5, 0.003 ** 0.5]
    found = pool(effects, ses)
    # Q = 83.37..., C = 2896.03..., tau^2 = (Q - 4) / C (worked on paper from the weights)
    w = np.array([1000, 500, 666.6666666666666, 1000, 333.3333333333333])
    fixed = float((w * np.array(effects)).sum() / w.sum())
    q = float((w * (np.array(effects) - fixed) ** 2).sum())
    c = float(w.sum() - (w * w).sum() / w.sum())
    tau2 = (q - 4) / c
    assert found.tau2 == pytest.approx(tau2)
    assert found.i2 == pytest.approx((q - 4) / q)
    w_re = 1 / (np.array(ses) ** 2 + tau2)
    assert found.effect == pytest.approx(float((w_re * effects).sum() / w_re.sum()))
    half = 3.182446305284263 * math.sqrt(tau2 + found.se ** 2)  # t(0.975, 3)
    assert (found.pi_low, found.pi_high) == pytest.approx((found.effect - half,
                                                           found.effect + half))


def test_the_calibration_and_validation_tables_are_there(study):
    _, _, results = study
    rows = results.table("calibration")
    assert {r["rule"] for r in rows} == {"new", "old"}
    assert {(r["retriever"], r["metric"]) for r in rows} >= {("bm25", "answer_hit@b1024")}
    assert all(0.0 <= r["inside"] <= 1.0 for r in rows)
    assert {r["site"] for r in results.table("validation")} == {"alpha", "beta", "gamma"}


def test_the_same_study_writes_the_same_bytes(study, tmp_path):
    folder, plan, results = study
    again = results.write(tmp_path / "again.json")
    assert again.read_bytes() == (folder.parent / "run" / "study.json").read_bytes()
    back = read_results(again)
    assert back.write(tmp_path / "third.json").read_bytes() == again.read_bytes()


def test_a_damaged_results_file_is_refused_in_one_line(study, tmp_path):
    folder, _, _ = study
    data = json.loads((folder.parent / "run" / "study.json").read_text())
    data["evidence"]["alpha"]["values"]["bm25 answer_hit@b1024"]["rct/300"] = "01x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(StudyError, match="site 'alpha' is malformed"):
        read_results(bad)
    bad.write_text("{")
    with pytest.raises(StudyError, match="not JSON"):
        read_results(bad)


def test_sites_need_their_source_header(tmp_path):
    folder = make_study(tmp_path)
    (folder / "beta" / "SOURCE.md").write_text("# no header\n")
    with pytest.raises(StudyError, match="no YAML header"):
        find_sites(folder)
    with pytest.raises(StudyError, match="no site 'delta'"):
        find_sites(folder, ("delta",))
    assert read_source(folder / "alpha" / "SOURCE.md")["licence"] == "MIT"


def test_every_mined_kind_is_judged_on_every_site(study):
    folder, _, results = study
    per_site = results.table("kind_sites")
    for name in ("alpha", "beta", "gamma"):
        assert (folder.parent / "run" / "sites" / name / "mined" / "per_query.parquet").is_file()
    mined = {(r["site"], r["kind"]) for r in per_site}
    assert {k for _, k in mined} >= {"keyword", "partial", "title"}
    assert {r["kind"] for r in results.table("kinds")} == {k for _, k in mined}
    assert (folder.parent / "run" / "kinds.csv").read_text().startswith("kind,rho,")
    keyword = [r for r in per_site if r["kind"] == "keyword"]
    assert all("/" in r["written_best"] for r in keyword)  # study names, not config ids


def test_each_site_has_its_written_questions_ceiling_and_the_docs_table_shows_it(study):
    folder, _, results = study
    rows = {r["site"]: r for r in results.table("ceiling")}
    assert set(rows) == {"alpha", "beta", "gamma"}
    for name, row in rows.items():
        written = load_run(folder.parent / "run" / "sites" / name / "written")
        expected = written_ceiling(written)
        for column in ("questions", "pages", "split_half", "reliability", "ceiling"):
            assert _same(row[column], expected[column]), (name, column)
    assert (folder.parent / "run" / "ceiling.csv").read_text().startswith("site,questions,")
    table = study_pages.kinds_markdown(results).splitlines()
    assert table[-1].startswith("| *ceiling: a perfect kind")
    assert table[-2].startswith("| *written vs written (split-half")
    assert table[-1].count("|") == table[0].count("|")


def _same(found, expected) -> bool:
    if found is None or found != found:
        return expected != expected
    return found == pytest.approx(expected, abs=1e-6)


def test_a_site_rho_is_the_rank_correlation_of_the_two_runs_config_means(study):
    folder, _, results = study
    scipy_stats = pytest.importorskip("scipy.stats")
    pandas = pytest.importorskip("pandas")
    site = folder.parent / "run" / "sites" / "alpha"

    def means(kind_or_none, which):
        rows = pandas.read_parquet(site / which / "per_query.parquet")
        rows = rows[(rows["retriever"] == "bm25") & (rows["metric"] == "answer_hit@b1024")]
        if kind_or_none:
            rows = rows[rows["query_kind"] == kind_or_none]
        return rows.pivot(index="query_id", columns="config_id", values="value").dropna().mean()

    written = means(None, "written")
    for row in results.table("kind_sites"):
        if row["site"] != "alpha" or not _defined(row["spearman"]):
            continue
        kind = means(row["kind"], "mined")
        expected = scipy_stats.spearmanr(kind[written.index], written).statistic
        assert row["spearman"] == pytest.approx(expected, abs=1e-6)


def test_a_kinds_pooled_rho_is_random_effects_on_fishers_z(study):
    _, _, results = study
    meta = pytest.importorskip("statsmodels.stats.meta_analysis")
    pooled = [r for r in results.table("kinds") if r["sites"] >= 2]
    assert pooled
    for row in pooled:
        sites = [r for r in results.table("kind_sites")
                 if r["kind"] == row["kind"] and _defined(r["spearman"])]
        z = np.arctanh(np.clip([r["spearman"] for r in sites], -0.999, 0.999))
        variances = np.array([1.06 / (r["configs"] - 3) for r in sites])
        found = meta.combine_effects(z, variances, method_re="chi2")
        effect = found.mean_effect_re if found.tau2 > 0 else (
            (z / variances).sum() / (1 / variances).sum())
        assert row["rho"] == pytest.approx(math.tanh(effect), abs=1e-6)


def _defined(value):
    return value is not None and not math.isnan(value)


def _rows(kind, rhos, inside, configs=16):
    return [{"site": f"s{i}", "kind": kind, "queries": 50, "scored": 50, "configs": configs,
             "spearman": rho, "kendall": rho, "kind_best": "a", "written_best": "a",
             "pick_inside": ok} for i, (rho, ok) in enumerate(zip(rhos, inside, strict=True))]


def test_a_kind_is_admitted_by_its_pooled_rho_interval_and_picks():
    good = _rows("good", [0.8, 0.75, 0.9, 0.7], [True, True, True, False])
    weak = _rows("weak", [0.5, 0.55, 0.6, 0.5], [True] * 4)
    astray = _rows("astray", [0.9, 0.85, 0.9, 0.8], [True, False, False, False])
    noisy = _rows("noisy", [0.9, 0.7], [True, True], configs=4)
    verdicts = judge_all(good + weak + astray + noisy)
    assert verdicts["good"].admitted and verdicts["good"].rho >= 0.6
    assert not verdicts["weak"].admitted and "< 0.6" in verdicts["weak"].why
    assert not verdicts["astray"].admitted and "on 1 of 4 sites" in verdicts["astray"].why
    assert not verdicts["noisy"].admitted and "reaches 0" in verdicts["noisy"].why
    unscored = [{**r, "scored": 0, "spearman": math.nan} for r in _rows("title", [0, 0],
                                                                         [False, False])]
    assert "no query of it has an answer span" in judge_all(unscored)["title"].why


def test_a_kind_that_does_not_hold_on_a_site_left_out_is_not_admitted():
    # the pooled rule admits it (five sites agree strongly), but admitted without s5 it
    # would rank s5's configs against its written questions at 0.4: it does not decide
    rows = _rows("mostly", [0.9, 0.9, 0.85, 0.9, 0.95, 0.4], [True] * 6)
    assert pooled_all(rows)["mostly"].admitted and pooled_all(rows, leave_out="s5")[
        "mostly"].admitted
    verdict = judge_all(rows)["mostly"]
    assert not verdict.admitted and "on 5 of 6 sites (not on s5)" in verdict.why
    steady = _rows("steady", [0.9, 0.9, 0.85, 0.9, 0.95, 0.7], [True] * 6)
    assert judge_all(steady)["steady"].admitted


def test_each_site_is_judged_by_the_kinds_admitted_without_it():
    # admitted overall, but only because of s0: left out, the other three fail it
    rows = _rows("lucky", [0.95, 0.3, 0.35, 0.3], [True, True, False, True])
    overall, per_site = kind_tables(rows + _rows("good", [0.8, 0.85, 0.9, 0.8], [True] * 4))
    assert {r["kind"]: r["admitted"] for r in overall} == {"good": True, "lucky": False}
    without = admitted_without(per_site)
    assert without == {f"s{i}": ("good",) for i in range(4)}
    assert all("admitted" not in r for r in per_site)  # admitted_kinds reads the overall rows


def test_mined_evidence_is_the_admitted_kinds_queries_under_study_names(study):
    folder, _, results = study
    run = load_run(folder.parent / "run" / "sites" / "beta" / "mined")
    rows = [{"site": "beta", "kind": "keyword", "admitted_without_site": True},
            {"site": "beta", "kind": "partial", "admitted_without_site": False}]
    found = evidence_by_site({"beta": run}, rows, "bm25", "answer_hit@b1024")["beta"]
    keyword = run.per_query[(run.per_query["query_kind"] == "keyword")]
    assert found is not None and found.name == "mined questions"
    assert set(found.values.index) == set(keyword["query_id"])
    assert set(found.values.columns) == set(results.prior.configs("bm25", "answer_hit@b1024"))
    none = [{**r, "admitted_without_site": False} for r in rows]
    assert evidence_by_site({"beta": run}, none, "bm25", "answer_hit@b1024") == {"beta": None}


def test_mined_kinds_need_bm25(tmp_path):
    folder = make_study(tmp_path)
    plan = StudyPlan(str(folder), str(tmp_path / "run"), retrievers=("dense",), mined=True)
    with pytest.raises(ConfigError, match="--mined: the kinds are judged under bm25"):
        run_study(plan, progress=lambda _: None)


def test_the_finding_says_how_far_below_the_best_the_smallest_size_falls(study):
    _, _, results = study
    versus = [r for r in results.table("versus_best") if r["metric"] == "answer_hit@b1024"
              and r["retriever"] == "bm25" and r["config"] != r["best"]
              and r["config"].endswith("/300")]
    assert versus  # the fixture's grid holds 300-char configs other than the best
    effects = [r["effect"] for r in versus]  # the best's score minus each
    text = study_pages.finding(results)
    assert f"{min(effects):.2f} to {max(effects):.2f} lower" in text


def test_the_former_rule_is_measured_on_mined_questions_too(study):
    _, _, results = study
    rows = [r for r in results.table("validation") if r["questions"] == 0]
    sites = {r["site"] for r in rows}
    assert {r["rule"] for r in rows} == {"old", "new"}
    assert all({(s, rule) for rule in ("old", "new")} <= {(r["site"], r["rule"]) for r in rows}
               for s in sites)
