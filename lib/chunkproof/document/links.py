"""A chunk's link into the rendered page: the fields of a page's URL made from its document id,
and a ``url_template`` checked and rendered with them and a heading anchor."""

from __future__ import annotations

import string
from pathlib import PurePosixPath

URL_FIELDS = {
    "path": "the document id, its path under the corpus root (`guide/install.md`)",
    "path_without_ext": "that path without its extension (`guide/install`)",
    "route": "the page's directory-style URL path (`guide/install/`; `guide/` for "
             "`guide/index.md` or `guide/README.md`; empty for the root index)",
    "dir": "the folder of the page (`guide`; empty at the root)",
    "stem": "the file name without its extension (`install`)",
    "anchor": "the anchor of the chunk's section heading (empty before any heading: the "
              "`#` before it is then dropped)",
}
"""The fields a ``url_template`` may hold, and what each is (docs/anchors.md)."""
INDEX_PAGES = ("index", "readme")
"""File stems a site generator serves as their folder's page (compared case-folded)."""


def check_url_template(template: str) -> None:
    """A url template renders with ``URL_FIELDS`` alone: ValueError naming an unknown field, a
    conversion or format spec, or an unmatched brace (literal braces are ``{{`` and ``}}``)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(f"{err} (write literal braces as {{{{ and }}}})") from None
    known = ", ".join(f"{{{name}}}" for name in URL_FIELDS)
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in URL_FIELDS:
            raise ValueError(f"unknown field {{{field}}}; the fields are {known}")
        if spec or conversion:
            raise ValueError(f"{{{field}}} takes no conversion or format spec; write the "
                             f"fields bare: {known}")


def page_fields(doc_id: str) -> dict[str, str]:
    """The URL fields of the page made from document ``doc_id``, all but ``anchor``."""
    path = PurePosixPath(doc_id)
    folder = "" if str(path.parent) == "." else str(path.parent)
    without_ext = str(path.with_suffix(""))
    if path.stem.casefold() in INDEX_PAGES:
        route = f"{folder}/" if folder else ""
    else:
        route = f"{without_ext}/"
    return {"path": doc_id, "path_without_ext": without_ext, "route": route, "dir": folder,
            "stem": path.stem}


def render_href(template: str, fields: dict[str, str], anchor: str) -> str:
    """``template`` rendered with a page's ``fields`` and ``anchor``; with no anchor, a ``#``
    the template leaves at the end is dropped (the link is to the page itself)."""
    href = template.format(**fields, anchor=anchor)
    return href if anchor or not href.endswith("#") else href[:-1]
