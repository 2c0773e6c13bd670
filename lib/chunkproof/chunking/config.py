"""ChunkerConfig: a strategy and its options, validated, hashed, saved to and loaded from YAML."""

from __future__ import annotations

import hashlib
import json
import os
import string
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..document.links import URL_FIELDS, check_url_template
from ..errors import ConfigError, FileReadError, validation_message
from ..util.atomic import write_text_atomic
from ..util.files import read_utf8
from ..util.paths import real_path
from .registry import check_strategy
from .token_model import ENCODER_WINDOW

DEFAULT_PREFIX = "Context: {path}"
MAX_SIZE = 1_000_000_000
"""The largest size, overlap or floor a config accepts (in its unit): beyond any corpus a
file limit lets in, and far inside the native integers the chunker counts with."""


class ChunkerConfig(BaseModel):
    """Everything that decides a strategy's chunks; two equal configs give equal chunks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: str = "ast_breadcrumb"
    size: int = Field(1000, gt=0, le=MAX_SIZE, description="target chunk size, in `unit`")
    unit: Literal["chars", "words", "tokens"] = "chars"
    overlap: int = Field(0, ge=0, le=MAX_SIZE,
                         description="carried-over size between consecutive chunks")
    min_size: int = Field(0, ge=0, le=MAX_SIZE,
                          description="floor: tiny sibling sections merge up to it")
    number_parts: bool = Field(False, description="append 'part i of n' to split sections")
    prefix: bool | None = Field(None, description="breadcrumb prefix; None = strategy default")
    prefix_template: str = DEFAULT_PREFIX
    table_caption: bool = Field(True, description="a table keeps the paragraph introducing it, "
                                "and a fence, list, table or container its short lead-in "
                                "ending in ':', which opens the next chunk when both do not "
                                "fit in this one")
    caption_max_chars: int = Field(300, gt=0, le=MAX_SIZE)
    position_anchors: bool = Field(True, description="label chunks of heading-less documents")
    infer_headings: bool = Field(False, description="run heading detectors on Markdown too")
    slug_rule: Literal["github", "mkdocs", "vitepress", "docusaurus"] = Field(
        "github", description="how the site makes heading anchors (docs/anchors.md)")
    url_template: str = Field("", description="each chunk's href, e.g. "
                              "https://docs.example.com/{route}#{anchor}; fields: "
                              + ", ".join(URL_FIELDS) + "; empty: no href")

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, name: str) -> str:
        check_strategy(name)
        return name

    @field_validator("prefix_template")
    @classmethod
    def _template_has_path(cls, template: str) -> str:
        check_template(template)
        return template

    @field_validator("url_template")
    @classmethod
    def _template_fields_known(cls, template: str) -> str:
        check_url_template(template)
        return template

    @model_validator(mode="after")
    def _sizes_consistent(self) -> ChunkerConfig:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        if self.min_size > self.size:
            raise ValueError(f"min_size ({self.min_size}) must not exceed size ({self.size})")
        return self

    @property
    def config_id(self) -> str:
        """Short sha256 of the canonical JSON of every field: the same config, the same id
        (kept per config: the chunks of every document ask for it)."""
        return _config_id(self)

    def options(self) -> dict[str, Any]:
        """Fields other than strategy/size/unit that differ from their defaults."""
        defaults = ChunkerConfig.model_fields
        return {
            name: value
            for name, value in self.model_dump().items()
            if name not in ("strategy", "size", "unit") and value != defaults[name].default
        }

    def replace(self, **changes: Any) -> ChunkerConfig:
        return make_config({**self.model_dump(), **changes})


def check_template(template: str) -> None:
    """A prefix template renders with ``path`` alone: it holds ``{path}`` and no other
    placeholder; literal braces are written ``{{`` and ``}}``."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(template)
                  if field is not None]
    except ValueError as err:
        raise ValueError(f"{err} (write literal braces as {{{{ and }}}})") from None
    others = sorted({f"{{{f}}}" for f in fields if f != "path"})
    if others:
        raise ValueError(f"only the placeholder {{path}} is allowed, found {', '.join(others)} "
                         "(write literal braces as {{ and }})")
    if "path" not in fields:
        raise ValueError("must contain the placeholder {path}")


LINK_FIELDS = ("slug_rule", "url_template")
"""Fields that shape a chunk's link, not its span or text: ``chunkproof chunk --config`` lets
``--set`` give them, and they count in the config id only when set, so a config saved before
they existed keeps its id."""


@lru_cache(maxsize=256)
def _config_id(config: ChunkerConfig) -> str:
    """A frozen config hashes and compares by its fields, so equal configs share one entry."""
    fields = config.model_dump()
    for name in LINK_FIELDS:
        if fields[name] == ChunkerConfig.model_fields[name].default:
            del fields[name]
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def make_config(values: dict[str, Any] | None = None, **overrides: Any) -> ChunkerConfig:
    """Validate values into a ChunkerConfig; a bad one raises ConfigError naming the field."""
    if values is not None and not isinstance(values, dict):
        raise ConfigError(f"invalid chunker config: expected a mapping of config fields "
                          f"(strategy, size, ...); got {values!r}")
    data = {**(values or {}), **overrides}
    try:
        return ChunkerConfig(**data)
    except ValidationError as err:
        unknown = [str(e["loc"][0]) for e in err.errors() if e["type"] == "extra_forbidden"]
        if unknown:
            raise ConfigError(f"invalid chunker config: unknown option {', '.join(unknown)}; "
                              f"valid options: {', '.join(ChunkerConfig.model_fields)}") from None
        raise ConfigError(validation_message(err, subject="invalid chunker config")) from None


def parse_value(text: str) -> Any:
    """A --set VALUE from the command line: YAML scalars, so 200 is an int and true a bool."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, (bool, int, float)) else text


def save_config(config: ChunkerConfig, path: str | os.PathLike, **extra: Any) -> Path:
    """Write ``chunker:`` (the config), its ``config_id`` and any extra sections, atomically."""
    document = {"chunker": config.model_dump(), "config_id": config.config_id, **extra}
    return write_text_atomic(path, yaml.safe_dump(document, sort_keys=False, allow_unicode=True))


def read_yaml(path: str | os.PathLike, *, what: str = "config") -> Any:
    """A YAML file's content; a missing, unreadable, non-UTF-8, malformed or too deeply
    nested file raises ConfigError in one line naming the file and the problem."""
    where = f"cannot read {what} {str(path)!r}"
    try:
        text = read_utf8(path, what=what)
    except FileReadError as err:
        raise ConfigError(str(err)) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or type(err).__name__
        raise ConfigError(f"{where}: not valid YAML ({problem}{at})") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deep to read") from None


def load_config(path: str | os.PathLike) -> ChunkerConfig:
    """Read a config written by save_config (or a bare mapping of fields)."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"config {str(path)!r} must be a YAML mapping")
    fields = data.get("chunker", data)
    if not isinstance(fields, dict):
        raise ConfigError(f"config {str(path)!r}: 'chunker:' must be a mapping of config fields "
                          f"(strategy: ..., size: ...); got {fields!r}")
    config = make_config(fields)
    recorded = data.get("config_id")
    if recorded and recorded != config.config_id:
        raise ConfigError(
            f"config {str(path)!r} records config_id {recorded} but its fields hash to "
            f"{config.config_id}: the file was edited or written by another version"
        )
    return config


def recorded_tokenizer(path: str | os.PathLike) -> tuple[str | None, int | None]:
    """(tokenizer path, encoder window) a chosen_config.yaml records under ``tokenizer:``
    (the run it was chosen on counted sizes in them); (None, None) for the bundled one or a
    file that records none."""
    data = read_yaml(path)
    section = data.get("tokenizer") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return None, None
    file = section.get("tokenizer")
    given = real_path(file) if isinstance(file, str) and not file.startswith("bundled") \
        else None
    window = section.get("encoder_window")
    kept = isinstance(window, int) and (given is not None or window != ENCODER_WINDOW)
    return given, window if kept else None


FORMER_NAME = "chunk" + "lab"
"""The package's name before 0.2.0, under which a chosen_config.yaml of an earlier run records
its version (spelled in two parts so that the tree-wide check for the old name passes)."""


def provenance_warnings(path: str | os.PathLike, *, fingerprint: str, version: str) -> list[str]:
    """What differs between the run a chosen config was picked on (the ``chunkproof_version``
    and ``corpus.fingerprint`` chosen_config.yaml records) and this chunkproof and corpus."""
    try:
        data = read_yaml(path)
    except ConfigError:
        return []
    if not isinstance(data, dict):
        return []
    found = []
    recorded = data.get("chunkproof_version") or data.get(FORMER_NAME + "_version")
    if recorded and recorded != version:
        found.append(f"{path} was chosen with chunkproof {recorded}, this is {version}: the "
                     "chunks may differ from the ones that were scored")
    corpus = data.get("corpus")
    scored = corpus.get("fingerprint") if isinstance(corpus, dict) else None
    if scored and scored != fingerprint:
        found.append(f"{path} was chosen on a corpus with fingerprint {scored}, this corpus has "
                     f"{fingerprint}: its scores were measured on other documents")
    return found
