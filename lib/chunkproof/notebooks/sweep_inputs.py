"""The parameters every notebook that runs a sweep takes (03, 05 and ``chunkproof report``),
and the sweep they describe: shared by those notebooks, owned by none."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator

from ..chunking.config import ChunkerConfig
from ..document.links import check_url_template
from ..errors import ConfigError, validation_message
from ..evaluation.run.defaults import contrasts_for
from ..evaluation.run.engine import ENGINES, Engine
from ..evaluation.run.sweep import SweepParams
from .params import (
    CorpusFolder,
    Flag,
    Modes,
    NonNegativeInt,
    NotebookParams,
    PositiveInt,
    PositiveInts,
    QueryFile,
    Retrievers,
    Sizes,
    SlugRuleName,
    Strategies,
    TextsOrNone,
    Unit,
    one_of,
)

EngineName = Annotated[str, BeforeValidator(one_of(lambda: ENGINES))]


class SweepInputs(NotebookParams):
    """What every notebook that runs a sweep passes (03, 05 and the report)."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    STRATEGIES: Strategies
    SIZES: Sizes
    RETRIEVERS: Retrievers
    K: PositiveInt = 5
    UNIT: Unit = "chars"
    HELD_OUT_QUERIES: QueryFile = ""
    SPLIT_SEED: NonNegativeInt = 0
    BUDGETS: PositiveInts = []
    MODES: Modes = ["plain"]
    CONTRASTS: TextsOrNone | None = Field(default=None, validate_default=True)
    ALL_PAIRS: Flag = False
    ENGINE: EngineName = "local"
    WORKERS: NonNegativeInt = 0
    ADDRESS: str = ""
    SLUG_RULE: SlugRuleName = "github"
    URL_TEMPLATE: str = ""

    @field_validator("URL_TEMPLATE")
    @classmethod
    def _url_template(cls, template: str) -> str:
        check_url_template(template)
        return template

    @field_validator("CONTRASTS")
    @classmethod
    def _contrasts(cls, values: list[str] | None, info: ValidationInfo) -> list[str]:
        """None: the default contrasts whose strategies are swept; given ones must be swept."""
        return contrasts_for(values, info.data.get("STRATEGIES") or [])


def sweep_params(inputs: SweepInputs, *, options: dict[str, Any] | None = None) -> SweepParams:
    """The SweepParams the checked inputs describe (paths already absolute); ``options`` are
    config options fixed for every config of the sweep, with SLUG_RULE and URL_TEMPLATE
    (how each chunk's anchor and href are made) among them when they are not the default."""
    if inputs.HELD_OUT_QUERIES and not inputs.QUERIES:
        raise ConfigError("HELD_OUT_QUERIES: give QUERIES too (the tuning set)")
    try:
        return _params(inputs, options or {})
    except ValidationError as err:
        raise ConfigError(validation_message(err, subject="invalid sweep parameters",
                                             upper=True)) from None


def _params(inputs: SweepInputs, options: dict[str, Any]) -> SweepParams:
    links = {name: value for name, value in (("slug_rule", inputs.SLUG_RULE),
                                             ("url_template", inputs.URL_TEMPLATE))
             if value != ChunkerConfig.model_fields[name].default}
    options = {**links, **options}  # every config links its chunks into the site
    return SweepParams(corpus=inputs.CORPUS, queries=inputs.QUERIES,
                       held_out_queries=inputs.HELD_OUT_QUERIES, split_seed=inputs.SPLIT_SEED,
                       strategies=tuple(inputs.STRATEGIES), sizes=tuple(inputs.SIZES),
                       retrievers=tuple(inputs.RETRIEVERS), k=inputs.K, unit=inputs.UNIT,
                       budgets=tuple(inputs.BUDGETS), contrasts=tuple(inputs.CONTRASTS or ()),
                       modes=tuple(inputs.MODES), options=options, all_pairs=inputs.ALL_PAIRS)


def sweep_engine(inputs: SweepInputs) -> Engine:
    """Where the checked inputs say the sweep runs (WORKERS 0: auto)."""
    return Engine.model_validate({"kind": inputs.ENGINE, "workers": inputs.WORKERS or None,
                                  "address": inputs.ADDRESS})
