"""A page is parsed once: normalizing and extracting it read the same tree, and a new
page never gets the tree of the last one."""

from __future__ import annotations

import re
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.extract.markup import (
    _RAW,
    _TAG,
    _UNCOUNTED,
    bounded_markup,
    clean_text,
    node_text,
    parse_html,
)

PAGE = "<html><body><h1>Careers</h1><p>Join us</p></body></html>"


def test_the_same_page_is_parsed_once() -> None:
    assert parse_html(PAGE) is parse_html("".join(PAGE))


def test_another_page_gets_its_own_tree() -> None:
    first = parse_html(PAGE)
    other = parse_html(PAGE.replace("Careers", "Pricing"))
    assert other is not first
    assert other.css_first("h1").text() == "Pricing"
    assert parse_html(PAGE).css_first("h1").text() == "Careers"


def test_each_thread_keeps_its_own_tree() -> None:
    mine = parse_html(PAGE)
    seen: list[str] = []

    def other_thread() -> None:
        seen.append(parse_html(PAGE.replace("Careers", "Docs")).css_first("h1").text())

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen == ["Docs"]
    assert parse_html(PAGE) is mine


def _reference_bounded_markup(html: str, max_nesting: int) -> str:
    # The bound as one walk that cuts as it goes (no pre-check of the depth).
    depth, dropped, raw_until = 0, 0, None
    cut: list[tuple[int, int]] = []
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


TAGS = ["<div>", "</div>", "<p>", "</p>", "<span class='x'>", "</span>", "<br/>", "<script>",
        "</script>", "<STYLE>", "</style>", "<Div>", "</DIV>", "text", "<li>", "<b>", "</b>"]  # fmt: skip


# The tag pattern as first written: a lazy run of attributes up to "/>" or ">".
_LAZY_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]{0,40})\b[^>]{0,4096}?(/?)>")
_TAG_PIECES = ["<", ">", "/", "/>", "a", "B", "-", "1", " ", "=", '"', "<div", "</div", "<br/",
               "x" * 50, "_", "<p-", "é"]  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_TAG_PIECES), max_size=30).map("".join))
def test_the_tag_pattern_finds_what_the_lazy_pattern_finds(html: str) -> None:
    assert _TAG.findall(html) == _LAZY_TAG.findall(html)
    assert [m.span() for m in _TAG.finditer(html)] == [m.span() for m in _LAZY_TAG.finditer(html)]


def test_the_tag_pattern_bounds_attributes_as_the_lazy_pattern() -> None:
    for length in (4094, 4095, 4096, 4097, 4098):
        for end in ("/>", ">", "//>", "/ >"):
            for html in (f"<a{' ' * length}{end}", f"<ab-{'c' * 45}{' ' * length}{end}<b>"):
                assert _TAG.findall(html) == _LAZY_TAG.findall(html), (length, end)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TAGS), max_size=40), st.integers(min_value=0, max_value=6))
def test_the_depth_bound_cuts_what_the_plain_walk_cuts(tags: list[str], bound: int) -> None:
    html = "".join(tags)
    assert bounded_markup(html, bound) == _reference_bounded_markup(html, bound)


_SPACES = re.compile(r"\s+")
_WHITE = [" ", "  ", "\n", "\t", "\r\n  ", "\xa0", "\u2003", "\u3000", "\x1c", "\x0b", "\x85"]
_WORDS = ["a", "Bé", "\x00", "\x7f", "x\u200by", "\ud800", "&nbsp;", "&#9;"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_WHITE + _WORDS), max_size=12).map("".join))
def test_clean_text_is_the_whitespace_regex_and_strip(text: str) -> None:
    assert clean_text(text) == _SPACES.sub(" ", text).strip()


_MARKUP = ["<p>", "</p>", "<b>", "</b>", "<div>", "</div>", "<br>", "<!-- c -->",
           "<script>x</script>"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_WHITE + _WORDS + _MARKUP), max_size=16).map("".join))
def test_node_text_is_the_text_with_its_whitespace_collapsed(body: str) -> None:
    tree = parse_html(f"<html><body><div>{body}</div></body></html>")
    for node in tree.css("*"):
        expected = _SPACES.sub(" ", node.text(deep=True, separator=" ")).strip()
        assert node_text(node) == expected
