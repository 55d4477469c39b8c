"""Which elements hold a link or a date is read once per page (`_holders`); the answer
must be the one a query per element gives: the element itself or any of its descendants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from catlas_assets.domain.extract.html import _holders

_PIECES = [
    "<li>", "</li>", "<ul>", "</ul>", "<article>", "</article>", '<a href="/x">', "<a>", "</a>",
    '<A HREF="/y">', "<time>", "</time>", "<TIME>", "<template>", "</template>", "<svg>",
    "</svg>", '<div role="listitem">', '<a role="listitem" href="#">', "</div>", "<p>", "text",
    "<table><tr><td>", "</td></tr></table>", "<!-- <a href=z> -->", "<noscript>", "</noscript>",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_holders_are_the_elements_a_query_finds_a_match_in(body: str) -> None:
    tree = LexborHTMLParser(f"<html><body>{body}</body></html>")
    for selector in ("a[href]", "time"):
        held = _holders(tree, selector)
        for node in tree.css("*"):
            assert (node.mem_id in held) == (node.css_first(selector) is not None), selector
