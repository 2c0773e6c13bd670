"""The question panel in a real JupyterLab, driven by headless Chromium: notebook 07 run in the
page, a question typed and its answer pasted, the check shown as it is typed, the question
added with the button and found in the file the sweep reads, progress updated."""

from __future__ import annotations

import json

import nbformat
import pytest

from browser import needs_chromium
from conftest import ROOT
from lab import Lab, Page
from test_question_check import write_docs

pytestmark = [*needs_chromium, pytest.mark.slow]
PANEL = ".chunkproof-questions"
NOTEBOOK = "Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.sessionContext)"


def notebook_for(folder, corpus, questions):
    """Notebook 07 with its parameters pointing at ``corpus`` and ``questions``."""
    nb = nbformat.read(ROOT / "notebooks" / "07_write_questions.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = (f"CORPUS = {str(corpus)!r}\nQUERIES = {str(questions)!r}\n"
                   f"OUT_DIR = {str(folder / 'out')!r}\nTARGET = 3\nSEED = 0\n")
    path = folder / "07.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def lab(tmp_path):
    corpus = write_docs(tmp_path / "docs")
    notebook_for(tmp_path, corpus, tmp_path / "questions.jsonl")
    server = Lab(tmp_path)
    page = Page(tmp_path / "profile")
    try:
        yield server, page, tmp_path
    finally:
        page.close()
        server.stop()


def text_of(page, part: str) -> str:
    return page.evaluate(f"(document.querySelector('{PANEL}-{part}') || {{}}).innerText || ''")


def test_a_question_typed_in_jupyterlab_is_checked_and_appended(lab):
    server, page, folder = lab
    page.call("Page.navigate", url=server.url("lab/tree/07.ipynb"))
    page.wait_for(f"(() => {{ const w = window.jupyterapp && {NOTEBOOK}; const s = w && "
                  "w.sessionContext.session; return !!(s && s.kernel && "
                  "s.kernel.connectionStatus === 'connected'); })()")
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for(f"!!document.querySelector('{PANEL}-question textarea')")
    progress = page.wait_for(f"(document.querySelector('{PANEL}-progress') || {{}}).innerText")
    assert "0 of 3 questions" in progress
    shown = text_of(page, "source")
    doc = "notes.md" if "notes.md" in shown else "guide.md"
    question, answer = {
        "notes.md": ("Where do technicians record gateway visits?",
                     "in the maintenance register within one working day"),
        "guide.md": ("How many readings can wait before uploads stop?",
                     "forty thousand before uploads pause")}[doc]
    page.type_into(f"{PANEL}-question textarea", question)
    page.type_into(f"{PANEL}-answer textarea", answer[:12])
    status = page.wait_for(f"((document.querySelector('{PANEL}-status') || {{}}).innerText "
                           "|| '').includes('20-300') && document.querySelector("
                           f"'{PANEL}-status').innerText")
    assert "12 chars" in status  # checked as it is typed, in the kernel
    page.type_into(f"{PANEL}-answer textarea", answer[12:])
    page.wait_for(f"document.querySelector('{PANEL}-status').innerText.includes('ready')")
    page.evaluate(f"document.querySelector('{PANEL}-add').click()")
    page.wait_for(f"document.querySelector('{PANEL}-progress').innerText.includes('1 of 3')")
    page.screenshot(folder / "panel.png")
    [record] = [json.loads(line) for line in
                (folder / "questions.jsonl").read_text().splitlines()]
    assert record == {"id": "q-0001", "query": question, "sources": [doc], "answer": answer,
                      "kind": record["kind"]}
    assert record["kind"] in {"prose", "list"}
    assert page.evaluate(f"document.querySelector('{PANEL}-question textarea').value") == ""
