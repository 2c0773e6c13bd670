"""``chunkproof study`` end to end on three small sites, the pooled numbers checked against an
independent computation (each site's effect and its cluster-robust standard error worked
out here, pooled by statsmodels' combine_effects or by hand), and the results file: the same
study gives the same bytes, and a damaged file is refused in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chunkproof.errors import StudyError
from chunkproof.evaluation.run.engine import Engine
from chunkproof.evaluation.study.pooling import pool
from chunkproof.evaluation.study.results import read_results
from chunkproof.evaluation.study.sites import find_sites, read_source
from chunkproof.study_runner import StudyPlan, run_study
from study_sites import make_study

pytestmark = pytest.mark.slow
GRID = {"strategies": ("rct", "ast_breadcrumb"), "sizes": (300, 600),
        "budgets": (512, 1024, 2048), "draws": 4}


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
