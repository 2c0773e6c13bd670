"""The question-writing panel (ipywidgets): a section of the corpus, a question and its answer
typed or pasted in (from the page's source, or as the site renders it), checked as they are
typed, added to the question file with one click, and the file's progress; every rule is the
question book's (``evaluation.queries.question_book``)."""

from __future__ import annotations

import html

from ..errors import QueryValidationError
from ..evaluation.queries.question_book import QuestionBook
from ..evaluation.queries.question_sections import Section

SHOWN_CHARS = 4000
"""A section longer than this is shown cut, with a note."""
PANEL_CLASS = "chunkproof-questions"
"""CSS class of the panel and, suffixed, of each of its parts (a browser finds them by it)."""


def section_html(section: Section | None, doc) -> str:
    """The section as the panel shows it: where it is, its kind, its text (escaped)."""
    if section is None:
        return "<p>The corpus has no section with text to ask about.</p>"
    text = section.text(doc)
    cut = len(text) > SHOWN_CHARS
    shown = html.escape(text[:SHOWN_CHARS])
    note = f"<p><i>first {SHOWN_CHARS} of {len(text)} chars shown</i></p>" if cut else ""
    heading = html.escape(section.heading or "(before the first heading)")
    return (f"<p><b>{html.escape(section.doc_id)}</b> · {heading} · "
            f"<span class='kind'>{section.kind}</span></p>"
            f"<pre style='white-space:pre-wrap;max-height:24em;overflow:auto;"
            f"background:#f8fafc;padding:8px;border:1px solid #cbd5e1'>{shown}</pre>{note}")


def problems_html(problems: list[str], stored: str = "") -> str:
    """The checks' verdict; ``stored``: the source text a pasted answer renders from, shown
    when it differs from what was pasted."""
    if not problems:
        note = (f" · stored as the page's source text: <code>{html.escape(stored)}</code>"
                if stored else "")
        return f"<span style='color:#15803d'>ready to add</span>{note}"
    items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
    return f"<ul style='color:#b91c1c;margin:0'>{items}</ul>"


class QuestionPanel:
    """Widgets over a QuestionBook: show ``widget`` (or the panel itself) in a notebook."""

    def __init__(self, book: QuestionBook):
        import ipywidgets as widgets

        self.book = book
        self.skipped: set[tuple[str, int]] = set()
        self.section = book.next_section()
        self.source = widgets.HTML()
        self.question = widgets.Textarea(placeholder="A question a user of these docs would "
                                         "ask, answered in this section",
                                         layout=widgets.Layout(width="100%", height="4em"))
        self.answer = widgets.Textarea(placeholder="Paste the exact text that answers it "
                                       "(20-300 chars, found once in the document)",
                                       layout=widgets.Layout(width="100%", height="5em"))
        self.status = widgets.HTML()
        self.progress = widgets.HTML()
        self.add_button = widgets.Button(description="Add question", button_style="success")
        self.skip_button = widgets.Button(description="Another section")
        parts = {"source": self.source, "question": self.question, "answer": self.answer,
                 "status": self.status, "progress": self.progress, "add": self.add_button,
                 "skip": self.skip_button}
        for name, part in parts.items():
            part.add_class(f"{PANEL_CLASS}-{name}")
        self.question.observe(self._changed, names="value")
        self.answer.observe(self._changed, names="value")
        self.add_button.on_click(lambda _button: self.add())
        self.skip_button.on_click(lambda _button: self.skip())
        self.widget = widgets.VBox([self.progress, self.source, self.question, self.answer,
                                    self.status,
                                    widgets.HBox([self.add_button, self.skip_button])])
        self.widget.add_class(PANEL_CLASS)
        self._show()

    def _show(self) -> None:
        doc = self.book.docs.get(self.section.doc_id) if self.section else None
        self.source.value = section_html(self.section, doc)
        self.progress.value = f"<b>{html.escape(str(self.book.progress()))}</b>"
        self._changed()

    def problems(self) -> list[str]:
        """The book's checks of what is typed (nothing typed yet: what is missing)."""
        if self.section is None:
            return ["no section to ask about"]
        if not self.question.value.strip() or not self.answer.value.strip():
            return ["type a question and paste its answer"]
        return self.book.check(self.question.value, self.answer.value, self.section)

    def _changed(self, _change=None) -> None:
        problems = self.problems()
        stored = ""
        if not problems and self.section is not None:
            found = self.book.source_answer(self.answer.value, self.section)
            stored = found if found != self.answer.value else ""
        self.status.value = problems_html(problems, stored)

    def add(self) -> bool:
        """Add what is typed when it passes every check, then show the next section."""
        if self.section is None:
            return False
        try:
            self.book.add(self.question.value, self.answer.value, self.section)
        except QueryValidationError as err:
            self.status.value = problems_html(err.problems)
            return False
        self.question.value = self.answer.value = ""
        self.section = self.book.next_section(frozenset(self.skipped))
        self._show()
        return True

    def skip(self) -> None:
        """Leave this section: another is drawn."""
        if self.section is not None:
            self.skipped.add((self.section.doc_id, self.section.start))
        self.section = self.book.next_section(frozenset(self.skipped))
        self._show()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
