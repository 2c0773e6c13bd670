"""A corpus built to break things: script payloads in file and folder names, headings, front
matter and query text; files that are no regular file, nest too deep or loop back on
themselves. Each payload, if it ever ran in a browser, sets an attribute on the page root
(``data-pwned``) that a test reads back from the rendered DOM; the attribute's name never
appears whole in the source, so escaped text cannot be mistaken for a payload that ran."""

from __future__ import annotations

import json
import os
from pathlib import Path

RAN = 'data-pwned="'
"""What the rendered DOM holds once any payload has run (the value is the payload's tag)."""


def payload(tag: str) -> str:
    """JavaScript marking the page with ``tag``: no slash, so it fits in a file name."""
    return f"document.documentElement.setAttribute('data-'+'pwned','{tag}')"


def carriers(tag: str) -> list[str]:
    """The same payload in the shapes that run when pasted into HTML or Markdown unescaped."""
    js = payload(tag)
    return [f"<img src=x onerror=\"{js}\">", f"<svg onload=\"{js}\">",
            f"<script>{js}</script>", f"[click](javascript:{js})",
            f"\"><img src=x onerror={js}>"]


HEADINGS_DOC = """# Guide <img src=x onerror="{js_h1}">

Plain words about syncing notes between devices, for the queries to find.

## Setup <script>{js_h2}</script>

Install the tool, then run the sync command once a day. The sync interval is 300 seconds.

## Links [click](javascript:{js_link}) and <svg onload="{js_svg}">

A paragraph with inline <b onmouseover="{js_b}">markup</b> and a raw block below.

<div><img src=x onerror="{js_div}"></div>

```
a fence holding ``` and <script>{js_fence}</script>
```

### Nested `code` <iframe srcdoc="<script>{js_iframe}</script>"></iframe>

Last words of the guide: backups are kept for thirty days.
"""

FRONT_MATTER_DOC = """---
title: "Title <img src=x onerror=\\"{js_title}\\">"
description: "About <script>{js_desc}</script>"
owner: "<svg onload=\\"{js_owner}\\">"
---
Release notes without a heading: the client now retries a failed upload three times before it
reports an error to the user. Retries wait longer each time.

Second paragraph: the cache is cleared when the user signs out of every device.
"""


def _fill(template: str, prefix: str) -> str:
    names = {part.split("}")[0] for part in template.split("{js_")[1:]}
    return template.format(**{f"js_{n}": payload(f"{prefix}-{n}") for n in names})


def write_hostile_corpus(root: Path) -> dict[str, Path]:
    """Write the hostile corpus under ``root``; return its query file and the special files.

    Loaded, it holds four documents (two with hostile names) and skips the files nobody can
    read: front matter nested 500 deep, a FIFO named ``pipe.md``, binary and non-UTF-8 files;
    a symlink loop that must not read any file twice.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "guide.md").write_text(_fill(HEADINGS_DOC, "heading"), encoding="utf-8")
    (root / "release.md").write_text(_fill(FRONT_MATTER_DOC, "fm"), encoding="utf-8")
    named = root / f"{carriers('file')[0]}.md"  # quoted: Markdown passes it through as HTML
    named.write_text("# Named file\n\nA file whose name carries a script: its text is plain.\n"
                     "The archive holds every page for a year.\n", encoding="utf-8")
    folder = root / carriers("folder")[1]
    folder.mkdir()
    (folder / "inside.md").write_text("# Inside\n\nA page in a folder whose name carries a "
                                      "script. Exports are written as CSV files.\n",
                                      encoding="utf-8")
    deep = "---\n" + "".join("  " * i + f"k{i}:\n" for i in range(500)) + "---\n# Deep\n"
    (root / "deep_front_matter.md").write_text(deep, encoding="utf-8")
    (root / "binary.md").write_bytes(b"# Bin\x00ary\n")
    (root / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    os.mkfifo(root / "pipe.md")
    os.symlink(".", root / "loop")
    queries = root.parent / f"{root.name}.queries.jsonl"
    rows = [
        {"id": "q-sync", "query": f"sync interval {carriers('query-sync')[0]}",
         "sources": ["guide.md"], "answer": "The sync interval is 300 seconds."},
        {"id": f"q-<script>{payload('query-id')}</script>",
         "query": f"retries {carriers('query-retry')[2]}", "sources": ["release.md"],
         "answer": "three times"},
        {"id": "q-archive", "query": f"archive {carriers('query-archive')[3]}",
         "sources": [named.name], "answer": "every page for a year"},
        {"id": "q-export", "query": f"exports {carriers('query-export')[1]}",
         "sources": [f"{folder.name}/inside.md"], "answer": "written as CSV files"},
        {"id": "q-backup", "query": f"backups kept {carriers('query-backup')[4]}",
         "sources": ["guide.md"], "answer": "kept for thirty days"},
        {"id": "q-cache", "query": "when is the cache cleared", "sources": ["release.md"],
         "answer": "signs out of every device"},
    ]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"queries": queries, "named": named, "folder": folder}


LOADED = 4
"""Documents the hostile corpus loads: guide, release, the named file and the file in the
named folder; none of the unreadable ones (deep front matter, FIFO, binary, non-UTF-8)."""
