"""ChunkerConfig: validation messages, ids, YAML round trip, chunk_document applies it."""

from __future__ import annotations

import pytest

from chunkproof import (
    ConfigError,
    UnknownStrategyError,
    chunk_document,
    load_config,
    make_config,
    make_document,
    save_config,
)
from chunkproof.chunking.config import parse_value


@pytest.mark.parametrize("values,field", [
    ({"size": 0}, "size"),
    ({"size": "big"}, "size"),
    ({"unit": "pages"}, "unit"),
    ({"overlap": 1000, "size": 500}, "overlap"),
    ({"min_size": 900, "size": 500}, "min_size"),
    ({"prefix_template": "no placeholder"}, "prefix_template"),
    ({"prefix_template": "{path} {x}"}, r"prefix_template: only the placeholder \{path\}"),
    ({"prefix_template": "{path} {0}"}, r"prefix_template: only the placeholder \{path\}"),
    ({"prefix_template": "{path.upper}"}, r"prefix_template: only the placeholder \{path\}"),
    ({"prefix_template": "{path} }"}, "prefix_template: .*braces"),
    ({"colour": "red"}, "colour"),
])
def test_bad_values_name_the_field(values, field):
    with pytest.raises(ConfigError, match=field):
        make_config(values)


def test_a_template_with_literal_braces_renders():
    config = make_config(strategy="ast_breadcrumb", prefix=True,
                         prefix_template="{{doc}} {path}")
    doc = make_document("a.md", "# A\n\ntext\n")
    assert chunk_document(doc, config)[0].embed_text.startswith("{doc} A")


@pytest.mark.parametrize("template", ["Section: {path} (docs)", "{path}", "{path} / {path}",
                                      "{{{path}}}"])
def test_every_template_renders_as_str_format_does(template):
    # A template with one {path} and no other brace is rendered by concatenation: the same text.
    config = make_config(strategy="ast_breadcrumb", prefix_template=template)
    doc = make_document("a.md", "# Guide\n\n## Install\n\ntext\n\n## Use\n\nmore\n")
    for chunk in chunk_document(doc, config):
        path = " > ".join(("Guide", *chunk.breadcrumb))
        assert chunk.embed_prefix == template.format(path=path) + "\n\n"


def test_unknown_strategy_lists_valid_names():
    with pytest.raises(UnknownStrategyError, match="valid strategies: .*ast_breadcrumb"):
        make_config(strategy="nope")


def test_config_id_is_stable_and_field_sensitive():
    a = make_config(strategy="ast_merge", size=500)
    assert a.config_id == make_config({"size": 500, "strategy": "ast_merge"}).config_id
    assert a.config_id != a.replace(size=501).config_id
    assert a.options() == {}
    assert a.replace(min_size=50).options() == {"min_size": 50}


def test_yaml_round_trip_with_extra_sections(tmp_path):
    config = make_config(strategy="ast_breadcrumb", size=700, min_size=100, number_parts=True)
    path = save_config(config, tmp_path / "chosen.yaml", rule={"metric": "recall@5"})
    assert load_config(path) == config
    assert "rule:" in path.read_text()


def test_edited_config_file_is_detected(tmp_path):
    path = save_config(make_config(size=700), tmp_path / "c.yaml")
    path.write_text(path.read_text().replace("size: 700", "size: 800"))
    with pytest.raises(ConfigError, match="config_id"):
        load_config(path)


def test_unreadable_config_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")


@pytest.mark.parametrize("content,message", [
    (b"chunker: ast_merge\n", "'chunker:' must be a mapping of config fields"),
    (b"chunker:\n  strategy: ast_merge\n  size: \xff\n", "not UTF-8 text"),
    (b"- a\n- b\n", "must be a YAML mapping"),
    (b"chunker: {size: [1\n", "not valid YAML"),
    (b"[" * 5000 + b"]" * 5000, "nested too deep"),
])
def test_a_malformed_config_file_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as caught:
        load_config(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_folder_given_as_config_is_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(tmp_path)


def test_chunk_document_applies_the_config():
    config = make_config(strategy="ast_merge", size=50)
    chunks = chunk_document(make_document("d.md", "# A\n\n" + "word " * 40 + "\n"), config)
    assert len(chunks) > 2 and all(c.strategy == "ast_merge" for c in chunks)


@pytest.mark.parametrize(
    "text,value", [("200", 200), ("true", True), ("null", None), ("Ctx: {path}", "Ctx: {path}")]
)
def test_set_values_parse_as_yaml_scalars(text, value):
    assert parse_value(text) == value
