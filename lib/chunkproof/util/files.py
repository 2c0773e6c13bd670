"""Reading a text file a user named: every way it can fail is one line naming the file."""

from __future__ import annotations

import hashlib
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


def folder_digest(folder: str | os.PathLike, salt: str = "") -> str:
    """sha256 (16 hex digits) of ``salt`` and every file under ``folder``: each one's name
    relative to it and its content, in name order (what a model folder is keyed by)."""
    root = Path(folder)
    digest = hashlib.sha256(salt.encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]
