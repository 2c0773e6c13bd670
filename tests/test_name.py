"""The project's name: the old one appears nowhere in the tracked tree but the README's history
note, and a chosen config written under the old name still loads with its provenance read."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from chunkproof.chunking.config import FORMER_NAME, load_config, provenance_warnings

ROOT = Path(__file__).resolve().parents[1]


def _tracked_files_naming(word: str) -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked tree cannot be listed")
    found = subprocess.run(["git", "grep", "-l", "-i", word], cwd=ROOT, capture_output=True,
                           text=True, check=False)
    return found.stdout.split()


def test_the_former_name_is_only_in_the_readme_history_note():
    assert _tracked_files_naming(FORMER_NAME) == ["README.md"]
    lines = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
             if FORMER_NAME in line.lower()]
    assert len(lines) == 1 and lines[0].startswith("Until version 0.2.0")


def test_a_config_chosen_under_the_former_name_loads_and_its_version_is_read(tmp_path):
    written = {"chunker": {"strategy": "ast_merge", "size": 600},
               f"{FORMER_NAME}_version": "0.1.0", "corpus": {"fingerprint": "abc"}}
    path = tmp_path / "chosen_config.yaml"
    path.write_text(yaml.safe_dump(written), encoding="utf-8")
    assert load_config(path).size == 600
    warned = provenance_warnings(path, fingerprint="abc", version="0.2.0")
    assert len(warned) == 1 and "chosen with chunkproof 0.1.0" in warned[0]
