"""Reading a text file a user named: every way it can fail is one line naming the file."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import A_FOLDER, MISSING_FILE, FileReadError


def read_utf8(path: str | os.PathLike, *, what: str = "file") -> str:
    """The text of ``path``; FileReadError saying why it cannot be read (missing, a folder,
    no permission, not UTF-8)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        reason = A_FOLDER
    except FileNotFoundError:
        reason = MISSING_FILE
    except OSError as err:
        reason = err.strerror or str(err)
    except UnicodeDecodeError as err:
        reason = f"not UTF-8 text (byte {err.start}); save it as UTF-8"
    raise FileReadError(path, what, reason)
