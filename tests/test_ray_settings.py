"""A Ray job carries this process's chunkproof settings to its tasks and actors: a cluster
started before the command never saw its environment (the tokenizer chosen, the limits)."""

from __future__ import annotations

from chunkproof.util.ray_cluster import settings


def test_the_job_carries_every_chunkproof_setting_and_nothing_else(monkeypatch):
    monkeypatch.setenv("CHUNKPROOF_TOKENIZER", "/models/other/tokenizer.json")
    monkeypatch.setenv("CHUNKPROOF_ENCODER_WINDOW", "512")
    monkeypatch.setenv("HOME_OF_SOMETHING_ELSE", "x")
    found = settings()
    assert found["CHUNKPROOF_TOKENIZER"] == "/models/other/tokenizer.json"
    assert found["CHUNKPROOF_ENCODER_WINDOW"] == "512"
    assert all(name.startswith("CHUNKPROOF_") for name in found)


def test_joining_a_cluster_hands_the_settings_to_the_job(monkeypatch):
    from chunkproof.util import ray_cluster

    calls = []

    class FakeRay:
        def is_initialized(self):
            return False

        def init(self, **options):
            calls.append(options)

    monkeypatch.setattr(ray_cluster, "ray_module", lambda feature: FakeRay())
    monkeypatch.setenv("CHUNKPROOF_ENCODER_WINDOW", "321")
    ray_cluster.connect("auto", feature="test")
    assert calls[0]["runtime_env"]["env_vars"]["CHUNKPROOF_ENCODER_WINDOW"] == "321"
