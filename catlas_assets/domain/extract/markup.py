"""The one way HTML is parsed: lexbor, after a linear pass that bounds the nesting depth.

An HTML tree builder checks the stack of open elements for every tag, so a page of
100,000 nested `<div>`s costs time quadratic in its depth (minutes). Real pages nest fewer
than a hundred elements deep; past `MAX_NESTING` open elements the extra start tags (and
their end tags) are dropped before parsing, so such a page keeps its text and costs what
its size costs. Elements whose end tag is optional or absent (`p`, `li`, `td`, `img`, ...)
are not counted: they do not stack up in the tree either.
"""

from __future__ import annotations

import re
import threading

from selectolax.lexbor import LexborHTMLParser, LexborNode

MAX_NESTING = 512
# A tag: "/" if closing, its name, "/" if self-closing (the attributes' last character,
# seen by a look behind: the same match as a lazy run up to "/>" or ">", without trying
# that end at every character).
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]{0,40})\b[^>]{0,4096}/?(?:(?<=(/)))?>")
# Void elements and those whose end tag may be left out (WHATWG 13.1.2.4): never counted.
_UNCOUNTED = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option",
        "optgroup", "thead", "tbody", "tfoot", "colgroup", "caption", "rb", "rt", "rtc", "rp",
        "html", "head", "body",
    }
)  # fmt: skip
# Raw-text elements: what is inside is not markup.
_RAW = frozenset({"script", "style", "textarea", "title", "xmp", "noembed", "noframes"})


def bounded_markup(html: str, max_nesting: int = MAX_NESTING) -> str:
    """`html` with start tags deeper than `max_nesting` counted elements left out (and as
    many of their end tags), in one pass; unchanged when the page is never that deep."""
    # Each start tag is a "<" not followed by "/": with fewer of those than the bound, no
    # element gets that deep (most pages, for the cost of two counts).
    if html.count("<") - html.count("</") < max_nesting:
        return html
    if not _too_deep(html, max_nesting):
        return html
    depth = 0
    dropped = 0  # start tags left out and still to be matched by an end tag
    cut: list[tuple[int, int]] = []
    raw_until: str | None = None
    for match in _TAG.finditer(html):
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if raw_until is not None:
            if closing and name == raw_until:
                raw_until = None
            continue
        if name in _UNCOUNTED or self_closing:
            continue
        if closing:
            if dropped:
                dropped -= 1
                cut.append(match.span())
            else:
                depth = max(0, depth - 1)
            continue
        if name in _RAW:
            raw_until = name
        if depth >= max_nesting:
            dropped += 1
            cut.append(match.span())
        else:
            depth += 1
    if not cut:
        return html
    pieces, start = [], 0
    for begin, end in cut:
        pieces.append(html[start:begin])
        start = end
    pieces.append(html[start:])
    return " ".join(pieces)


def _too_deep(html: str, max_nesting: int) -> bool:
    """Whether `bounded_markup` would leave a start tag out: the same walk over the tags,
    read as tuples (no match objects, no spans), which almost every page passes."""
    depth = 0
    raw_until: str | None = None
    for closing, name, self_closing in _TAG.findall(html):
        if raw_until is not None:
            if closing and name.lower() == raw_until:
                raw_until = None
            continue
        if self_closing or name in _UNCOUNTED:
            continue  # most names come in lower case: no copy made to find them
        name = name.lower()
        if name in _UNCOUNTED:
            continue
        if closing:
            # Nothing has been dropped yet: every end tag closes a counted element.
            if depth:
                depth -= 1
            continue
        if name in _RAW:
            raw_until = name
        if depth >= max_nesting:
            return True
        depth += 1
    return False


class _LastParse(threading.local):
    html: str | None = None
    tree: LexborHTMLParser | None = None


_last = _LastParse()


def parse_html(html: str) -> LexborHTMLParser:
    """The tree of `html`. Normalizing a page and extracting from it both read its tree:
    the last one parsed in this thread is kept, so a page is parsed once. The tree is
    shared: read it, never change it."""
    if _last.tree is None or _last.html != html:
        _last.tree = LexborHTMLParser(bounded_markup(html))
        _last.html = html
    return _last.tree


def clean_text(text: str) -> str:
    """Each run of whitespace one space, the ends trimmed (`\\s+` to " ", then `strip`)."""
    # Printable text holds no whitespace but " ": without a double or an outer space it is
    # clean as it is, and most text is. Else `str.split` splits where `\s+` would match.
    if "  " not in text and text.isprintable() and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def node_text(node: LexborNode) -> str:
    """The text of `node` and its descendants, pieces apart by a space, cleaned.

    Pieces come trimmed and whitespace-only ones are left out: the words are those of the
    pieces joined as they are, so is the answer, and the text of indented markup has
    nothing left to collapse."""
    return clean_text(node.text(deep=True, separator=" ", strip=True, skip_empty=True))
