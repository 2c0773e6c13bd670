"""A chunk's link into the rendered page: the fields of a page's URL made from its document id,
and a ``url_template`` checked and rendered with them and a heading anchor."""

from __future__ import annotations

import re
import string
from pathlib import PurePosixPath
from urllib.parse import quote

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
LINK_SCHEMES = ("http", "https")
"""The schemes an href may have; else it is a relative path (``guide/install/``,
``/guide/``, ``//host/guide/``) or a fragment (``#install``), with no scheme at all."""
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_IGNORED = re.compile(r"[\t\n\r]")
_SAMPLE_PAGES = ("guide/install.md", "index.md")
"""Pages a template is rendered for when it is checked: one in a folder, the root index (its
route and folder empty)."""


def link_scheme(href: str) -> str:
    """The scheme a browser reads in ``href``, lowercased ("" for a relative path or a
    fragment): as the URL standard parses it, with the blanks and control chars around it
    dropped and tabs and line breaks inside it ignored (``java\tscript:`` is ``javascript``)."""
    cleaned = _IGNORED.sub("", href).strip("".join(map(chr, range(33))))
    found = _SCHEME.match(cleaned)
    return found.group()[:-1].lower() if found else ""


def safe_href(href: str) -> str:
    """``href`` when a browser reads it as an http or https link, a relative path or a
    fragment (``LINK_SCHEMES``); "" (no link) for any other scheme (``javascript:``,
    ``data:``, ``file:``)."""
    return href if link_scheme(href) in ("", *LINK_SCHEMES) else ""


def check_url_template(template: str) -> None:
    """A url template renders with ``URL_FIELDS`` alone, into an http or https link, a relative
    path or a fragment: ValueError naming an unknown field, a conversion or format spec, an
    unmatched brace (literal braces are ``{{`` and ``}}``), or the scheme it makes."""
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
    for page in _SAMPLE_PAGES:
        for anchor in ("install", ""):
            scheme = link_scheme(template.format(**page_fields(page), anchor=anchor))
            if scheme not in ("", *LINK_SCHEMES):
                raise ValueError(f"makes {scheme}: links; a url_template makes http or https "
                                 "links, relative paths or fragments only")


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
    """``template`` rendered with a page's ``fields`` (percent-encoded, ``/`` kept: a page
    named ``javascript:x.md`` or ``a#b.md`` stays a path) and ``anchor``; with no anchor, a
    ``#`` the template leaves at the end is dropped (the link is to the page itself). ""
    when the result is no link ``safe_href`` lets through."""
    href = template.format(**{name: quote(value, safe="/") for name, value in fields.items()},
                           anchor=anchor)
    return safe_href(href if anchor or not href.endswith("#") else href[:-1])
