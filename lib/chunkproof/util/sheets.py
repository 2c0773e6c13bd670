"""CSV text a spreadsheet opens as data: a text cell that starts like a formula is quoted."""

from __future__ import annotations

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (or hide where one starts)."""
QUOTE = "'"
"""Put before such a cell: the spreadsheet shows the text, and ``read_csv`` takes it off."""


def csv_text(frame: pd.DataFrame) -> str:
    """``frame.to_csv(index=False)`` with every text cell that starts with ``= + - @`` (or a
    tab or carriage return) led by ``'``, so a heading such as ``=HYPERLINK(...)`` is shown,
    not evaluated; numbers are left as they are."""
    return frame.apply(_quoted_column).to_csv(index=False)


def _text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))


def _quoted_column(column: pd.Series) -> pd.Series:
    if not _text(column):
        return column
    return column.map(lambda v: QUOTE + v if isinstance(v, str) and v.startswith(FORMULA_STARTS)
                      else v)


def read_csv(path, **options) -> pd.DataFrame:
    """A CSV ``csv_text`` wrote, its text cells as they were before quoting."""
    frame = pd.read_csv(path, **options)
    for name in frame.columns:
        if _text(frame[name]):
            frame[name] = frame[name].map(_unquoted)
    return frame


def _unquoted(value):
    if isinstance(value, str) and value.startswith(QUOTE) and value[1:2] and \
            value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value
