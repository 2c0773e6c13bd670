"""Small generated corpora for the report-level fuzz: each kind is a way a user's folder can be
awkward (tiny, empty sections, one document, hostile names, only code, no headings, one query,
queries nothing answers); a seed varies the words, the counts and the sizes asked."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("sync", "interval", "archive", "token", "retry", "export", "cache", "backup", "queue",
         "worker", "index", "shard", "limit", "render", "parse", "budget", "anchor", "folder")
HOSTILE = ("=SUM(1+1)", "+cmd", "-2+3", "@import", "<b>bold</b>", "a b  c", "ünïcödé",
           "'quote\"", "tab\there", "%(x)s{y}")
KINDS = ("tiny", "hostile_names", "unanswerable", "all_code", "no_headings", "empty_sections",
         "one_document", "one_query")
"""In the order a short run meets them (the first three are the default test's)."""


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def section(rng: random.Random, level: int, title: str, paragraphs: int) -> str:
    body = "\n\n".join(sentence(rng, rng.randint(6, 16)) for _ in range(paragraphs))
    return f"{'#' * level} {title}\n\n{body}\n"


def document(rng: random.Random, title: str, sections: int) -> str:
    parts = [f"# {title}\n\n{sentence(rng)}\n"]
    parts += [section(rng, rng.choice((2, 3)), f"{rng.choice(WORDS).title()} {i}",
                      rng.randint(1, 3)) for i in range(sections)]
    return "\n".join(parts)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def _files(kind: str, rng: random.Random) -> dict[str, str]:
    if kind == "tiny":
        return {"a.md": f"# {rng.choice(WORDS)}\n\n{sentence(rng, 3)}\n"}
    if kind == "empty_sections":
        return {f"d{i}.md": "".join(f"{'#' * rng.randint(1, 4)} {w}\n\n"
                                    for w in rng.sample(WORDS, 5)) for i in range(3)}
    if kind == "one_document":
        return {"only.md": document(rng, "Only page", rng.randint(2, 6))}
    if kind == "hostile_names":
        names = rng.sample(HOSTILE, 4)
        return {f"{name}.md": f"# {name}\n\n{sentence(rng)}\n\n## {rng.choice(HOSTILE)}\n\n"
                              f"{sentence(rng)}\n" for name in names}
    if kind == "all_code":
        return {f"code{i}.md": "\n".join(f"```python\n{rng.choice(WORDS)} = {j}\n```\n"
                                         for j in range(rng.randint(1, 4))) for i in range(3)}
    if kind == "no_headings":
        return {"notes.txt": "\n\n".join(sentence(rng, 12) for _ in range(4)),
                "plain.md": "\n\n".join(sentence(rng, 10) for _ in range(3))}
    # one_query, unanswerable: an ordinary small corpus, its queries written beside it
    return {f"page{i}.md": document(rng, f"Page {i}", rng.randint(1, 3)) for i in range(3)}


def _queries(kind: str, root: Path, rng: random.Random) -> Path | None:
    rows = []
    if kind == "one_query":
        text = (root / "page0.md").read_text(encoding="utf-8")
        answer = text.split("\n")[2].rstrip(".")
        rows = [{"id": "q1", "query": " ".join(answer.split()[:3]), "sources": ["page0.md"],
                 "answer": answer}]
    elif kind == "unanswerable":
        rows = [{"id": f"q{i}", "query": f"zebra quasar nebula {i}", "sources": [f"page{i}.md"]}
                for i in range(3)]
    if not rows:
        return None
    path = root.parent / f"{root.name}.queries.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_corpus(root: Path, index: int, seed: int = 0) -> dict:
    """Corpus number ``index`` (its kind cycles through ``KINDS``) under ``root``: its kind,
    the query file ("" to mine) and the sizes and strategies the report is asked."""
    kind = KINDS[index % len(KINDS)]
    rng = random.Random(f"{seed}-{index}")
    root.mkdir(parents=True)
    write(root, _files(kind, rng))
    queries = _queries(kind, root, rng)
    sizes = sorted(rng.sample([50, 100, 200, 400, 800], rng.randint(1, 2)))
    strategies = rng.sample(["rct", "ast_merge", "ast_breadcrumb", "paragraph"],
                            rng.randint(1, 2))
    return {"kind": kind, "queries": str(queries or ""), "sizes": sizes,
            "strategies": strategies}
