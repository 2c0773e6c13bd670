"""Three small study sites made from the sample corpus (its folders shared out, each with the
questions about its pages), for the tests of ``chunkproof study`` and the verdict's prior."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
SITES = {"alpha": ("api", "cli", "faq"), "beta": ("guides", "legal", "manuals", "misc"),
         "gamma": ("ops", "policy", "standards", "wiki")}
SOURCE = """---
site: {name}
repository: https://example.org/{name}
commit: "{commit}"
path: docs/
licence: MIT
vendored: 2026-12-0{day}
dialect: CommonMark
---

Part of the sample corpus, made a site for the tests.
"""


def make_study(root: Path) -> Path:
    """``root/study`` holding the three sites."""
    questions = [json.loads(line) for line in
                 (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    study = root / "study"
    for day, (name, folders) in enumerate(SITES.items(), start=1):
        site = study / name
        for folder in folders:
            shutil.copytree(SAMPLE / folder, site / "docs" / folder)
        mine = [q for q in questions if q["sources"][0].split("/")[0] in folders]
        (site / "queries.jsonl").write_text(
            "".join(json.dumps(q) + "\n" for q in mine), encoding="utf-8")
        (site / "SOURCE.md").write_text(SOURCE.format(name=name, commit="0" * 40, day=day),
                                        encoding="utf-8")
    return study
